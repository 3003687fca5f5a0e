import { always, bool, int, list, str, struct, type Field } from './fields';
import type {
  CreateRoom,
  ErrorBody,
  Hello,
  Ice,
  IceServer,
  JoinRoom,
  LeaveRoom,
  MessageMap,
  MessageTypeName,
  Ok,
  Player,
  PlayerJoined,
  PlayerLeft,
  RoomClosed,
  RoomInfo,
  RoomJoined,
  Signal,
  Welcome,
} from './messages';

// One schema per Go struct in protocol/messages.go, fields in the same order.

const player = struct<Player>({ id: str, name: str });

const roomInfo = struct<RoomInfo>({
  code: str,
  name: str,
  maxPlayers: int,
  public: bool,
  hasPassword: bool,
  host: str,
});

const iceServer = struct<IceServer>({ urls: list(str), username: str, credential: str });
const ice = struct<Ice>({ servers: list(iceServer), ttl: int });

/** The body codec for every message type. */
export const bodies: { readonly [T in MessageTypeName]: Field<MessageMap[T]> } = {
  hello: struct<Hello>({ v: int, name: str }),
  welcome: struct<Welcome>({ v: int, session: str, maxFrame: int, token: str }),
  error: struct<ErrorBody>({ code: str, msg: str }),
  ok: struct<Ok>({}),
  createRoom: struct<CreateRoom>({ name: str, maxPlayers: int, public: bool, password: str }),
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
};

export function isMessageType(t: string): t is MessageTypeName {
  return Object.hasOwn(bodies, t);
}
