package signaling

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// Handlers for making, joining and leaving rooms and for signalling; dispatch.go
// serves them.

func beforeCreateRoom(s *Session, m *protocol.CreateRoom) (prep, error) {
	h := s.hub
	if err := h.cfg.checkRoomName(m.Name); err != nil {
		return prep{}, err
	}
	h.mu.RLock()
	inParty := s.party != nil
	h.mu.RUnlock()
	// A party lives on this node: its leader's room is made here, whatever
	// region was asked for, rather than move the leader away from it.
	if !inParty {
		if err := h.regionElsewhere(m.Region); err != nil {
			return prep{}, err
		}
	}
	code, err := h.claimCode()
	if err != nil {
		return prep{}, err
	}
	if err := h.checkJoin(s, JoinRequest{Action: "create", Room: code, RoomName: strings.TrimSpace(m.Name)}); err != nil {
		h.releaseCode(code)
		return prep{}, err
	}
	_, host := s.addr()
	return prep{ice: h.cfg.ICE(s.id, host), code: code}, nil
}

func createRoom(q req[protocol.CreateRoom]) (reply, error) {
	s, h, m := q.s, q.h, q.m
	if s.name == "" {
		return reply{}, fail(protocol.CodeNameRequired, "choose a name first (hello.name or setName)")
	}
	if !s.allowCreate(h.cfg.Now()) {
		h.counters.limited(limitRoomsPerSession)
		return reply{}, fail(protocol.CodeRateLimited, "you are creating rooms too fast; wait a minute")
	}
	if m.MembersOnly && s.identity.UserID == "" {
		return reply{}, fail(protocol.CodeMembersOnly, "only a verified player may create a members-only room")
	}
	r, err := h.newRoomLocked(s, q.prep.code, strings.TrimSpace(m.Name), m.MaxPlayers, m.Public, strings.TrimSpace(m.Mode), m.Migrate, hashPassword(m.Password))
	if err != nil {
		return reply{}, err
	}
	r.membersOnly = m.MembersOnly
	h.enterRoomLocked(s, r)
	h.roomChangedLocked(r)
	h.scheduleICELocked(s, q.prep.ice.TTL)
	h.counters.roomsCreated.Add(1)
	s.log().Info("room created", "room", r.code, "max_players", r.maxPlayers, "public", r.public, "migrate", r.migrate)
	return reply{typ: protocol.TypeRoomJoined, body: &protocol.RoomJoined{
		Room: r.info(), You: s.playerID, Players: r.players(), ICE: q.prep.ice,
	}}, nil
}

// newRoomLocked makes a room with host s (not yet entered) and registers
// it, or refuses with server_full at MaxRooms. code is the code claimed in
// the cluster; "" draws one here (a single node).
func (h *Hub) newRoomLocked(s *Session, code, name string, maxPlayers int, public bool, mode string, migrate bool, passwordHash []byte) (*room, error) {
	if len(h.rooms) >= h.cfg.MaxRooms {
		return nil, fail(protocol.CodeServerFull, "this server has reached its room limit; try again later")
	}
	for code == "" {
		c, err := newRoomCode()
		if err != nil {
			return nil, err
		}
		if _, taken := h.rooms[c]; !taken {
			code = c
			break
		}
	}
	h.dir.nextSeq++
	r := &room{
		code:         code,
		seq:          h.dir.nextSeq,
		created:      h.cfg.Now(),
		name:         name,
		maxPlayers:   maxPlayers,
		public:       public,
		mode:         mode,
		migrate:      migrate,
		passwordHash: passwordHash,
		host:         s,
	}
	h.rooms[code] = r
	return r, nil
}

// beforeJoinRoom spends the join budgets and looks the code up (FindRoom),
// outside the lock: the lookup may wait for the cluster directory.
func beforeJoinRoom(s *Session, m *protocol.JoinRoom) (prep, error) {
	p, host, err := findRoomBefore(s, m, &m.Code)
	if err != nil {
		return prep{}, err
	}
	if p.found.Here {
		// Only for a room here: another node's asks its own check.
		if err := s.hub.checkJoin(s, JoinRequest{Action: "join", Room: m.Code}); err != nil {
			return prep{}, err
		}
		p.ice = s.hub.cfg.ICE(s.id, host) // signed only for a room here
	}
	return p, nil
}

