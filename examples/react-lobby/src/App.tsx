// The page: a name, then the open parties (or straight into the party of a
// share link), then the party itself. One lobby connection for the tab,
// from useLobby, handed down with LobbyProvider.
import { LobbyProvider, useLobby, useRoomDirectory, type RoomTarget } from '@hostrelay/react';
import { lobbyUrl } from '@hostrelay/sdk';
import { useState, type FormEvent, type ReactNode } from 'react';
import { explain } from './explain';
import { Party } from './Party';
import { MODE } from './DotGame';

const params = new URLSearchParams(location.search);
/** The party to join, from a share link (?room=CODE). */
const linked = params.get('room');
/** The hostrelay server: this page's origin unless ?relay= or VITE_HOSTRELAY_URL names another. */
const relay = params.get('relay') || import.meta.env.VITE_HOSTRELAY_URL || location.origin;

export function App(): ReactNode {
  const [name, setName] = useState<string | null>(null);
  const lobby = useLobby(name === null ? null : lobbyUrl(relay), name ?? '', { resume: true });
  const [target, setTarget] = useState<RoomTarget | null>(linked);

  let body: ReactNode;
  if (name === null) body = <NameForm joining={linked !== null} onName={setName} />;
  else if (lobby.status === 'closed') {
    body = (
      <div className="panel">
        <p role="alert">{explain(lobby.error, relay)}</p>
        <button type="button" onClick={() => setName(null)}>
          Try again
        </button>
      </div>
    );
  } else if (lobby.status === 'connecting') body = <p className="panel">Connecting…</p>;
  else if (target === null) {
    body = <Parties onCreate={() => setTarget({ name: `${name}'s party`, maxPlayers: 8, public: true, mode: MODE })} onJoin={setTarget} />;
  } else body = <Party target={target} onLeave={() => setTarget(null)} />;

  return (
    <LobbyProvider value={lobby}>
      <main>
        <header>
          <h1>Catch the dot</h1>
          <span>a party game on hostrelay, in React</span>
          {lobby.status === 'reconnecting' && <span className="warn">reconnecting…</span>}
        </header>
        {body}
      </main>
    </LobbyProvider>
  );
}

function NameForm({ joining, onName }: { joining: boolean; onName: (name: string) => void }): ReactNode {
  const [text, setText] = useState(() => localStorage.getItem('dots.name') ?? '');
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    const name = text.trim();
    if (name === '') return;
    localStorage.setItem('dots.name', name);
    onName(name);
  };
  return (
    <form className="panel" onSubmit={submit}>
      <p>Everyone sees everyone's pointer. Click the dot before the others do: first to 10 wins the round.</p>
      <label htmlFor="name">Your name</label>
      <input id="name" maxLength={24} autoComplete="nickname" required value={text} onChange={(e) => setText(e.target.value)} />
      <button type="submit">{joining ? 'Join the party' : 'Continue'}</button>
    </form>
  );
}

function Parties({ onCreate, onJoin }: { onCreate: () => void; onJoin: (code: string) => void }): ReactNode {
  const list = useRoomDirectory();
  const parties = list.rooms.filter((r) => r.mode === MODE);
  return (
    <div className="panel">
      <button type="button" className="primary" onClick={onCreate}>
        Create a party
      </button>
      <h2>Open parties</h2>
      {list.status === 'loading' && <p>Looking…</p>}
      {list.status === 'open' && parties.length === 0 && <p className="quiet">None yet: create one and send the link.</p>}
      <ul className="parties">
        {parties.map((r) => (
          <li key={r.code}>
            <span>{r.name}</span>
            <span className="quiet">
              {r.players}/{r.maxPlayers}
            </span>
            <button type="button" onClick={() => onJoin(r.code)}>
              Join
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
