package signaling

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hostrelay/hostrelay/protocol"
)

// Quick play (protocol/quickplay.go): a seat in the fullest open room of a
// mode, for the sender and its party, or a new room. The choice and the
// seating happen in one hold of Hub.mu, so concurrent quick-players see each
// other's seats: 20 at once with rooms of 8 make three rooms (8, 8, 4), not
// twenty (TestQuickPlayConcurrentFillsRooms).

// beforeQuickPlay spends a join from the sender's network (a quick play is
// a join) and signs TURN credentials, outside the lock, for the sender and
// each member of its party as it is now. A member who joins the party
// between here and the lock is signed for under it.
func beforeQuickPlay(s *Session, _ *protocol.QuickPlay) (prep, error) {
	h := s.hub
	now := h.cfg.Now()
	h.mu.RLock()
	remote := s.remote
	type who struct {
		s    *Session
		host string
	}
	group := []who{{s, s.host}}
	if p := s.party; p != nil {
		for _, m := range p.members {
			if m != s {
				group = append(group, who{m, m.host})
			}
		}
	}
	h.mu.RUnlock()
	if !h.joins.take(remote, now) {
		h.counters.limited(limitJoinsPerIP)
		return prep{}, fail(protocol.CodeRateLimited, "too many joins from your network; wait a minute")
	}
	if err := h.checkJoin(s, JoinRequest{Action: "quickplay"}); err != nil {
		return prep{}, err
	}
	p := prep{remote: remote, now: now, ices: make(map[*Session]protocol.ICE, len(group))}
	for _, w := range group {
		p.ices[w.s] = h.cfg.ICE(w.s.id, w.host)
	}
	p.ice = p.ices[s]
	// In a cluster the room quick play may make needs a code claimed
	// outside the lock; it is released if an open room seats the group.
	var err error
	if p.code, err = h.claimCode(); err != nil {
		return prep{}, err
	}
	return p, nil
}

func quickPlay(q req[protocol.QuickPlay]) (reply, error) {
	s, h, m := q.s, q.h, q.m
	if s.name == "" {
		return reply{}, fail(protocol.CodeNameRequired, "choose a name first (hello.name or setName)")
	}
	group := []*Session{s}
	if p := s.party; p != nil {
		if p.leader != s {
			return reply{}, fail(protocol.CodeForbidden, "only the party's leader may start quick play")
		}
		for _, o := range p.members {
			if o == s {
				continue
			}
			if o.room != nil {
				return reply{}, fail(protocol.CodeAlreadyInRoom, o.name+" is still in room "+o.room.code)
			}
			group = append(group, o)
		}
	}
	size := m.MaxPlayers
	if size == 0 {
		size = protocol.DefaultQuickPlayers
	}
	r := h.quickRoomLocked(m.Mode, group)
	created := r == nil
	if !created {
		h.releaseCode(q.prep.code)
	}
	if created {
		if len(group) > size {
			return reply{}, &protocol.ValidationError{Field: "maxPlayers",
				Reason: fmt.Sprintf("%d is below your party of %d", size, len(group))}
		}
		if !s.allowCreate(h.cfg.Now()) {
			h.counters.limited(limitRoomsPerSession)
			return reply{}, fail(protocol.CodeRateLimited, "you are creating rooms too fast; wait a minute")
		}
		var err error
		if r, err = h.newRoomLocked(s, q.prep.code, quickRoomName(m.Mode, h.cfg.MaxRoomName), size, true, m.Mode, m.Migrate, nil); err != nil {
			return reply{}, err
		}
		h.counters.roomsCreated.Add(1)
	}
	// Each member hears its RoomJoined before any event of the room, so the
	// sender's reply goes out here, first, not after do returns.
	for _, o := range group {
		h.enterRoomLocked(o, r)
		if o != r.host {
			h.broadcastLocked(r, o, protocol.TypePlayerJoined, &protocol.PlayerJoined{Player: o.player()})
			h.counters.joins.Add(1)
		}
		ice, ok := q.prep.ices[o]
		if !ok {
			ice = h.cfg.ICE(o.id, o.host)
		}
		id := uint32(0)
		if o == s {
			id = q.id
		}
		o.send(id, protocol.TypeRoomJoined, &protocol.RoomJoined{Room: r.info(), You: o.playerID, Players: r.players(), ICE: ice})
		h.scheduleICELocked(o, ice.TTL)
	}
	h.roomChangedLocked(r)
	s.log().Info("quick play", "room", r.code, "mode", r.mode, "created", created, "party", len(group), "players", len(r.members))
	return reply{}, nil
}

// quickRoomLocked is the room quick play seats group in: of the listed
// (public) rooms of mode that have not started, have no password, ban none
// of the group, admit each by identity (quickFitsIdentityLocked) and have a
// seat for each, the fullest, and of those the oldest. nil: none.
func (h *Hub) quickRoomLocked(mode string, group []*Session) *room {
	var best *room
	for _, r := range h.dir.public { // oldest first
		if r.listing != nil || r.mode != mode || r.started || r.passwordHash != nil || r.maxPlayers-len(r.members) < len(group) {
			continue
		}
		if best != nil && len(r.members) <= len(best.members) {
			continue
		}
		banned := false
		for _, o := range group {
			kicked, _ := r.banned(o)
			banned = banned || kicked
		}
		if !banned && quickFitsIdentityLocked(r, group) {
			best = r
		}
	}
	return best
}

// quickRoomName names a room quick play made, within the hub's room name
// limit.
func quickRoomName(mode string, maxRunes int) string {
	name := "Quick play: " + mode
	for utf8.RuneCountInString(name) > maxRunes {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return strings.TrimSpace(name)
}