// findRoomBefore is the part of a request naming a room code (joinRoom,
// spectate) that runs before the lock: the join budgets, a malformed
// request refused (a failed join), then the lookup, which takes the
// failed-join token up front and gives it back when the room exists.
// Validate normalises *code, so it is read after.
func findRoomBefore(s *Session, m interface{ Validate() error }, code *string) (prep, string, error) {
	p, host, err := spendJoinBudgets(s)
	if err != nil {
		return prep{}, "", err
	}
	h := s.hub
	if err := m.Validate(); err != nil {
		h.spendJoinFailure(p.remote)
		return prep{}, "", err
	}
	// A link has no context of its own; FindRoom bounds its waits.
	if p.found, err = h.FindRoom(context.Background(), p.remote, *code); err != nil {
		return prep{}, "", err
	}
	return p, host, nil
}

// spendJoinBudgets is what a request naming a room or party code spends
// before the lock (joinRoom, joinParty, spectate): refused at once when the
// address's failed-join budget is gone, else a token of its join rate. It
// returns the sender's address and the host it dialled (for ICE URLs).
func spendJoinBudgets(s *Session) (prep, string, error) {
	h := s.hub
	now := h.cfg.Now()
	remote, host := s.addr()
	if !h.joinFailures.allowed(remote, now) {
		h.counters.limited(limitFailedJoinsPerIP)
		return prep{}, "", fail(protocol.CodeRateLimited, "too many failed joins from your network; wait a minute")
	}
	if !h.joins.take(remote, now) {
		h.counters.limited(limitJoinsPerIP)
		return prep{}, "", fail(protocol.CodeRateLimited, "too many joins from your network; wait a minute")
	}
	return prep{remote: remote, now: now}, host, nil
}

func joinRoom(q req[protocol.JoinRoom]) (reply, error) {
	s, h, m := q.s, q.h, q.m
	remote := q.prep.remote
	// The code was looked up before the lock (findRoomBefore), its
	// failed-join token taken first: a guesser whose budget is spent never
	// got this far and learns nothing, not even whether a code exists.
	if s.room != nil {
		return reply{}, fail(protocol.CodeAlreadyInRoom, "leave room "+s.room.code+" first")
	}
	if s.name == "" {
		return reply{}, fail(protocol.CodeNameRequired, "choose a name first (hello.name or setName)")
	}
	r, err := h.foundRoomLocked(remote, m.Code, q.prep.found)
	if err != nil {
		return reply{}, err
	}
	if q.prep.ice.TTL == 0 && len(q.prep.ice.Servers) == 0 {
		// Not here at the lookup, but made here since (a code cannot move,
		// so this is a reuse after another node's room closed).
		q.prep.ice = h.cfg.ICE(s.id, s.host)
	}
	if err := r.refuseBanned(s, m.Code); err != nil {
		return reply{}, err
	}
	if err := checkMembersOnlyLocked(s, r); err != nil {
		return reply{}, err
	}
	if !r.passwordOK(m.Password) {
		h.spendJoinFailure(remote)
		if m.Password == "" {
			return reply{}, fail(protocol.CodeWrongPassword, "room "+m.Code+" needs a password")
		}
		return reply{}, fail(protocol.CodeWrongPassword, "wrong password for room "+m.Code)
	}
	h.replaceSeatLocked(s, r)
	if h.rooms[r.code] != r {
		return reply{}, fail(protocol.CodeRoomNotFound, "room "+m.Code+" closed: its host was your other session")
	}
	if len(r.members) >= r.maxPlayers {
		return reply{}, fail(protocol.CodeRoomFull, fmt.Sprintf("room %s is full (%d of %d)", r.code, len(r.members), r.maxPlayers))
	}
	h.enterRoomLocked(s, r)
	h.roomChangedLocked(r)
	h.scheduleICELocked(s, q.prep.ice.TTL)
	h.counters.joins.Add(1)
	s.log().Info("room joined", "room", r.code, "player", s.playerID, "players", len(r.members))
	// The reply follows under the same lock (serve), so no later event of
	// this room can overtake it.
	h.broadcastLocked(r, s, protocol.TypePlayerJoined, &protocol.PlayerJoined{Player: s.player()})
	return reply{typ: protocol.TypeRoomJoined, body: &protocol.RoomJoined{
		Room: r.info(), You: s.playerID, Players: r.players(), ICE: q.prep.ice,
	}}, nil
}

func leaveRoom(q req[protocol.LeaveRoom]) (reply, error) {
	q.h.leaveLocked(q.s, protocol.ReasonLeft)
	return okReply(), nil
}

