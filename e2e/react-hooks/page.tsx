// The test page of e2e/react-hooks.test.ts: components built on
// @hostrelay/react, rendered and driven with React Testing Library in the
// page (a development build of React, so StrictMode runs every effect
// twice). The test calls window.hooks from Playwright.
import { act, cleanup, fireEvent, render, waitFor, within, type RenderResult } from '@testing-library/react';
import {
  LobbyProvider,
  RoomProvider,
  useLobby,
  useLobbyContext,
  usePeerMessages,
  useRoom,
  useRoomContext,
  useRoomDirectory,
  type RoomTarget,
} from '@hostrelay/react';
import { StrictMode, useEffect, useState, version, type ReactNode } from 'react';

export interface PlayerProps {
  url: string;
  name: string;
  /** A room to join (a code) or create (options); absent: none. */
  target?: RoomTarget | null;
  /** Show the room list. */
  directory?: boolean;
}

/** What a mounted player shows, as the test reads it. */
export interface Shown {
  lobby: string;
  session: string;
  room: string;
  code: string;
  players: string[];
  host: string;
  chat: string[];
  messages: string[];
  rooms: string[];
  error: string;
  /** The most players the room component has shown at once. */
  peak: string;
}

declare global {
  interface Window {
    hooks: typeof hooks;
    /** Every WebSocket the page opened (the init script counts them). */
    sockets: string[];
    /** Effects run by the Probe: 2 under StrictMode in development, 1 otherwise. */
    probeEffects: number;
    /** The React the page was built with. */
    reactVersion: string;
  }
}

function Probe(): null {
  useEffect(() => {
    window.probeEffects = (window.probeEffects ?? 0) + 1;
  }, []);
  return null;
}

function Directory(): ReactNode {
  const list = useRoomDirectory();
  return (
    <ul data-testid="rooms" data-status={list.status}>
      {list.rooms.map((r) => (
        <li key={r.code}>{r.code}</li>
      ))}
    </ul>
  );
}

function Messages(): ReactNode {
  const [lines, setLines] = useState<string[]>([]);
  const room = useRoomContext();
  usePeerMessages('events', (peerId, data) => {
    const from = room.players.find((p) => p.id === peerId)?.name ?? peerId;
    setLines((l) => [...l, `${from}: ${typeof data === 'string' ? data : `${data.byteLength} bytes`}`]);
  });
  return (
    <ul data-testid="messages">
      {lines.map((l, i) => (
        <li key={i}>{l}</li>
      ))}
    </ul>
  );
}

function Room({ target }: { target: RoomTarget }): ReactNode {
  const room = useRoom(target);
  const [text, setText] = useState('');
  const [peak, setPeak] = useState(0);
  useEffect(() => setPeak((p) => Math.max(p, room.players.length)), [room.players]);
  return (
    <RoomProvider value={room}>
      <p data-testid="room">{room.connection}</p>
      <p data-testid="code">{room.room?.code ?? ''}</p>
      <p data-testid="host">{room.host?.name ?? ''}</p>
      <p data-testid="error">{room.error?.message ?? ''}</p>
      <p data-testid="peak">{peak}</p>
      <ul data-testid="players">
        {room.players.map((p) => (
          <li key={p.id}>
            {p.name}
            {p.ready ? ' ready' : ''}
            {p.id === room.me?.id ? ' (you)' : ''}
          </li>
        ))}
      </ul>
      <ul data-testid="chat">
        {room.chat.map((m, i) => (
          <li key={i}>{`${room.players.find((p) => p.id === m.from)?.name ?? m.from}: ${m.text}`}</li>
        ))}
      </ul>
      <button type="button" onClick={() => void room.session?.setReady(!(room.me?.ready ?? false))}>
        Ready
      </button>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void room.session?.sendChat(text);
          setText('');
        }}
      >
        <input aria-label="Chat" value={text} onChange={(e) => setText(e.target.value)} />
      </form>
      <button type="button" onClick={() => room.session?.broadcast(`ping from ${room.me?.name ?? '?'}`, 'events')}>
        Ping
      </button>
      <Messages />
    </RoomProvider>
  );
}

