// hostrelay browser SDK: a lobby client, room sessions with relay-only WebRTC
// data channels to the host, and the wire codec underneath.
export {
  LobbyClient,
  type CreateRoomOptions,
  type KickOptions,
  type LobbyClientOptions,
  type LobbyEvents,
  type NodeMove,
  type OutgoingSignal,
  type QuickPlayOptions,
  type RoomSettings,
} from './lobby-client.js';
export { gameFor, type Game, type GameContext, type GameStats, type RunningGame } from './game.js';
export { SpectatorSession, type SpectateEndReason, type SpectatorSessionEvents } from './spectator-session.js';
export { MAX_NODE_HOPS } from './node-route.js';
export { RoomDirectory, type RoomDirectoryEvents } from './room-directory.js';
export { backoff, type BackoffOptions, type ReconnectPolicy } from './reconnect.js';
export {
  DEFAULT_MAX_CHAT_LINES,
  HOST_SILENCE_MS,
  RoomSession,
  type PeerIceState,
  type PeerPairTypes,
  type Role,
  type RoomEndReason,
  type RoomSessionEvents,
  type RoomSessionOptions,
} from './room-session.js';
export { HostSilenceWatch, type WatchClock } from './silence-watch.js';
export { DEFAULT_CONNECT_TIMEOUT_MS, PeerLink, type ChannelData, type PeerLinkEvents, type PeerLinkOptions } from './peer-link.js';
export { channelConfig, DEFAULT_MAX_BUFFERED_GAME, type ChannelName } from './channels.js';
export { Emitter, type EventMap, type Unsubscribe } from './emitter.js';
export {
  ClientErrorCode,
  LobbyError,
  PeerError,
  PeerErrorCode,
  type ClientErrorCodeName,
  type LobbyErrorCode,
  type PeerErrorCodeName,
} from './errors.js';
export { lobbyUrl, shareLink } from './urls.js';
export { webSocketTransport, type Transport, type TransportFactory, type TransportHandlers } from './transport.js';
export type { CandidatePairTypes, SelectedPair } from './stats.js';
export type {
  ChatMessage,
  CloseReason,
  GameStarted,
  Ice,
  IceServer,
  Party,
  PartyJoined,
  PartyMember,
  Player,
  RoomInfo,
  RoomJoined,
  RoomListUpdate,
  RoomSummary,
  Signal,
  Spectating,
  SpectatorFrame,
} from '@hostrelay/protocol';
export {
  ErrorCode,
  MAX_PARTY_SIZE,
  MAX_REGION,
  MAX_SPECTATOR_DATA,
  Reason,
  SPECTATOR_COUNT_INTERVAL_MS,
  SPECTATOR_FRAMES_PER_SECOND,
  normalizeRoomCode,
  regionProblem,
} from '@hostrelay/protocol';
