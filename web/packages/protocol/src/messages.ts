// Mirrors protocol/messages.go. Field names are the wire keys, so a decoded
// body is the same object as the JSON form in protocol/testdata/golden.json.
// Every field is present after decoding: omitted fields get their zero value.

/** Message type tags (the envelope's `t`). */
export const MessageType = {
  Hello: 'hello',
  Welcome: 'welcome',
  Error: 'error',
  OK: 'ok',
  CreateRoom: 'createRoom',
  JoinRoom: 'joinRoom',
  RoomJoined: 'roomJoined',
  LeaveRoom: 'leaveRoom',
  PlayerJoined: 'playerJoined',
  PlayerLeft: 'playerLeft',
  RoomClosed: 'roomClosed',
  Signal: 'signal',
  SetName: 'setName',
  SetReady: 'setReady',
  UpdateRoom: 'updateRoom',
  Kick: 'kick',
  StartGame: 'startGame',
  Chat: 'chat',
  PlayerUpdated: 'playerUpdated',
  RoomUpdated: 'roomUpdated',
  GameStarted: 'gameStarted',
  ChatMessage: 'chatMessage',
  WatchRooms: 'watchRooms',
  UnwatchRooms: 'unwatchRooms',
  RoomList: 'roomList',
  RoomListUpdate: 'roomListUpdate',
  HostChanged: 'hostChanged',
  IceRefresh: 'iceRefresh',
  HostSilent: 'hostSilent',
  HostCheck: 'hostCheck',
  HostAlive: 'hostAlive',
  HostReplaced: 'hostReplaced',
  QuickPlay: 'quickPlay',
  CreateParty: 'createParty',
  JoinParty: 'joinParty',
  LeaveParty: 'leaveParty',
  PartyJoined: 'partyJoined',
  PartyUpdated: 'partyUpdated',
  Spectate: 'spectate',
  Spectating: 'spectating',
  StopSpectating: 'stopSpectating',
  SpectatorFrame: 'spectatorFrame',
  SpectateEnded: 'spectateEnded',
} as const;

/** Signal kinds: the joining client offers, the host answers, both trickle candidates. */
export const SignalKind = {
  Offer: 'offer',
  Answer: 'answer',
  Candidate: 'candidate',
} as const;
export type SignalKindName = (typeof SignalKind)[keyof typeof SignalKind];

/**
 * The first frame a client sends. `name` may be empty until a room needs one
 * (setName). `device` is a random id kept across connections; a room bans it
 * when the host kicks the player.
 */
export interface Hello {
  v: number;
  name: string;
  device: string;
  /** Ask for playerUpdated events whenever a member's ping changes. */
  pings: boolean;
  /** The resume token of an earlier Welcome: take that seat back. */
  resume: string;
  /** Frames received on that session, not counting resumed Welcomes. */
  received: number;
  /**
   * An identity token (a JWT) from the game's backend, at most
   * MAX_AUTH_TOKEN bytes; '' for none. Sent again on every resume.
   */
  token: string;
}

/**
 * Answers Hello. `session` names the lobby session in logs and TURN usernames.
 * `token` is a secret bearer token for the HTTP API (/api/v1), valid while this
 * session stays connected.
 */
export interface Welcome {
  v: number;
  session: string;
  maxFrame: number;
  token: string;
  /** Single-use token that takes this seat back within `grace` seconds. */
  resume: string;
  grace: number;
  /** Set on the Welcome that answers a resume. */
  resumed: boolean;
  /**
   * The node that answered and its region, in a cluster ('' on a single
   * node). A resume token is only good on this node.
   */
  node: string;
  region: string;
  /**
   * TURN credentials for this session, as a join would give (no servers on
   * a resumed Welcome): a client about to join can start gathering relay
   * candidates before the join's reply. They relay nothing until the
   * session is in a room.
   */
  ice: Ice;
}

/** The reply to a failed request, or (id 0) a notice before the server closes. */
export interface ErrorBody {
  code: string;
  msg: string;
  /**
   * With room_elsewhere: the lobby WebSocket URL (ws:// or wss://, path /ws)
   * of the node that owns the room, where the same request must go after a
   * new hello.
   */
  url: string;
  /** With room_elsewhere: that node's region. */
  region: string;
}

/** Acknowledges a request that has nothing else to say. */
export type Ok = Record<string, never>;

/** Makes the sender the host of a new room. */
export interface CreateRoom {
  name: string;
  maxPlayers: number;
  public: boolean;
  password: string;
  /** A free label for the game mode, shown in the room list. */
  mode: string;
  /** Promote a client when the host leaves instead of closing the room. */
  migrate: boolean;
  /**
   * In a cluster, the region to make the room in (1 to MAX_REGION bytes of
   * a-z, 0-9, '-', '_', '.'): a node elsewhere answers room_elsewhere with a
   * node that is there; a region with no live node is ignored.
   */
  region: string;
  /** Admit verified players only; others are refused with members_only. */
  membersOnly: boolean;
}

