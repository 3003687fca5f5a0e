import { describe, expect, it } from 'vitest';
import type { ChatMessage, Frame, Player, RoomInfo, RoomJoined } from '@hostrelay/protocol';
import { fakePeerFactory } from './fake-peer.test-util.js';
import { FakeServer } from './fake-transport.test-util.js';
import { LobbyClient } from './lobby-client.js';
import { DEFAULT_MAX_CHAT_LINES, RoomSession, type RoomSessionOptions } from './room-session.js';

// The room as a RoomSession keeps it: players with their ready state, ping
// and away flag, the room's settings, the start, the chat log, and the room
// requests made through the session, over a scripted lobby server.

const ice = { servers: [{ urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'u', credential: 'c' }], ttl: 60 };
const baseRoom: RoomInfo = {
  code: 'ABC2345',
  name: 'r',
  maxPlayers: 4,
  public: false,
  hasPassword: false,
  host: 'p1',
  mode: 'Arena',
  started: false,
  migrate: true,
  spectators: 0,
  membersOnly: false,
};

const player = (id: string, over: Partial<Player> = {}): Player => ({ id, name: id.toUpperCase(), ready: false, ping: 0, away: false, verified: false, userId: '', meta: '', ...over });

const line = (from: string, text: string, at = 1): ChatMessage => ({ from, name: from.toUpperCase(), text, at });

const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

interface Setup {
  you?: string;
  players?: string[];
  room?: Partial<RoomInfo>;
  options?: RoomSessionOptions;
}

async function setup({ you = 'p2', players = ['p1', 'p2', 'p3'], room = {}, options = {} }: Setup = {}) {
  const server = FakeServer.welcoming();
  server.onFrame = (f) => {
    if (f.t === 'hello') server.send('welcome', f.id, { v: 1, session: 's' });
    else server.send('ok', f.id, {});
  };
  const lobby = await LobbyClient.connect('ws://x/ws', you, { transport: server.factory });
  const joined: RoomJoined = { room: { ...baseRoom, ...room }, you, players: players.map((id) => player(id)), ice };
  const session = new RoomSession(lobby, joined, {
    createPeerConnection: fakePeerFactory().create,
    closeOnPageHide: false,
    hostLinkPolicy: null,
    ...options,
  });
  const events: unknown[] = [];
  session.on('playerUpdated', (p, prev) => events.push(['updated', p.id, prev.ready, p.ready, p.ping, p.away, p.name]));
  session.on('roomUpdated', (r) => events.push(['room', r.name, r.maxPlayers, r.mode, r.host]));
  session.on('gameStarted', (e) => events.push(['started', e.mode]));
  session.on('chat', (m) => events.push(['chat', m.from, m.text]));
  session.on('hostChanged', (c) => events.push(['host', c.previous, c.host, c.role]));
  await flush();
  // Frames the client sent after its hello.
  const sent = (): [string, unknown][] => server.received.filter((f: Frame) => f.t !== 'hello' && f.t !== 'signal').map((f) => [f.t, f.b]);
  return { server, lobby, session, events, sent };
}

describe('RoomSession players', () => {
  it('keeps each playerUpdated (ready, ping, away, name) in players and says what it replaced', async () => {
    const { server, session, events } = await setup();
    const before = session.players;
    server.send('playerUpdated', 0, { player: player('p3', { ready: true }) });
    server.send('playerUpdated', 0, { player: player('p3', { ready: true, ping: 42 }) });
    server.send('playerUpdated', 0, { player: player('p1', { away: true, ping: 7 }) });
    server.send('playerUpdated', 0, { player: player('p2', { name: 'Grace', ready: true }) });
    expect(events).toEqual([
      ['updated', 'p3', false, true, 0, false, 'P3'],
      ['updated', 'p3', true, true, 42, false, 'P3'],
      ['updated', 'p1', false, false, 7, true, 'P1'],
      ['updated', 'p2', false, true, 0, false, 'Grace'],
    ]);
    expect(session.players).toEqual([
      player('p1', { away: true, ping: 7 }),
      player('p2', { name: 'Grace', ready: true }),
      player('p3', { ready: true, ping: 42 }),
    ]);
    expect(session.me).toEqual(player('p2', { name: 'Grace', ready: true }));
    // An array handed out earlier is a snapshot: a UI can tell the new one from it.
    expect(before).not.toBe(session.players);
    expect(before.map((p) => p.ready)).toEqual([false, false, false]);
  });

  it('ignores updates for players not in the room, and for those who left', async () => {
    const { server, session, events } = await setup();
    server.send('playerUpdated', 0, { player: player('p9', { ready: true }) });
    server.send('playerLeft', 0, { id: 'p3', reason: 'left' });
    server.send('playerUpdated', 0, { player: player('p3', { ready: true }) });
    server.send('chatMessage', 0, line('p9', 'from elsewhere'));
    server.send('chatMessage', 0, line('p3', 'after leaving'));
    expect(events).toEqual([]);
    expect(session.players.map((p) => [p.id, p.ready])).toEqual([
      ['p1', false],
      ['p2', false],
    ]);
    expect(session.chat).toEqual([]);
  });

  it('keeps a newcomer and its updates', async () => {
    const { server, session, events } = await setup();
    server.send('playerJoined', 0, { player: player('p4') });
    server.send('playerUpdated', 0, { player: player('p4', { ready: true }) });
    expect(events).toEqual([['updated', 'p4', false, true, 0, false, 'P4']]);
    expect(session.players.map((p) => [p.id, p.ready])).toEqual([
      ['p1', false],
      ['p2', false],
      ['p3', false],
      ['p4', true],
    ]);
  });
});

