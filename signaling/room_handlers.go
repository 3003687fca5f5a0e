package signaling

import (
	"fmt"
	"strings"

	"github.com/hostrelay/hostrelay/protocol"
)

// Handlers for a room's life after it is made: names, ready state, settings,
// kicks, the start and chat. dispatch.go serves them, and answers anyone
// but the host of a host-only request with forbidden.

func setName(q req[protocol.SetName]) (reply, error) {
	s, h := q.s, q.h
	s.name = strings.TrimSpace(q.m.Name)
	if s.party != nil {
		h.partyChangedLocked(s.party, nil)
	}
	if r := q.room; r != nil {
		s.displayName = r.uniqueName(s.name, s)
		h.broadcastLocked(r, nil, protocol.TypePlayerUpdated, &protocol.PlayerUpdated{Player: s.player()})
		if r.host == s {
			h.roomChangedLocked(r) // the list shows the host's name
		}
	}
	return okReply(), nil
}

func setReady(q req[protocol.SetReady]) (reply, error) {
	s := q.s
	if s.ready != q.m.Ready {
		s.ready = q.m.Ready
		q.h.broadcastLocked(q.room, nil, protocol.TypePlayerUpdated, &protocol.PlayerUpdated{Player: s.player()})
	}
	return okReply(), nil
}

func beforeUpdateRoom(s *Session, m *protocol.UpdateRoom) (prep, error) {
	return prep{}, s.hub.cfg.checkRoomName(m.Name)
}

func updateRoom(q req[protocol.UpdateRoom]) (reply, error) {
	r, m := q.room, q.m
	if m.MaxPlayers < len(r.members) {
		return reply{}, &protocol.ValidationError{Field: "maxPlayers",
			Reason: fmt.Sprintf("is below the %d players already in the room", len(r.members))}
	}
	r.name = strings.TrimSpace(m.Name)
	r.maxPlayers = m.MaxPlayers
	r.public = m.Public
	r.mode = strings.TrimSpace(m.Mode)
	if m.SetPassword {
		r.passwordHash = hashPassword(m.Password)
	}
	q.s.log().Info("room updated", "room", r.code, "max_players", r.maxPlayers, "public", r.public)
	q.h.broadcastRoomInfoLocked(r)
	q.h.roomChangedLocked(r)
	return okReply(), nil
}

// kick removes a player and bans its session and device from the room, so
// that the share link it still has no longer lets it in; with Ban, its
// verified user id too.
func kick(q req[protocol.Kick]) (reply, error) {
	s, h, r, m := q.s, q.h, q.room, q.m
	target := r.member(m.ID)
	if target == nil {
		return reply{}, fail(protocol.CodePeerNotFound, fmt.Sprintf("no player %.16q in your room", m.ID))
	}
	if target == s {
		return reply{}, &protocol.ValidationError{Field: "id", Reason: "is you: leave the room instead"}
	}
	if err := r.ban(target, m.Ban); err != nil {
		return reply{}, fail(protocol.CodeInvalidArgument, err.Error()+": a ban past that is refused (a plain kick still works)")
	}
	r.remove(target)
	h.emitMemberLocked(PlayerLeft, r, target, m.ID, protocol.ReasonKicked)
	target.playerID, target.ready = "", false
	h.setRoomLocked(target, nil)
	target.send(0, protocol.TypeRoomClosed, &protocol.RoomClosed{Reason: protocol.ReasonKicked})
	h.broadcastLocked(r, nil, protocol.TypePlayerLeft, &protocol.PlayerLeft{ID: m.ID, Reason: protocol.ReasonKicked})
	h.roomChangedLocked(r)
	s.log().Info("player kicked", "room", r.code, "player", m.ID, "kicked_session", target.id, "ban", m.Ban,
		"verified", target.identity.UserID != "")
	return okReply(), nil
}

func startGame(q req[protocol.StartGame]) (reply, error) {
	r := q.room
	if r.started {
		return reply{}, fail(protocol.CodeInvalidArgument, "the game has already started")
	}
	if ok, who := r.allReady(); !ok {
		return reply{}, fail(protocol.CodeNotReady, who+" is not ready")
	}
	r.started = true
	q.h.emitMemberLocked(RoomStarted, r, q.s, q.s.playerID, "")
	q.s.log().Info("game started", "room", r.code, "players", len(r.members))
	q.h.broadcastLocked(r, nil, protocol.TypeGameStarted, &protocol.GameStarted{Mode: r.mode})
	q.h.roomChangedLocked(r)
	return okReply(), nil
}

func beforeChat(s *Session, m *protocol.Chat) (prep, error) {
	return prep{}, s.hub.cfg.checkChat(m.Text)
}

// chat relays one line to the whole room, the sender included, so every
// member sees the same order. The text is passed on as it came (after
// trimming): escaping is the renderer's job, and clients render it as text.
func chat(q req[protocol.Chat]) (reply, error) {
	s, h := q.s, q.h
	// After the room check, so a client outside a room learns that first
	// and does not spend its chat budget on lines nobody would get.
	if !s.allowChat() {
		h.counters.limited(limitChatPerSession)
		return reply{}, fail(protocol.CodeRateLimited, "too many chat messages; slow down")
	}
	h.broadcastLocked(q.room, nil, protocol.TypeChatMessage, &protocol.ChatMessage{
		From: s.playerID, Name: s.displayName, Text: strings.TrimSpace(q.m.Text), At: h.cfg.Now().UnixMilli(),
	})
	return okReply(), nil
}