/** Joins the room with this code as a client. */
export interface JoinRoom {
  code: string;
  password: string;
}

/** Leaves the current room; if the host leaves, the room closes. */
export type LeaveRoom = Record<string, never>;

/**
 * One member of a room; `id` is what Signal.to and Signal.from name. `name` is
 * unique in the room (the server adds " (2)" to a taken name). `ping` is the
 * round trip to the server in ms, rounded up; 0 until measured.
 */
export interface Player {
  id: string;
  name: string;
  ready: boolean;
  ping: number;
  /** The player's connection is down and its seat is held. */
  away: boolean;
  /** The player's hello carried a valid identity token. */
  verified: boolean;
  /** The token's sub: the game's stable user id ('' when not verified). */
  userId: string;
  /** The token's meta object as compact JSON ('' when none), for the host. */
  meta: string;
}

/** Describes a room; `host` is the player id of the host. */
export interface RoomInfo {
  code: string;
  name: string;
  maxPlayers: number;
  public: boolean;
  hasPassword: boolean;
  host: string;
  mode: string;
  /** The host has started the game. */
  started: boolean;
  /** A client is promoted when the host leaves. */
  migrate: boolean;
  /**
   * How many watch the room (spectate): a host may skip its spectator stream
   * while it is 0. A change comes as roomUpdated, at most once per
   * SPECTATOR_COUNT_INTERVAL_MS per room.
   */
  spectators: number;
  /** Only verified players may join. */
  membersOnly: boolean;
}

/** Has the shape of the WebRTC RTCIceServer dictionary. */
export interface IceServer {
  urls: string[];
  username: string;
  credential: string;
}

/** The TURN servers and how long (seconds) their credential stays valid. */
export interface Ice {
  servers: IceServer[];
  ttl: number;
}

/** Answers CreateRoom and JoinRoom; `players` includes the receiver, oldest first. */
export interface RoomJoined {
  room: RoomInfo;
  you: string;
  players: Player[];
  ice: Ice;
}

/** A player arrived. */
export interface PlayerJoined {
  player: Player;
}

/** A player is gone, and why. */
export interface PlayerLeft {
  id: string;
  reason: string;
}

/** The room no longer exists. */
export interface RoomClosed {
  reason: string;
}

/**
 * WebRTC negotiation between a client and its room's host. The server stamps
 * `from` with the sender's real id. An empty `cand` on a candidate signal is
 * the end-of-candidates marker.
 */
export interface Signal {
  to: string;
  from: string;
  kind: string;
  sdp: string;
  cand: string;
  mid: string;
}

/** Changes the sender's display name. */
export interface SetName {
  name: string;
}

/** Marks the sender ready (or not) to start. */
export interface SetReady {
  ready: boolean;
}

/** Replaces the room's settings (host only); the password changes only with `setPassword`. */
export interface UpdateRoom {
  name: string;
  maxPlayers: number;
  public: boolean;
  mode: string;
  password: string;
  setPassword: boolean;
}

/** Removes a player (host only) and bans its session and device from the room. */
export interface Kick {
  id: string;
  /**
   * Also ban the player's verified user id from the room (any session, any
   * name, any device); its rejoin is refused with `banned`. An unverified
   * player is banned by session and device, as every kick does.
   */
  ban: boolean;
}

/** Starts the game (host only) once every other member is ready. */
export type StartGame = Record<string, never>;

/** A chat line for the room. */
export interface Chat {
  text: string;
}

/** A member's name, ready state or ping changed. */
export interface PlayerUpdated {
  player: Player;
}

/** The room's settings changed. */
export interface RoomUpdated {
  room: RoomInfo;
}

/** The host started the game. */
export interface GameStarted {
  mode: string;
}

/** A relayed chat line: plain text, never markup. `at` is server time in Unix ms. */
export interface ChatMessage {
  from: string;
  name: string;
  text: string;
  at: number;
}

/** Subscribes to the public room list. */
export type WatchRooms = Record<string, never>;

/** Ends the room-list subscription. */
export type UnwatchRooms = Record<string, never>;

/** One public room as the list shows it; `host` is the host's name. */
export interface RoomSummary {
  code: string;
  name: string;
  host: string;
  players: number;
  maxPlayers: number;
  mode: string;
  hasPassword: boolean;
  started: boolean;
  /** The region of the node hosting the room (cluster only, else ''). */
  region: string;
}

/** Answers watchRooms: replaces the client's list. */
export interface RoomList {
  rooms: RoomSummary[];
}

/** Changes a watched list: `del` applies before `set`. */
export interface RoomListUpdate {
  set: RoomSummary[];
  del: string[];
}

/** Names the room's new host after the old one left (rooms with `migrate`). */
export interface HostChanged {
  host: string;
  prev: string;
}

/** Fresh TURN credentials for this session, sent before the old ones expire. */
export interface IceRefresh {
  ice: Ice;
}