describe('RoomSession room settings and start', () => {
  it('takes roomUpdated as the room, keeping the host it knows', async () => {
    const { server, session, events } = await setup();
    server.send('roomUpdated', 0, { room: { ...baseRoom, name: 'Friday ball', maxPlayers: 6, mode: 'Teams' } });
    expect(events).toEqual([['room', 'Friday ball', 6, 'Teams', 'p1']]);
    expect(session.room).toMatchObject({ name: 'Friday ball', maxPlayers: 6, mode: 'Teams', host: 'p1' });
    // Another room's settings are not ours.
    server.send('roomUpdated', 0, { room: { ...baseRoom, code: 'XYZ2345', name: 'other' } });
    expect(events).toHaveLength(1);
    expect(session.room.name).toBe('Friday ball');
  });

  it('counts the spectators from the room it joined and each roomUpdated, saying when the count changes', async () => {
    const { server, session } = await setup({ you: 'p1', room: { spectators: 2, membersOnly: false } });
    expect(session.spectators).toBe(2);
    const seen: [number, number][] = [];
    session.on('spectatorsChanged', (n, previous) => seen.push([n, previous]));
    server.send('roomUpdated', 0, { room: { ...baseRoom, spectators: 3, membersOnly: false } });
    server.send('roomUpdated', 0, { room: { ...baseRoom, name: 'renamed', spectators: 3, membersOnly: false } }); // settings only
    server.send('roomUpdated', 0, { room: { ...baseRoom, spectators: 0, membersOnly: false } });
    expect(seen).toEqual([
      [3, 2],
      [0, 3],
    ]);
    expect(session.spectators).toBe(0);
    expect(session.room.spectators).toBe(0);
  });

  it('is started from gameStarted on, once', async () => {
    const { server, session, events } = await setup();
    expect(session.started).toBe(false);
    server.send('gameStarted', 0, { mode: 'Arena' });
    expect(session.started).toBe(true);
    expect(session.room.started).toBe(true);
    server.send('gameStarted', 0, { mode: 'Arena' });
    // A later settings change does not un-start the room.
    server.send('roomUpdated', 0, { room: { ...baseRoom, name: 'renamed', started: false } });
    expect(session.started).toBe(true);
    expect(events).toEqual([
      ['started', 'Arena'],
      ['room', 'renamed', 4, 'Arena', 'p1'],
    ]);
  });

  it('counts a room that had started before we joined as started', async () => {
    const { server, session, events } = await setup({ room: { started: true } });
    expect(session.started).toBe(true);
    server.send('gameStarted', 0, { mode: 'Arena' });
    expect(events).toEqual([]);
  });
});

