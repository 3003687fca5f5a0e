// A party from the inside: the share link, who is in and who is ready, the
// host's Start, the chat, and once started the game. useRoom joins (or
// creates) it and leaves it on unmount; RoomProvider hands it down.
import { RoomProvider, useRoom, useRoomContext, type RoomTarget } from '@hostrelay/react';
import { shareLink } from '@hostrelay/sdk';
import { useState, type FormEvent, type ReactNode } from 'react';
import { DotGame } from './DotGame';
import { explain } from './explain';

export function Party({ target, onLeave }: { target: RoomTarget; onLeave: () => void }): ReactNode {
  const room = useRoom(target);
  if (room.connection === 'idle' || room.connection === 'joining') return <p className="panel">Joining…</p>;
  if (room.connection === 'closed') {
    return (
      <div className="panel">
        <p role="alert">{explain(room.error, location.origin, room.closedReason)}</p>
        <button type="button" onClick={onLeave}>
          Back to the parties
        </button>
      </div>
    );
  }
  return (
    <RoomProvider value={room}>
      <ShareLink code={room.room!.code} />
      <div className="party">
        <section className="stage">{room.started ? <DotGame /> : <ReadyUp />}</section>
        <Chat />
      </div>
      <button type="button" className="leave" onClick={onLeave}>
        Leave the party
      </button>
    </RoomProvider>
  );
}

function ShareLink({ code }: { code: string }): ReactNode {
  const link = shareLink(code);
  return (
    <div className="share">
      <label htmlFor="share-link">Send this link to your friends</label>
      <div>
        <input id="share-link" readOnly value={link} />
        <button type="button" onClick={() => void navigator.clipboard?.writeText(link)}>
          Copy
        </button>
      </div>
    </div>
  );
}

/** Who is in, who is ready; a ready toggle for players, Start for the host once every other player is ready. */
export function ReadyUp(): ReactNode {
  const { players, me, host, isHost, session, connection } = useRoomContext();
  const others = players.filter((p) => p.id !== host?.id);
  const canStart = others.length > 0 && others.every((p) => p.ready);
  return (
    <div className="ready-up">
      <ul className="players">
        {players.map((p) => (
          <li key={p.id} data-ready={p.id === host?.id || p.ready}>
            <span className="name">
              {p.name}
              {p.id === me?.id && ' (you)'}
            </span>
            <span className="badge">{p.id === host?.id ? 'host' : p.ready ? 'ready' : 'not ready'}</span>
          </li>
        ))}
      </ul>
      {isHost ? (
        <button type="button" className="primary" disabled={!canStart} onClick={() => void session?.startGame()}>
          {canStart ? 'Start' : 'Waiting for everyone to be ready…'}
        </button>
      ) : (
        <button type="button" className="primary" disabled={connection !== 'open'} onClick={() => void session?.setReady(!me?.ready)}>
          {me?.ready ? 'Not ready' : 'I’m ready'}
        </button>
      )}
    </div>
  );
}

/** The room's chat: its last lines, and a line to send. */
export function Chat(): ReactNode {
  const { chat, players, session } = useRoomContext();
  const [text, setText] = useState('');
  const send = (e: FormEvent): void => {
    e.preventDefault();
    if (text.trim() === '') return;
    void session?.sendChat(text);
    setText('');
  };
  const nameOf = (id: string): string => players.find((p) => p.id === id)?.name ?? 'someone who left';
  return (
    <aside className="chat">
      <ol aria-label="Chat">
        {chat.map((m, i) => (
          <li key={i}>
            <b>{nameOf(m.from)}</b> {m.text}
          </li>
        ))}
      </ol>
      <form onSubmit={send}>
        <input aria-label="Message" maxLength={200} value={text} onChange={(e) => setText(e.target.value)} placeholder="Say something" />
        <button type="submit">Send</button>
      </form>
    </aside>
  );
}
