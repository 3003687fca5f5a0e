// Package webhook tells a game's backend what happens in the lobby and lets
// it rule on joins (issue 27).
//
// Sender POSTs each room event (signaling.RoomEvents) as JSON (Event) to one
// URL, signed with HMAC-SHA256 (Sign, Verify, SignatureHeader). A room's
// events go one at a time, in order; rooms do not wait for each other. A
// failed delivery is retried with exponential backoff and jitter until
// Config.MaxAge. The queue is bounded in events and bytes, and queueing never
// waits for the network, so a receiver that is down or slow costs the lobby
// nothing and loses at most what does not fit the queue, counted by reason
// in Stats.
//
// JoinHook asks a backend, synchronously and within a short timeout,
// whether a player may create or join a room (signaling.JoinChecker); when
// the backend fails, it lets the join through or refuses it, as configured.
package webhook
