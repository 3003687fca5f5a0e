// Package signaling runs hostrelay's lobby: one Session per WebSocket, rooms
// with a host assigned by the server, room events, and the SDP/ICE relay
// between a room's host and its clients. It never touches game traffic.
//
// All room state lives in a Hub guarded by one mutex. Sends never block while
// it is held: each session has a bounded outgoing queue, and a session whose
// queue is full is disconnected rather than allowed to stall the room.
package signaling
