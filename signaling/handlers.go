package signaling

import (
	"fmt"
	"strings"

	"github.com/hostrelay/hostrelay/protocol"
)

// handle dispatches one request. A returned error becomes the Error reply.
func (s *Session) handle(env protocol.Envelope) error {
	switch env.Type {
	case protocol.TypeHello:
		return fail(protocol.CodeInvalidArgument, "hello already sent")
	case protocol.TypeCreateRoom:
		return s.handleCreateRoom(env)
	case protocol.TypeJoinRoom:
		return s.handleJoinRoom(env)
	case protocol.TypeLeaveRoom:
		return s.handleLeaveRoom(env)
	case protocol.TypeSignal:
		return s.handleSignal(env)
	case protocol.TypeSetName:
		return s.handleSetName(env)
	case protocol.TypeSetReady:
		return s.handleSetReady(env)
	case protocol.TypeUpdateRoom:
		return s.handleUpdateRoom(env)
	case protocol.TypeKick:
		return s.handleKick(env)
	case protocol.TypeStartGame:
		return s.handleStartGame(env)
	case protocol.TypeChat:
		return s.handleChat(env)
	case protocol.TypeWatchRooms:
		return s.handleWatchRooms(env)
	case protocol.TypeUnwatchRooms:
		return s.handleUnwatchRooms(env)
	default:
		return fail(protocol.CodeUnknownType, fmt.Sprintf("unknown message type %.32q", env.Type))
	}
}

