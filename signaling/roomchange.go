package signaling

// Room-change reports for the embedded TURN (turn.RoomChangeNotifier): TURN
// caches each allocation's room and must hear of every change, or a relay
// would keep reaching a room its player left. So s.room is written only by
// setRoomLocked, which reports the change. (Not to be confused with the
// public room list that players subscribe to: directory.go.)

type roomChangeListener struct{ fn func(sessionID string) }

// OnRoomChange registers fn, called with a session's id after every change
// of the room that session is in: it joined or left one, was kicked, its
// room closed, or the session ended. fn runs under the hub's lock, so it
// must be quick and must not call the hub. stop unregisters it.
func (h *Hub) OnRoomChange(fn func(sessionID string)) (stop func()) {
	l := &roomChangeListener{fn: fn}
	h.mu.Lock()
	h.roomChangeListeners = append(h.roomChangeListeners, l)
	h.mu.Unlock()

	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for i, o := range h.roomChangeListeners {
			if o == l {
				h.roomChangeListeners = append(h.roomChangeListeners[:i], h.roomChangeListeners[i+1:]...)

				return
			}
		}
	}
}

// setRoomLocked moves s into r (nil: out of any room) and reports it.
func (h *Hub) setRoomLocked(s *Session, r *room) {
	if r != nil {
		h.stopWatchingLocked(s) // a spectator taking a seat
	}
	s.room = r
	h.roomChangeLocked(s)
}

// roomChangeLocked reports that RoomOf(s.id) may answer differently now.
func (h *Hub) roomChangeLocked(s *Session) {
	for _, l := range h.roomChangeListeners {
		l.fn(s.id)
	}
}
