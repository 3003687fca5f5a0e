// hostrelay browser SDK: a lobby client, room sessions with relay-only WebRTC
// data channels to the host, and the wire codec underneath.
export {
  LobbyClient,
  type CreateRoomOptions,
  type LobbyClientOptions,
  type LobbyEvents,
  type OutgoingSignal,
  type RoomSettings,
} from './lobby-client';
export { RoomDirectory, type RoomDirectoryEvents } from './room-directory';
export { backoff, type BackoffOptions, type ReconnectPolicy } from './reconnect';
export {
  RoomSession,
  type PeerIceState,
  type PeerPairTypes,
  type Role,
  type RoomSessionEvents,
  type RoomSessionOptions,
} from './room-session';
export { DEFAULT_CONNECT_TIMEOUT_MS, PeerLink, type ChannelData, type PeerLinkEvents, type PeerLinkOptions } from './peer-link';
export { channelConfig, DEFAULT_MAX_BUFFERED_GAME, type ChannelName } from './channels';
export { Emitter, type EventMap, type Unsubscribe } from './emitter';
export {
  ClientErrorCode,
  LobbyError,
  PeerError,
  PeerErrorCode,
  type ClientErrorCodeName,
  type LobbyErrorCode,
  type PeerErrorCodeName,
} from './errors';
export { webSocketTransport, type Transport, type TransportFactory, type TransportHandlers } from './transport';
export type { CandidatePairTypes, SelectedPair } from './stats';
export type {
  ChatMessage,
  GameStarted,
  Ice,
  IceServer,
  Player,
  RoomInfo,
  RoomJoined,
  RoomListUpdate,
  RoomSummary,
  Signal,
} from '../protocol';
export { ErrorCode, Reason, normalizeRoomCode } from '../protocol';