// leaveLocked takes s out of its room. When the host leaves, a room made
// with Migrate gets the longest-present connected member as its new host
// (the documented rule); any other room closes, since without its
// authority there is no game to stay in.
func (h *Hub) leaveLocked(s *Session, reason string) {
	r := s.room
	h.setRoomLocked(s, nil)
	player := s.playerID
	s.playerID, s.ready = "", false
	if s.iceTimer != nil {
		s.iceTimer.Stop()
		s.iceTimer = nil
	}
	h.roomChangedLocked(r)
	r.remove(s)
	h.emitMemberLocked(PlayerLeft, r, s, player, reason)
	if r.host != s {
		h.broadcastLocked(r, nil, protocol.TypePlayerLeft, &protocol.PlayerLeft{ID: player, Reason: reason})
		s.log().Info("room left", "room", r.code, "player", player, "reason", reason)
		return
	}
	if next := r.successor(); r.migrate && next != nil {
		r.host = next
		h.emitLocked(RoomEvent{Type: HostChanged, Room: r.code, Session: next.id, Player: player, Host: next.playerID})
		h.broadcastLocked(r, nil, protocol.TypePlayerLeft, &protocol.PlayerLeft{ID: player, Reason: reason})
		h.broadcastLocked(r, nil, protocol.TypeHostChanged, &protocol.HostChanged{Host: next.playerID, Previous: player})
		h.counters.hostMigrations.Add(1)
		s.log().Info("host migrated", "room", r.code, "from", player, "to", next.playerID, "reason", reason)
		return
	}
	h.closeRoomLocked(r, protocol.ReasonHostLeft)
	s.log().Info("room closed", "room", r.code, "reason", protocol.ReasonHostLeft, "players", len(r.members))
}

// closeRoomLocked empties r, telling every member why, and forgets it.
func (h *Hub) closeRoomLocked(r *room, reason string) {
	for _, m := range r.members {
		m.playerID, m.ready = "", false
		h.setRoomLocked(m, nil)
	}
	h.broadcastLocked(r, nil, protocol.TypeRoomClosed, &protocol.RoomClosed{Reason: reason})
	h.endStreamLocked(r, reason)
	delete(h.rooms, r.code)
	h.roomChangedLocked(r) // off the list
	h.emitLocked(RoomEvent{Type: RoomClosed, Room: r.code, Reason: reason})
	h.counters.roomsClosed.Add(1)
}

func beforeSignal(s *Session, m *protocol.Signal) (prep, error) {
	if err := s.hub.cfg.checkSignal(m); err != nil {
		return prep{}, err
	}
	if !s.allowSignal() {
		s.hub.counters.limited(limitSignalsPerSession)
		return prep{}, fail(protocol.CodeRateLimited, "too many signalling messages")
	}
	return prep{}, nil
}

// relaySignal relays SDP and candidates between a client and its room's
// host, and nowhere else: clients never learn about each other's transports.
// A signal sent without an id is not acknowledged (a trickle of candidates
// would double its frames).
func relaySignal(q req[protocol.Signal]) (reply, error) {
	s, r, m := q.s, q.room, q.m
	to := r.member(m.To)
	if to == nil || to == s {
		return reply{}, fail(protocol.CodePeerNotFound, fmt.Sprintf("no player %.16q in your room", m.To))
	}
	if s != r.host && to != r.host {
		return reply{}, fail(protocol.CodeForbidden, "clients may signal only the host")
	}
	m.From = s.playerID // never trust a client's claim of who it is
	to.send(0, protocol.TypeSignal, m)
	if q.id == 0 {
		return reply{}, nil
	}
	return okReply(), nil
}

// foundRoomLocked is the room FindRoom found here, or the reply for a code
// that led elsewhere or nowhere. A room closed since the lookup gave its
// token back is a failed join after all, and spends one now.
func (h *Hub) foundRoomLocked(remote netip.Addr, code string, f Found) (*room, error) {
	if r, ok := h.rooms[code]; ok {
		return r, nil
	}
	if err := elsewhere("room", code, f.Location); err != nil {
		return nil, err
	}
	if f.Here {
		h.spendJoinFailure(remote)
	}
	return nil, fail(protocol.CodeRoomNotFound, "no room with code "+code)
}

// codeLookupGate is what a request that looks up a party code passes
// first, under Hub.mu: the address's failed-join budget must have a token
// left, and a malformed request spends one. The lookup that follows spends
// one for a code that does not exist.
func (h *Hub) codeLookupGate(remote netip.Addr, now time.Time, m interface{ Validate() error }) error {
	if !h.joinFailures.allowed(remote, now) {
		h.counters.limited(limitFailedJoinsPerIP)
		return fail(protocol.CodeRateLimited, "too many failed joins from your network; wait a minute")
	}
	if err := m.Validate(); err != nil {
		h.spendJoinFailure(remote)
		return err
	}
	return nil
}