describe('RoomSession chat', () => {
  it('keeps the lines of the room and tells of each', async () => {
    const { server, session, events } = await setup();
    const before = session.chat;
    server.send('chatMessage', 0, line('p1', 'hi'));
    server.send('chatMessage', 0, line('p2', '<b>me</b>'));
    expect(events).toEqual([
      ['chat', 'p1', 'hi'],
      ['chat', 'p2', '<b>me</b>'],
    ]);
    expect(session.chat.map((m) => m.text)).toEqual(['hi', '<b>me</b>']);
    expect(before).toEqual([]);
  });

  it(`keeps ${DEFAULT_MAX_CHAT_LINES} lines by default: all of them at the bound, the newest past it`, async () => {
    const { server, session, events } = await setup();
    for (let i = 0; i < DEFAULT_MAX_CHAT_LINES; i++) server.send('chatMessage', 0, line('p1', `l${i}`, i));
    expect(session.chat).toHaveLength(DEFAULT_MAX_CHAT_LINES);
    expect(session.chat[0]?.text).toBe('l0');
    server.send('chatMessage', 0, line('p3', 'one more', 999));
    expect(session.chat).toHaveLength(DEFAULT_MAX_CHAT_LINES);
    expect(session.chat[0]?.text).toBe('l1');
    expect(session.chat.at(-1)?.text).toBe('one more');
    expect(events).toHaveLength(DEFAULT_MAX_CHAT_LINES + 1);
  });

  it('keeps maxChatLines lines: at the bound, one and two past it', async () => {
    const { server, session } = await setup({ options: { maxChatLines: 3 } });
    for (const t of ['a', 'b', 'c']) server.send('chatMessage', 0, line('p1', t));
    expect(session.chat.map((m) => m.text)).toEqual(['a', 'b', 'c']);
    server.send('chatMessage', 0, line('p1', 'd'));
    expect(session.chat.map((m) => m.text)).toEqual(['b', 'c', 'd']);
    server.send('chatMessage', 0, line('p1', 'e'));
    expect(session.chat.map((m) => m.text)).toEqual(['c', 'd', 'e']);
  });

  it('keeps no lines with maxChatLines 0 but still tells of each', async () => {
    const { server, session, events } = await setup({ options: { maxChatLines: 0 } });
    server.send('chatMessage', 0, line('p1', 'a'));
    expect(session.chat).toEqual([]);
    expect(events).toEqual([['chat', 'p1', 'a']]);
  });

  it('refuses a bound that is not a whole number ≥ 0', async () => {
    for (const maxChatLines of [-1, 1.5, Number.NaN]) {
      await expect(setup({ options: { maxChatLines } })).rejects.toThrow(/maxChatLines/);
    }
  });
});

describe('RoomSession requests', () => {
  it('sets ready, chats, kicks, starts and updates the room through the lobby', async () => {
    const { session, sent } = await setup({ you: 'p1' });
    await session.setReady(true);
    await session.sendChat('hello');
    await session.kick('p3');
    await session.startGame();
    await session.updateRoom({ name: 'r2', maxPlayers: 5, public: true });
    expect(sent()).toEqual([
      ['setReady', { ready: true }],
      ['chat', { text: 'hello' }],
      ['kick', { id: 'p3', ban: false }],
      ['startGame', undefined],
      ['updateRoom', { name: 'r2', maxPlayers: 5, public: true, mode: '', password: '', setPassword: false }],
    ]);
  });

  it('rejects with the server code', async () => {
    const { server, session } = await setup();
    server.onFrame = (f) => server.send('error', f.id, { code: 'forbidden', msg: 'only the host may start the game' });
    await expect(session.startGame()).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('sends nothing once the session is over', async () => {
    const { server, session, sent } = await setup();
    server.send('roomClosed', 0, { reason: 'kicked' });
    await expect(session.setReady(true)).rejects.toMatchObject({ code: 'closed', message: expect.stringMatching(/kicked/) });
    await expect(session.sendChat('hi')).rejects.toMatchObject({ code: 'closed' });
    await expect(session.kick('p1')).rejects.toMatchObject({ code: 'closed' });
    await expect(session.startGame()).rejects.toMatchObject({ code: 'closed' });
    expect(sent()).toEqual([]);
  });
});

describe('RoomSession after a host change', () => {
  it('keeps the players and their state, follows the new host, and gives it the host requests', async () => {
    const { server, session, events, sent } = await setup({ you: 'p2' });
    server.send('playerUpdated', 0, { player: player('p2', { ready: true }) });
    server.send('playerUpdated', 0, { player: player('p3', { ready: true, ping: 9 }) });
    server.send('chatMessage', 0, line('p1', 'bye'));
    server.send('playerLeft', 0, { id: 'p1', reason: 'left' });
    server.send('hostChanged', 0, { host: 'p2', prev: 'p1' });
    expect(session.hostId).toBe('p2');
    expect(session.role).toBe('host');
    expect(session.room.host).toBe('p2');
    expect(session.players).toEqual([player('p2', { ready: true }), player('p3', { ready: true, ping: 9 })]);
    // The old host's lines stay in the log; the room goes on.
    expect(session.chat.map((m) => m.from)).toEqual(['p1']);
    server.send('playerUpdated', 0, { player: player('p3', { ready: false, ping: 9 }) });
    server.send('roomUpdated', 0, { room: { ...baseRoom, host: 'p2', name: 'ours now' } });
    expect(session.room).toMatchObject({ host: 'p2', name: 'ours now' });
    await session.kick('p3');
    await session.startGame();
    expect(sent()).toEqual([
      ['kick', { id: 'p3', ban: false }],
      ['startGame', undefined],
    ]);
    expect(events).toEqual([
      ['updated', 'p2', false, true, 0, false, 'P2'],
      ['updated', 'p3', false, true, 9, false, 'P3'],
      ['chat', 'p1', 'bye'],
      ['host', 'p1', 'p2', 'host'],
      ['updated', 'p3', true, false, 9, false, 'P3'],
      ['room', 'ours now', 4, 'Arena', 'p2'],
    ]);
  });
});
