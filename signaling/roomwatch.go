package signaling

// Room-change reports for the embedded TURN (turn.RoomWatcher): TURN caches
// each allocation's room and must hear of every change, or a relay would
// keep reaching a room its player left. So s.room is written only by
// setRoomLocked, which reports the change.

type roomWatch struct{ fn func(sessionID string) }

// WatchRooms registers fn, called with a session's id after every change of
// the room that session is in: it joined or left one, was kicked, its room
// closed, or the session ended. fn runs under the hub's lock, so it must be
// quick and must not call the hub. stop unregisters it.
func (h *Hub) WatchRooms(fn func(sessionID string)) (stop func()) {
	w := &roomWatch{fn: fn}
	h.mu.Lock()
	h.roomWatches = append(h.roomWatches, w)
	h.mu.Unlock()

	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for i, o := range h.roomWatches {
			if o == w {
				h.roomWatches = append(h.roomWatches[:i], h.roomWatches[i+1:]...)

				return
			}
		}
	}
}

// setRoomLocked moves s into r (nil: out of any room) and reports it.
func (h *Hub) setRoomLocked(s *Session, r *room) {
	s.room = r
	h.roomMovedLocked(s)
}

// roomMovedLocked reports that RoomOf(s.id) may answer differently now.
func (h *Hub) roomMovedLocked(s *Session) {
	for _, w := range h.roomWatches {
		w.fn(s.id)
	}
}