/** A client's report that `host` has sent nothing on the game channel for a while (docs/protocol.md, Frozen hosts). */
export interface HostSilent {
  host: string;
}

/** The server asks the host for a sign of life: answer hostAlive with the same nonce (the SDK does, from its message handler). */
export interface HostCheck {
  nonce: number;
}

/** The host's answer to hostCheck. */
export interface HostAlive {
  nonce: number;
}

/** To a host replaced for not answering hostCheck: `host` took over `room`, and this session is out of it. */
export interface HostReplaced {
  room: string;
  host: string;
  reason: string;
}

/**
 * A seat in the fullest public, unstarted, unpassworded room of `mode` with
 * seats for the sender's whole party, or a new public room of the mode
 * (`maxPlayers` 0: DEFAULT_QUICK_PLAYERS). Answered with roomJoined; the
 * party's other members get roomJoined as an event (id 0).
 */
export interface QuickPlay {
  mode: string;
  maxPlayers: number;
  migrate: boolean;
}

/** Makes a party with the sender as leader. */
export type CreateParty = Record<string, never>;

/** Joins the party with this code. */
export interface JoinParty {
  code: string;
}

/** Leaves the sender's party. */
export type LeaveParty = Record<string, never>;

/** One member of a party; `id` is unique within the party. */
export interface PartyMember {
  id: string;
  name: string;
}

/** A party as its members see it: `leader` is a member id, members oldest first. */
export interface Party {
  code: string;
  leader: string;
  members: PartyMember[];
}

/** Answers createParty and joinParty; `you` is the receiver's member id. */
export interface PartyJoined {
  party: Party;
  you: string;
}

/** The party changed: a member joined, left or was renamed, or the leader changed. */
export interface PartyUpdated {
  party: Party;
}

/**
 * Watches the room with this code without a seat (protocol/spectate.go): the
 * room may be full or started; a wrong code or password spends the failed-join
 * budget like joinRoom. Answered with spectating, then the room's spectator
 * frames as events after the server's delay.
 */
export interface Spectate {
  code: string;
  password: string;
}

/**
 * Answers spectate: the room as the room list shows it, how long the server
 * holds each spectator frame (ms), and the most data bytes it takes in one
 * spectatorFrame from a host.
 */
export interface Spectating {
  room: RoomSummary;
  delayMs: number;
  maxData: number;
}

/** Stops watching; answered with ok (not_in_room if not watching). */
export type StopSpectating = Record<string, never>;

/**
 * One frame of a room's spectator stream: sent by the host (id 0, no answer),
 * delivered to each spectator as an event after the delay. `data` is the
 * game's own encoding; `key` marks a complete state (the frames after it are
 * deltas against it). Outside the session's numbered frames: a client does
 * not count it for resume.
 */
export interface SpectatorFrame {
  key: boolean;
  data: Uint8Array;
}

/** The spectator no longer watches: the room closed (reason as roomClosed). */
export interface SpectateEnded {
  reason: string;
}

/** Each message type tag and its body. */
export interface MessageMap {
  hello: Hello;
  welcome: Welcome;
  error: ErrorBody;
  ok: Ok;
  createRoom: CreateRoom;
  joinRoom: JoinRoom;
  roomJoined: RoomJoined;
  leaveRoom: LeaveRoom;
  playerJoined: PlayerJoined;
  playerLeft: PlayerLeft;
  roomClosed: RoomClosed;
  signal: Signal;
  setName: SetName;
  setReady: SetReady;
  updateRoom: UpdateRoom;
  kick: Kick;
  startGame: StartGame;
  chat: Chat;
  playerUpdated: PlayerUpdated;
  roomUpdated: RoomUpdated;
  gameStarted: GameStarted;
  chatMessage: ChatMessage;
  watchRooms: WatchRooms;
  unwatchRooms: UnwatchRooms;
  roomList: RoomList;
  roomListUpdate: RoomListUpdate;
  hostChanged: HostChanged;
  iceRefresh: IceRefresh;
  hostSilent: HostSilent;
  hostCheck: HostCheck;
  hostAlive: HostAlive;
  hostReplaced: HostReplaced;
  quickPlay: QuickPlay;
  createParty: CreateParty;
  joinParty: JoinParty;
  leaveParty: LeaveParty;
  partyJoined: PartyJoined;
  partyUpdated: PartyUpdated;
  spectate: Spectate;
  spectating: Spectating;
  stopSpectating: StopSpectating;
  spectatorFrame: SpectatorFrame;
  spectateEnded: SpectateEnded;
}
export type MessageTypeName = keyof MessageMap;

/**
 * One decoded frame. `id` is 0 for events. `b` is absent when the frame had
 * no body, which is not the same frame as an empty body.
 */
export type Frame = {
  [T in MessageTypeName]: { t: T; id: number; b?: MessageMap[T] };
}[MessageTypeName];
