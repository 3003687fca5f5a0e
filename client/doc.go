// Package client is hostrelay's Go client SDK: it joins the same rooms as
// the browser, for native games, bots and load generators.
//
// Dial opens a lobby session. CreateRoom makes the caller the host of a new
// room; JoinRoom joins one by code as a client. Either returns a Room, which
// negotiates WebRTC with the room's host over the lobby and exposes the two
// data channels every hostrelay peer has: Game (unordered, no
// retransmissions) and Events (reliable, ordered). ICE is relay-only through
// the server's TURN, with mDNS off.
//
// Every blocking call takes a context. Room.Events and Room.Messages must be
// drained: the SDK does not buffer without bound.
//
// The package depends on protocol only, never on the server.
package client
