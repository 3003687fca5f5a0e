// Server rendering: importing the package touches no browser global, and a
// server render shows the first state of each hook without opening
// anything (no effect runs on a server).
import type { Buttons } from '@hostrelay/netcode';
import { Schema, buttonsCodec, type NetGame } from '@hostrelay/netcode';
import type { TransportFactory } from '@hostrelay/sdk';
import { createElement as h, type ReactNode } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  LobbyProvider,
  RoomProvider,
  useLobby,
  useNetClient,
  useNetHost,
  usePeerMessages,
  useRoom,
  useRoomDirectory,
} from './index.js';

const schema = Schema.define({ x: { precision: 1 } });
const game: NetGame<Buttons<'fire'>, 'x'> = { schema, input: buttonsCodec(['fire'] as const) };

describe('@hostrelay/react on a server', () => {
  it('imports with no window or document', () => {
    expect(typeof window).toBe('undefined');
    expect(typeof document).toBe('undefined');
  });

  it('renders each hook’s first state and dials nothing', () => {
    let dials = 0;
    const transport: TransportFactory = () => {
      dials++;
      throw new Error('a server render must not dial');
    };
    function Room(): ReactNode {
      const room = useRoom('ABCDEFG');
      const list = useRoomDirectory();
      usePeerMessages('events', () => undefined);
      const host = useNetHost({ game, step: () => undefined, capture: () => [] }, room.session);
      const client = useNetClient({ game, readInput: () => ({ fire: false }) }, room.session);
      return h(RoomProvider, { value: room }, `room ${room.connection}, list ${list.status}, net ${host === null && client === null ? 'none' : 'some'}`);
    }
    function App(): ReactNode {
      const lobby = useLobby('ws://127.0.0.1:9/ws', 'Ada', { transport });
      return h(LobbyProvider, { value: lobby }, `lobby ${lobby.status}; `, h(Room));
    }
    function Idle(): ReactNode {
      return `lobby ${useLobby(null, 'Ada').status}`;
    }
    // No client yet: the room and the list wait for one.
    expect(renderToString(h(App))).toBe('lobby connecting; <!-- -->room idle, list idle, net none');
    expect(renderToString(h(Idle))).toBe('lobby idle');
    expect(dials).toBe(0);
  });
});