function Player(props: PlayerProps): ReactNode {
  const lobby = useLobby(props.url, props.name);
  return (
    <LobbyProvider value={lobby}>
      <Probe />
      <p data-testid="lobby">{lobby.status}</p>
      <Session />
      {props.directory && <Directory />}
      {props.target != null && <Room target={props.target} />}
    </LobbyProvider>
  );
}

function Session(): ReactNode {
  return <p data-testid="session">{useLobbyContext().client?.session ?? ''}</p>;
}

const mounted = new Map<string, { result: RenderResult; strict: boolean }>();

function tree(props: PlayerProps, strict: boolean): ReactNode {
  return strict ? (
    <StrictMode>
      <Player {...props} />
    </StrictMode>
  ) : (
    <Player {...props} />
  );
}

function view(id: string): ReturnType<typeof within> {
  const m = mounted.get(id);
  if (!m) throw new Error(`no player ${id}`);
  return within(m.result.container);
}

const texts = (el: HTMLElement | null): string[] => [...(el?.querySelectorAll('li') ?? [])].map((li) => li.textContent ?? '');

const hooks = {
  /** Renders a player (in StrictMode unless `strict` is false). */
  mount(id: string, props: PlayerProps, strict = true): void {
    const result = render(tree(props, strict));
    mounted.set(id, { result, strict });
  },
  rerender(id: string, props: PlayerProps): void {
    const m = mounted.get(id)!;
    m.result.rerender(tree(props, m.strict));
  },
  unmount(id: string): void {
    mounted.get(id)?.result.unmount();
    mounted.delete(id);
  },
  /**
   * Mounts, and unmounts the whole tree the moment the room shows
   * 'joining' (its lobby is open and the join is going out).
   */
  unmountWhenJoining(id: string, props: PlayerProps): Promise<void> {
    hooks.mount(id, props);
    const container = mounted.get(id)!.result.container;
    return new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (container.querySelector('[data-testid="room"]')?.textContent !== 'joining') return;
        observer.disconnect();
        hooks.unmount(id);
        resolve();
      });
      observer.observe(container, { subtree: true, childList: true, characterData: true });
    });
  },
  shown(id: string): Shown {
    const v = view(id);
    const text = (testId: string): string => v.queryByTestId(testId)?.textContent ?? '';
    return {
      lobby: text('lobby'),
      session: text('session'),
      room: text('room'),
      code: text('code'),
      host: text('host'),
      error: text('error'),
      peak: text('peak'),
      players: texts(v.queryByTestId('players')),
      chat: texts(v.queryByTestId('chat')),
      messages: texts(v.queryByTestId('messages')),
      rooms: texts(v.queryByTestId('rooms')),
    };
  },
  /** Waits (RTL's waitFor) until the player shows `testId` with `text`. */
  async waitFor(id: string, testId: string, text: string, timeout = 30_000): Promise<void> {
    await waitFor(() => {
      const got = view(id).getByTestId(testId).textContent;
      if (got !== text) throw new Error(`${id}: ${testId} shows "${got}", not "${text}"`);
    }, { timeout });
  },
  /** Waits until the list `testId` has an item with `text`. */
  async waitForItem(id: string, testId: string, text: string, timeout = 30_000): Promise<void> {
    await waitFor(() => {
      const items = texts(view(id).getByTestId(testId));
      if (!items.includes(text)) throw new Error(`${id}: ${testId} has ${JSON.stringify(items)}, not "${text}"`);
    }, { timeout });
  },
  async ready(id: string): Promise<void> {
    await act(async () => {
      fireEvent.click(view(id).getByText('Ready'));
    });
  },
  async chat(id: string, text: string): Promise<void> {
    const input = view(id).getByLabelText('Chat');
    await act(async () => {
      fireEvent.change(input, { target: { value: text } });
      fireEvent.submit(input.closest('form')!);
    });
  },
  async ping(id: string): Promise<void> {
    await act(async () => {
      fireEvent.click(view(id).getByText('Ping'));
    });
  },
  cleanup(): void {
    cleanup();
    mounted.clear();
  },
};

window.hooks = hooks;
window.reactVersion = version;