func (s *Session) handleCreateRoom(env protocol.Envelope) error {
	var m protocol.CreateRoom
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	if err := s.hub.cfg.checkRoomName(m.Name); err != nil {
		return err
	}
	_, host := s.addr()
	ice := s.hub.cfg.ICE(s.id, host)
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.room != nil {
		return fail(protocol.CodeAlreadyInRoom, "leave room "+s.room.code+" first")
	}
	if s.name == "" {
		return fail(protocol.CodeNameRequired, "choose a name first (hello.name or setName)")
	}
	if !s.creates.AllowN(h.cfg.Now(), 1) {
		return fail(protocol.CodeRateLimited, "you are creating rooms too fast; wait a minute")
	}
	if len(h.rooms) >= h.cfg.MaxRooms {
		return fail(protocol.CodeServerFull, "this server has reached its room limit; try again later")
	}
	var code string
	for {
		c, err := newRoomCode()
		if err != nil {
			return err
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
		name:         strings.TrimSpace(m.Name),
		maxPlayers:   m.MaxPlayers,
		public:       m.Public,
		mode:         strings.TrimSpace(m.Mode),
		migrate:      m.Migrate,
		passwordHash: hashPassword(m.Password),
		host:         s,
	}
	h.rooms[code] = r
	h.enterRoomLocked(s, r)
	h.roomChangedLocked(r)
	h.scheduleICELocked(s, ice.TTL)
	s.log.Info("room created", "room", code, "max_players", r.maxPlayers, "public", r.public, "migrate", r.migrate)
	s.send(env.ID, protocol.TypeRoomJoined, &protocol.RoomJoined{
		Room: r.info(), You: s.playerID, Players: r.players(), ICE: ice,
	})
	return nil
}

func (s *Session) handleJoinRoom(env protocol.Envelope) error {
	var m protocol.JoinRoom
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	h := s.hub
	now := h.cfg.Now()
	remote, host := s.addr()
	// Refused early, before any work is spent on a guesser whose budget
	// is gone; the check that counts is repeated under the lock below.
	if !h.joinFailures.allowed(remote, now) {
		return fail(protocol.CodeRateLimited, "too many failed joins from your network; wait a minute")
	}
	if !h.joins.take(remote, now) {
		return fail(protocol.CodeRateLimited, "too many joins from your network; wait a minute")
	}
	ice := h.cfg.ICE(s.id, host)
	h.mu.Lock()
	defer h.mu.Unlock()
	// The failed-join budget is checked before the code is looked up, so a
	// guesser learns nothing once it is spent, not even whether a code
	// exists. Check and spend both run under Hub.mu, which every join
	// holds, so concurrent guesses cannot all pass the check on the last
	// token (48 at once checked up to 48 codes against a budget of 14).
	// Taking a token before the lookup and refunding it on success would
	// refuse honest players joining together from one address.
	if !h.joinFailures.allowed(remote, now) {
		return fail(protocol.CodeRateLimited, "too many failed joins from your network; wait a minute")
	}
	if err := m.Validate(); err != nil {
		h.joinFailures.spend(remote, now)
		return err
	}
	if s.room != nil {
		return fail(protocol.CodeAlreadyInRoom, "leave room "+s.room.code+" first")
	}
	if s.name == "" {
		return fail(protocol.CodeNameRequired, "choose a name first (hello.name or setName)")
	}
	r, ok := h.rooms[m.Code]
	if !ok {
		h.joinFailures.spend(remote, now)
		return fail(protocol.CodeRoomNotFound, "no room with code "+m.Code)
	}
	if r.banned(s) {
		return fail(protocol.CodeKicked, "the host removed you from room "+m.Code)
	}
	if !r.passwordOK(m.Password) {
		h.joinFailures.spend(remote, now)
		if m.Password == "" {
			return fail(protocol.CodeWrongPassword, "room "+m.Code+" needs a password")
		}
		return fail(protocol.CodeWrongPassword, "wrong password for room "+m.Code)
	}
	if len(r.members) >= r.maxPlayers {
		return fail(protocol.CodeRoomFull, fmt.Sprintf("room %s is full (%d of %d)", r.code, len(r.members), r.maxPlayers))
	}
	h.enterRoomLocked(s, r)
	h.roomChangedLocked(r)
	h.scheduleICELocked(s, ice.TTL)
	s.log.Info("room joined", "room", r.code, "player", s.playerID, "players", len(r.members))
	// Under the lock, so no later event of this room can overtake the reply.
	h.broadcastLocked(r, s, protocol.TypePlayerJoined, &protocol.PlayerJoined{Player: s.player()})
	s.send(env.ID, protocol.TypeRoomJoined, &protocol.RoomJoined{
		Room: r.info(), You: s.playerID, Players: r.players(), ICE: ice,
	})
	return nil
}

func (s *Session) handleLeaveRoom(env protocol.Envelope) error {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.room == nil {
		return fail(protocol.CodeNotInRoom, "not in a room")
	}
	h.leaveLocked(s, protocol.ReasonLeft)
	s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	return nil
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
	if r.host != s {
		h.broadcastLocked(r, nil, protocol.TypePlayerLeft, &protocol.PlayerLeft{ID: player, Reason: reason})
		s.log.Info("room left", "room", r.code, "player", player, "reason", reason)
		return
	}
	if next := r.successor(); r.migrate && next != nil {
		r.host = next
		h.broadcastLocked(r, nil, protocol.TypePlayerLeft, &protocol.PlayerLeft{ID: player, Reason: reason})
		h.broadcastLocked(r, nil, protocol.TypeHostChanged, &protocol.HostChanged{Host: next.playerID, Previous: player})
		s.log.Info("host migrated", "room", r.code, "from", player, "to", next.playerID, "reason", reason)
		return
	}
	for _, m := range r.members {
		m.playerID, m.ready = "", false
		h.setRoomLocked(m, nil)
	}
	h.broadcastLocked(r, nil, protocol.TypeRoomClosed, &protocol.RoomClosed{Reason: protocol.ReasonHostLeft})
	delete(h.rooms, r.code)
	h.roomChangedLocked(r) // off the list
	s.log.Info("room closed", "room", r.code, "reason", protocol.ReasonHostLeft, "players", len(r.members))
}

// handleSignal relays SDP and candidates between a client and its room's
// host, and nowhere else: clients never learn about each other's transports.
func (s *Session) handleSignal(env protocol.Envelope) error {
	var m protocol.Signal
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	if err := s.hub.cfg.checkSignal(&m); err != nil {
		return err
	}
	if !s.signals.Allow() {
		return fail(protocol.CodeRateLimited, "too many signalling messages")
	}
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	r := s.room
	if r == nil {
		return fail(protocol.CodeNotInRoom, "join a room before signalling")
	}
	to := r.member(m.To)
	if to == nil || to == s {
		return fail(protocol.CodePeerNotFound, fmt.Sprintf("no player %.16q in your room", m.To))
	}
	if s != r.host && to != r.host {
		return fail(protocol.CodeForbidden, "clients may signal only the host")
	}
	m.From = s.playerID // never trust a client's claim of who it is
	to.send(0, protocol.TypeSignal, &m)
	if env.ID != 0 {
		s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	}
	return nil
}
