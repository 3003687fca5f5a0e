// hostrelay for React: hooks over @hostrelay/sdk and @hostrelay/netcode.
// Each hook opens what it needs in an effect (never while rendering, so a
// server render opens nothing), reads it through useSyncExternalStore, and
// closes it one task after its component unmounts, so StrictMode's second
// effect keeps the first one's connection.
export { LobbyProvider, useLobby, useLobbyContext, type LobbyIdentity, type LobbyState, type LobbyStatus, type UseLobbyOptions } from './lobby.js';
export { useRoomDirectory, type RoomDirectoryState } from './directory.js';
export { RoomProvider, useRoom, useRoomContext, type RoomConnection, type RoomState, type RoomTarget, type UseRoomOptions } from './room.js';
export { usePeerMessages } from './messages.js';
export { useNetClient, useNetHost, type NetListeners, type UseNetClientOptions, type UseNetHostOptions } from './net.js';
