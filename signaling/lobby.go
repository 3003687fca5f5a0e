package signaling

import (
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// player is s as its room shows it. Caller holds Hub.mu.
func (s *Session) player() protocol.Player {
	return protocol.Player{ID: s.playerID, Name: s.displayName, Ready: s.ready, Ping: s.pingMs, Away: s.away,
		Verified: s.identity.UserID != "", UserID: s.identity.UserID, Meta: s.identity.Meta}
}

// enterRoomLocked makes s a member of r with a fresh player id and a name
// unique in r, and ends its room list subscription: a player in a room has
// no use for the list, and the fan-out is not free.
func (h *Hub) enterRoomLocked(s *Session, r *room) {
	h.setRoomLocked(s, r)
	s.playerID = r.newPlayerID()
	s.ready = false
	s.displayName = r.uniqueName(s.name, s)
	r.members = append(r.members, s)
	h.unsubscribeRoomListLocked(s)
	s.nudgePing()
	if r.host == s && len(r.members) == 1 {
		h.emitMemberLocked(RoomCreated, r, s, s.playerID, "")
	} else {
		h.emitMemberLocked(PlayerJoined, r, s, s.playerID, "")
	}
}

// recordPing stores a measured round trip, rounded up to whole milliseconds
// (so a loopback player shows 1, and 0 keeps meaning "not measured"), and
// tells the members that asked for pings (Hello.Pings) when it changed.
func (h *Hub) recordPing(s *Session, rtt time.Duration) {
	ms := int((rtt + time.Millisecond - 1) / time.Millisecond)
	ms = max(ms, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.pingMs == ms {
		return
	}
	s.pingMs = ms
	if s.room == nil {
		return
	}
	frame, err := protocol.Encode(protocol.TypePlayerUpdated, 0, &protocol.PlayerUpdated{Player: s.player()})
	if err != nil {
		h.log.Error("encode event", "type", protocol.TypePlayerUpdated, "room", s.room.code, "err", err)
		return
	}
	for _, m := range s.room.members {
		if m.wantsPings {
			m.enqueue(frame)
		}
	}
}
