import { describe, expect, it } from 'vitest';
import type { Frame, Party, RoomJoined } from '@hostrelay/protocol';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import { LobbyError } from './errors.js';

// Quick play and parties over a scripted server: each request's wire form,
// its reply, and the events a party member gets.

const joined = (code: string, you: string): RoomJoined => ({
  room: { code, name: 'Quick play: Duel', maxPlayers: 8, public: true, hasPassword: false, host: 'p1', mode: 'Duel', started: false, migrate: false, spectators: 0, membersOnly: false },
  you,
  players: [
    { id: 'p1', name: 'Ada', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' },
    { id: you, name: 'Grace', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' },
  ],
  ice: { servers: [], ttl: 60 },
});

const party: Party = { code: 'PQR2345', leader: 'm1', members: [{ id: 'm1', name: 'Ada' }, { id: 'm2', name: 'Grace' }] };

async function connected(reply: (f: Frame, server: FakeServer) => void): Promise<[LobbyClient, FakeServer]> {
  const server = FakeServer.welcoming();
  const client = await LobbyClient.connect('ws://x/ws', 'Ada', { transport: server.factory });
  server.onFrame = (f) => reply(f, server);
  return [client, server];
}

describe('LobbyClient quick play and parties', () => {
  it('writes each request as the protocol says and resolves with its reply', async () => {
    const [client, server] = await connected((f, s) => {
      if (f.t === 'quickPlay') s.send('roomJoined', f.id, joined('ABC2345', 'p2'));
      if (f.t === 'createParty' || f.t === 'joinParty') s.send('partyJoined', f.id, { party, you: 'm2' });
      if (f.t === 'leaveParty') s.send('ok', f.id, {});
    });
    expect((await client.quickPlay('Duel')).room.code).toBe('ABC2345');
    expect((await client.quickPlay('Duel', { maxPlayers: 2, migrate: true })).you).toBe('p2');
    expect((await client.createParty()).party.code).toBe('PQR2345');
    expect((await client.joinParty('pqr-2345')).you).toBe('m2');
    await client.leaveParty();
    expect(server.received.slice(1).map((f) => [f.t, f.b])).toEqual([
      ['quickPlay', { mode: 'Duel', maxPlayers: 0, migrate: false }],
      ['quickPlay', { mode: 'Duel', maxPlayers: 2, migrate: true }],
      ['createParty', undefined],
      ['joinParty', { code: 'pqr-2345' }],
      ['leaveParty', undefined],
    ]);
  });

  it('rejects with the server code', async () => {
    const [client] = await connected((f, s) => {
      if (f.t === 'joinParty') s.send('error', f.id, { code: 'party_full', msg: 'party PQR2345 is full (4 of 4)' });
      if (f.t === 'quickPlay') s.send('error', f.id, { code: 'forbidden', msg: "only the party's leader may start quick play" });
    });
    const full = await client.joinParty('PQR2345').catch((e: unknown) => e);
    expect(full).toBeInstanceOf(LobbyError);
    expect((full as LobbyError).code).toBe('party_full');
    await expect(client.quickPlay('Duel')).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('tells a party member it was placed in a room before any event of that room', async () => {
    const [client, server] = await connected(() => undefined);
    const seen: string[] = [];
    client.on('partyUpdated', (p) => seen.push(`party ${p.members.length} led by ${p.leader}`));
    client.on('roomJoined', (j) => {
      seen.push(`joined ${j.room.code} as ${j.you}`);
      // A listener subscribes here, as a RoomSession does, and hears what follows.
      client.on('playerJoined', (p) => seen.push(`then ${p.name}`));
    });
    server.send('partyUpdated', 0, { party });
    server.send('roomJoined', 0, joined('ABC2345', 'p2'));
    server.send('playerJoined', 0, { player: { id: 'p3', name: 'Linus', ready: false, ping: 0, away: false, verified: false, userId: '', meta: '' } });
    expect(seen).toEqual(['party 2 led by m1', 'joined ABC2345 as p2', 'then Linus']);
  });
});
