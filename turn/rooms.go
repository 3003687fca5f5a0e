package turn

import "sync/atomic"

// RoomChangeNotifier may be implemented by a Sessions to report membership
// changes. OnRoomChange registers fn to be called with a session's id after
// every change of the room that session is in: joining one, leaving it, the
// room closing, and the session ending for good (after which SessionLive
// answers false). fn runs on the caller's goroutine, possibly under its
// locks: it only bumps counters and queues the session for a later look,
// never blocks and never calls back into the Sessions.
//
// With it, turn asks RoomOf once per allocation and room change instead of
// twice per relayed packet, and closes an ended session's allocations at
// once. Without it, turn asks RoomOf every time and finds ended sessions by
// asking SessionLive every few seconds.
type RoomChangeNotifier interface {
	OnRoomChange(fn func(sessionID string)) (stop func())
}

// cachedRoom is an allocation's room as RoomOf answered at version ver.
type cachedRoom struct {
	ver  uint64
	room string
	ok   bool
}

// roomCache is a relay socket's cached room. ver is bumped by invalidate
// whenever the owning session's room may have changed.
type roomCache struct {
	ver    atomic.Uint64
	cached atomic.Pointer[cachedRoom]
}

// roomOf returns the room of c's session, from the cache while no change
// was reported since it was filled. session is c.session, read by the caller
// under allocs.mu.
func (a *allocations) roomOf(c *relayConn, session string) (string, bool) {
	if !a.roomChanges {
		return a.sessions.RoomOf(session)
	}
	// Read the version before asking: a change reported while RoomOf runs
	// bumps it, so the answer is stored as already stale.
	v := c.rooms.ver.Load()
	if rc := c.rooms.cached.Load(); rc != nil && rc.ver == v {
		return rc.room, rc.ok
	}
	room, ok := a.sessions.RoomOf(session)
	c.rooms.cached.Store(&cachedRoom{ver: v, room: room, ok: ok})

	return room, ok
}

// invalidate is the RoomChangeNotifier callback: the next packet of any allocation
// of session asks RoomOf again, and the janitor asks whether the session
// ended. It takes only allocs.mu and the janitor's queue lock, which turn never
// holds while calling into the Sessions.
func (a *allocations) invalidate(session string) {
	a.mu.RLock()
	list := a.bySession[session]
	for _, c := range list {
		c.rooms.ver.Add(1)
	}
	held := len(list) > 0
	a.mu.RUnlock()
	if held {
		a.ends.add(session)
	}
}

// sameRoom reports whether the sessions of x and y (sx and sy, read under
// allocs.mu) are both in a room, the same one.
func (a *allocations) sameRoom(x *relayConn, sx string, y *relayConn, sy string) bool {
	if sx == "" || sy == "" {
		return false
	}
	room, ok := a.roomOf(x, sx)
	if !ok || room == "" {
		return false
	}
	other, ok := a.roomOf(y, sy)

	return ok && other == room
}
