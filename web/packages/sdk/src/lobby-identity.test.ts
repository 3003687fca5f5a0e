import { describe, expect, it } from 'vitest';
import type { Frame, Hello } from '@hostrelay/protocol';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import type { ReconnectPolicy } from './reconnect.js';

// Identity tokens: the hello carries the page's token, a resume carries a
// fresh one from getToken, and a refused token ends the session.

const now: ReconnectPolicy = { nextRetryDelayMs: (n) => (n <= 5 ? 0 : null) };
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

function server(onResume: (s: FakeServer, hello: Frame) => void): [FakeServer, Frame[]] {
  const s = FakeServer.welcoming();
  const hellos: Frame[] = [];
  s.onFrame = (f) => {
    if (f.t !== 'hello') return s.send('ok', f.id, {});
    hellos.push(f);
    if (f.b?.resume) return onResume(s, f);
    s.send('welcome', f.id, { v: 1, session: 's_test', maxFrame: 16384, resume: 'r1', grace: 20 });
  };
  return [s, hellos];
}

describe('LobbyClient identity', () => {
  it('sends the token in hello', async () => {
    const [s, hellos] = server(() => {});
    await LobbyClient.connect('ws://x/ws', 'Ada', { transport: s.factory, token: 'jwt-1' });
    expect(hellos[0]?.b).toMatchObject({ name: 'Ada', token: 'jwt-1' });
  });

  it('fetches the first token with getToken, and a fresh one for each resume', async () => {
    const [s, hellos] = server((srv, hello) =>
      srv.send('welcome', hello.id, { v: 1, session: 's_test', resume: 'r2', grace: 20, resumed: true }),
    );
    let n = 0;
    const getToken = (): Promise<string> => Promise.resolve(`jwt-${++n}`);
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: s.factory, getToken, resume: true, resumePolicy: now });
    s.drop(1006);
    await tick();
    expect(client.connected).toBe(true);
    expect(hellos.map((h) => (h.b as Hello).token)).toEqual(['jwt-1', 'jwt-2']);
  });

  it('resumes without a token when the page gave no getToken (the server keeps the identity)', async () => {
    const [s, hellos] = server((srv, hello) =>
      srv.send('welcome', hello.id, { v: 1, session: 's_test', resume: 'r2', grace: 20, resumed: true }),
    );
    await LobbyClient.connect('ws://x/ws', 'Ada', { transport: s.factory, token: 'jwt-1', resume: true, resumePolicy: now });
    s.drop(1006);
    await tick();
    expect(hellos.map((h) => (h.b as Hello).token)).toEqual(['jwt-1', '']);
  });

  it('gives up a resume whose token is refused', async () => {
    const [s] = server((srv, hello) => srv.send('error', hello.id, { code: 'auth_invalid', msg: 'expired: the token has expired' }));
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', {
      transport: s.factory,
      getToken: () => Promise.resolve('jwt'),
      resume: true,
      resumePolicy: now,
    });
    const closed: string[] = [];
    client.on('close', ({ reason }) => closed.push(reason));
    s.drop(1006);
    await tick();
    expect(closed).toEqual(['expired: the token has expired']);
  });

  it('rejects connect with auth_required', async () => {
    const s = FakeServer.welcoming();
    s.onFrame = (f) => s.send('error', f.id, { code: 'auth_required', msg: 'missing: this server needs a token' });
    await expect(LobbyClient.connect('ws://x/ws', 'Ada', { transport: s.factory })).rejects.toMatchObject({ code: 'auth_required' });
  });
});

describe('LobbyClient members-only rooms', () => {
  it('asks for one in createRoom', async () => {
    const [s] = server(() => {});
    const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: s.factory, token: 'jwt' });
    const sent: Frame[] = [];
    s.onFrame = (f) => sent.push(f);
    void client.createRoom({ name: 'club', maxPlayers: 4, public: false, membersOnly: true }).catch(() => undefined);
    expect(sent[0]?.b).toMatchObject({ name: 'club', membersOnly: true });
    client.close();
  });
});
