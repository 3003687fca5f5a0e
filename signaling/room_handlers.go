package signaling

import (
	"fmt"
	"strings"

	"github.com/hostrelay/hostrelay/protocol"
)

// Handlers for a room's life after it is made: names, ready state, settings,
// kicks, the start and chat. Host-only requests answer CodeForbidden to
// anyone else, so a modified client gains nothing by sending them.

// roomOfLocked returns the sender's room, or not_in_room.
func (s *Session) roomOfLocked() (*room, error) {
	if s.room == nil {
		return nil, fail(protocol.CodeNotInRoom, "join a room first")
	}
	return s.room, nil
}

// hostRoomLocked returns the room the sender hosts, or why it cannot act as host.
func (s *Session) hostRoomLocked(what string) (*room, error) {
	r, err := s.roomOfLocked()
	if err != nil {
		return nil, err
	}
	if r.host != s {
		return nil, fail(protocol.CodeForbidden, "only the host may "+what)
	}
	return r, nil
}

func (s *Session) handleSetName(env protocol.Envelope) error {
	var m protocol.SetName
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	s.name = strings.TrimSpace(m.Name)
	if r := s.room; r != nil {
		s.displayName = r.uniqueName(s.name, s)
		h.broadcastLocked(r, nil, protocol.TypePlayerUpdated, &protocol.PlayerUpdated{Player: s.player()})
		if r.host == s {
			h.roomChangedLocked(r) // the list shows the host's name
		}
	}
	s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	return nil
}

func (s *Session) handleSetReady(env protocol.Envelope) error {
	var m protocol.SetReady
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := s.roomOfLocked()
	if err != nil {
		return err
	}
	if s.ready != m.Ready {
		s.ready = m.Ready
		h.broadcastLocked(r, nil, protocol.TypePlayerUpdated, &protocol.PlayerUpdated{Player: s.player()})
	}
	s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	return nil
}

func (s *Session) handleUpdateRoom(env protocol.Envelope) error {
	var m protocol.UpdateRoom
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	if err := s.hub.cfg.checkRoomName(m.Name); err != nil {
		return err
	}
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := s.hostRoomLocked("change the room")
	if err != nil {
		return err
	}
	if m.MaxPlayers < len(r.members) {
		return &protocol.ValidationError{Field: "maxPlayers",
			Reason: fmt.Sprintf("is below the %d players already in the room", len(r.members))}
	}
	r.name = strings.TrimSpace(m.Name)
	r.maxPlayers = m.MaxPlayers
	r.public = m.Public
	r.mode = strings.TrimSpace(m.Mode)
	if m.SetPassword {
		r.passwordHash = hashPassword(m.Password)
	}
	s.log.Info("room updated", "room", r.code, "max_players", r.maxPlayers, "public", r.public)
	h.broadcastLocked(r, nil, protocol.TypeRoomUpdated, &protocol.RoomUpdated{Room: r.info()})
	h.roomChangedLocked(r)
	s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	return nil
}

// handleKick removes a player and bans its session and device from the
// room, so that the share link it still has no longer lets it in.
func (s *Session) handleKick(env protocol.Envelope) error {
	var m protocol.Kick
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := s.hostRoomLocked("kick players")
	if err != nil {
		return err
	}
	target := r.member(m.ID)
	if target == nil {
		return fail(protocol.CodePeerNotFound, fmt.Sprintf("no player %.16q in your room", m.ID))
	}
	if target == s {
		return &protocol.ValidationError{Field: "id", Reason: "is you: leave the room instead"}
	}
	r.ban(target)
	r.remove(target)
	target.playerID, target.ready = "", false
	h.setRoomLocked(target, nil)
	target.send(0, protocol.TypeRoomClosed, &protocol.RoomClosed{Reason: protocol.ReasonKicked})
	h.broadcastLocked(r, nil, protocol.TypePlayerLeft, &protocol.PlayerLeft{ID: m.ID, Reason: protocol.ReasonKicked})
	h.roomChangedLocked(r)
	s.log.Info("player kicked", "room", r.code, "player", m.ID, "kicked_session", target.id)
	s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	return nil
}

func (s *Session) handleStartGame(env protocol.Envelope) error {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := s.hostRoomLocked("start the game")
	if err != nil {
		return err
	}
	if r.started {
		return fail(protocol.CodeInvalidArgument, "the game has already started")
	}
	if ok, who := r.allReady(); !ok {
		return fail(protocol.CodeNotReady, who+" is not ready")
	}
	r.started = true
	s.log.Info("game started", "room", r.code, "players", len(r.members))
	h.broadcastLocked(r, nil, protocol.TypeGameStarted, &protocol.GameStarted{Mode: r.mode})
	h.roomChangedLocked(r)
	s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	return nil
}

// handleChat relays one line to the whole room, the sender included, so
// every member sees the same order. The text is passed on as it came (after
// trimming): escaping is the renderer's job, and clients render it as text.
func (s *Session) handleChat(env protocol.Envelope) error {
	var m protocol.Chat
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	if err := s.hub.cfg.checkChat(m.Text); err != nil {
		return err
	}
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	r, err := s.roomOfLocked()
	if err != nil {
		return err
	}
	// After the room check, so a client outside a room learns that first
	// and does not spend its chat budget on lines nobody would get.
	if !s.chat.Allow() {
		return fail(protocol.CodeRateLimited, "too many chat messages; slow down")
	}
	h.broadcastLocked(r, nil, protocol.TypeChatMessage, &protocol.ChatMessage{
		From: s.playerID, Name: s.displayName, Text: strings.TrimSpace(m.Text), At: h.cfg.Now().UnixMilli(),
	})
	s.send(env.ID, protocol.TypeOK, &protocol.OK{})
	return nil
}
