import { always, bin, bool, int, list, str, struct, type Field } from './fields.js';
import type {
  Chat,
  ChatMessage,
  CreateParty,
  CreateRoom,
  ErrorBody,
  GameStarted,
  Hello,
  HostChanged,
  IceRefresh,
  Ice,
  IceServer,
  JoinParty,
  JoinRoom,
  Kick,
  LeaveParty,
  LeaveRoom,
  MessageMap,
  MessageTypeName,
  Ok,
  Party,
  PartyJoined,
  PartyMember,
  PartyUpdated,
  Player,
  PlayerJoined,
  PlayerLeft,
  PlayerUpdated,
  QuickPlay,
  RoomClosed,
  RoomInfo,
  RoomJoined,
  RoomList,
  RoomListUpdate,
  RoomSummary,
  RoomUpdated,
  SetName,
  SetReady,
  Signal,
  Spectate,
  SpectateEnded,
  Spectating,
  SpectatorFrame,
  StartGame,
  StopSpectating,
  UnwatchRooms,
  UpdateRoom,
  WatchRooms,
  Welcome,
} from './messages.js';

// One schema per Go struct in protocol/messages.go, fields in the same order.

const player = struct<Player>({ id: str, name: str, ready: bool, ping: int, away: bool });

const roomInfo = struct<RoomInfo>({
  code: str,
  name: str,
  maxPlayers: int,
  public: bool,
  hasPassword: bool,
  host: str,
  mode: str,
  started: bool,
  migrate: bool,
  spectators: int,
});

const roomSummary = struct<RoomSummary>({
  code: str,
  name: str,
  host: str,
  players: int,
  maxPlayers: int,
  mode: str,
  hasPassword: bool,
  started: bool,
});

const partyMember = struct<PartyMember>({ id: str, name: str });
const party = struct<Party>({ code: str, leader: str, members: list(partyMember) });

const iceServer = struct<IceServer>({ urls: list(str), username: str, credential: str });
const ice = struct<Ice>({ servers: list(iceServer), ttl: int });

/** The body codec for every message type. */
export const bodies: { readonly [T in MessageTypeName]: Field<MessageMap[T]> } = {
  hello: struct<Hello>({ v: int, name: str, device: str, pings: bool, resume: str, received: int }),
  welcome: struct<Welcome>({
    v: int,
    session: str,
    maxFrame: int,
    token: str,
    resume: str,
    grace: int,
    resumed: bool,
  }),
  error: struct<ErrorBody>({ code: str, msg: str }),
  ok: struct<Ok>({}),
  createRoom: struct<CreateRoom>({ name: str, maxPlayers: int, public: bool, password: str, mode: str, migrate: bool }),
  joinRoom: struct<JoinRoom>({ code: str, password: str }),
  roomJoined: struct<RoomJoined>({
    room: always(roomInfo),
    you: str,
    players: list(player),
    ice: always(ice),
  }),
  leaveRoom: struct<LeaveRoom>({}),
  playerJoined: struct<PlayerJoined>({ player: always(player) }),
  playerLeft: struct<PlayerLeft>({ id: str, reason: str }),
  roomClosed: struct<RoomClosed>({ reason: str }),
  signal: struct<Signal>({ to: str, from: str, kind: str, sdp: str, cand: str, mid: str }),
  setName: struct<SetName>({ name: str }),
  setReady: struct<SetReady>({ ready: bool }),
  updateRoom: struct<UpdateRoom>({
    name: str,
    maxPlayers: int,
    public: bool,
    mode: str,
    password: str,
    setPassword: bool,
  }),
  kick: struct<Kick>({ id: str }),
  startGame: struct<StartGame>({}),
  chat: struct<Chat>({ text: str }),
  playerUpdated: struct<PlayerUpdated>({ player: always(player) }),
  roomUpdated: struct<RoomUpdated>({ room: always(roomInfo) }),
  gameStarted: struct<GameStarted>({ mode: str }),
  chatMessage: struct<ChatMessage>({ from: str, name: str, text: str, at: int }),
  watchRooms: struct<WatchRooms>({}),
  unwatchRooms: struct<UnwatchRooms>({}),
  roomList: struct<RoomList>({ rooms: list(roomSummary) }),
  roomListUpdate: struct<RoomListUpdate>({ set: list(roomSummary), del: list(str) }),
  hostChanged: struct<HostChanged>({ host: str, prev: str }),
  iceRefresh: struct<IceRefresh>({ ice: always(ice) }),
  quickPlay: struct<QuickPlay>({ mode: str, maxPlayers: int, migrate: bool }),
  createParty: struct<CreateParty>({}),
  joinParty: struct<JoinParty>({ code: str }),
  leaveParty: struct<LeaveParty>({}),
  partyJoined: struct<PartyJoined>({ party: always(party), you: str }),
  partyUpdated: struct<PartyUpdated>({ party: always(party) }),
  spectate: struct<Spectate>({ code: str, password: str }),
  spectating: struct<Spectating>({ room: always(roomSummary), delayMs: int, maxData: int }),
  stopSpectating: struct<StopSpectating>({}),
  spectatorFrame: struct<SpectatorFrame>({ key: bool, data: bin }),
  spectateEnded: struct<SpectateEnded>({ reason: str }),
};

export function isMessageType(t: string): t is MessageTypeName {
  return Object.hasOwn(bodies, t);
}
