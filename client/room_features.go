package client

import (
	"context"

	"github.com/hostrelay/hostrelay/protocol"
)

// The lobby features of a room: ready state, chat, and the host's commands.
// Host-only calls from a client are refused with protocol.CodeForbidden.

// PlayerUpdated: a member's name, ready state or ping changed.
type PlayerUpdated struct{ Player protocol.Player }

// RoomUpdated: the host changed the room's settings.
type RoomUpdated struct{ Room protocol.RoomInfo }

// GameStarted: the host started the game.
type GameStarted struct{ Mode string }

// ChatMessage: a line of room chat. Text is plain text.
type ChatMessage struct{ protocol.ChatMessage }

func (PlayerUpdated) event() {}
func (RoomUpdated) event()   {}
func (GameStarted) event()   {}
func (ChatMessage) event()   {}

// SetReady marks this player ready (or not) for the game to start.
func (r *Room) SetReady(ctx context.Context, ready bool) error {
	return r.lobby.call(ctx, protocol.TypeSetReady, &protocol.SetReady{Ready: ready}, &protocol.OK{})
}

// Chat sends a line of text to the room; it comes back as a ChatMessage event.
func (r *Room) Chat(ctx context.Context, text string) error {
	return r.lobby.call(ctx, protocol.TypeChat, &protocol.Chat{Text: text}, &protocol.OK{})
}

// ReportHostSilent tells the server that the host has sent nothing for a
// while (docs/protocol.md, Frozen hosts): once most of the room reports,
// the server asks the host for a sign of life and replaces it without one.
// At most one report a second counts (rate_limited past it).
func (r *Room) ReportHostSilent(ctx context.Context) error {
	r.mu.Lock()
	host := r.info.Host
	r.mu.Unlock()
	return r.lobby.call(ctx, protocol.TypeHostSilent, &protocol.HostSilent{Host: host}, &protocol.OK{})
}

// Kick removes a player and bans its session and device from the room
// (host only).
func (r *Room) Kick(ctx context.Context, playerID string) error {
	return r.lobby.call(ctx, protocol.TypeKick, &protocol.Kick{ID: playerID}, &protocol.OK{})
}

// KickAndBan removes a player as Kick does and also bans its verified user
// id from the room for the room's life: no session of that user may rejoin
// (protocol.CodeBanned). For an unverified player it is Kick.
func (r *Room) KickAndBan(ctx context.Context, playerID string) error {
	return r.lobby.call(ctx, protocol.TypeKick, &protocol.Kick{ID: playerID, Ban: true}, &protocol.OK{})
}

// StartGame starts the game once every other player is ready (host only).
func (r *Room) StartGame(ctx context.Context) error {
	return r.lobby.call(ctx, protocol.TypeStartGame, &protocol.StartGame{}, &protocol.OK{})
}

// Update replaces the room's settings (host only).
func (r *Room) Update(ctx context.Context, u protocol.UpdateRoom) error {
	return r.lobby.call(ctx, protocol.TypeUpdateRoom, &u, &protocol.OK{})
}

// SetName changes this session's display name, in its room too.
func (l *Lobby) SetName(ctx context.Context, name string) error {
	return l.call(ctx, protocol.TypeSetName, &protocol.SetName{Name: name}, &protocol.OK{})
}

// handleFeature applies the room-feature events; false if typ is not one.
func (r *Room) handleFeature(env protocol.Envelope) bool {
	switch env.Type {
	case protocol.TypePlayerUpdated:
		var m protocol.PlayerUpdated
		if r.decode(env, &m) {
			r.mu.Lock()
			for i, p := range r.players {
				if p.ID == m.Player.ID {
					r.players[i] = m.Player
				}
			}
			r.mu.Unlock()
			r.emit(PlayerUpdated(m))
		}
	case protocol.TypeRoomUpdated:
		var m protocol.RoomUpdated
		if r.decode(env, &m) {
			r.mu.Lock()
			r.info = m.Room
			r.mu.Unlock()
			r.emit(RoomUpdated(m))
		}
	case protocol.TypeGameStarted:
		var m protocol.GameStarted
		if r.decode(env, &m) {
			r.mu.Lock()
			r.info.Started = true
			r.mu.Unlock()
			r.emit(GameStarted(m))
		}
	case protocol.TypeHostChanged:
		var m protocol.HostChanged
		if r.decode(env, &m) {
			r.hostChanged(m)
		}
	case protocol.TypeICERefresh:
		var m protocol.ICERefresh
		if r.decode(env, &m) {
			r.refreshICE(m.ICE)
		}
	case protocol.TypeChatMessage:
		var m protocol.ChatMessage
		if r.decode(env, &m) {
			r.emit(ChatMessage{m})
		}
	default:
		return false
	}
	return true
}

// hostChanged re-forms the star around the new host: a client drops its
// connection to the old host (PlayerLeft already closed it) and offers to the
// new one; the new host waits for offers.
func (r *Room) hostChanged(m protocol.HostChanged) {
	r.mu.Lock()
	r.info.Host = m.Host
	you := r.you
	old := r.peers[m.Previous]
	r.mu.Unlock()
	if old != nil {
		old.close(nil)
	}
	r.emit(HostChanged{Host: m.Host, Previous: m.Previous})
	if m.Host == you {
		return
	}
	p, err := r.newPeer(m.Host)
	if err == nil {
		err = p.offer()
	}
	if err != nil {
		r.log.Warn("cannot connect to the new host", "host", m.Host, "err", err)
		if p != nil {
			p.close(err)
		}
	}
}

// refreshICE keeps the fresh credentials for new peers and hands them to
// the open ones. The embedded TURN keeps serving existing allocations past
// expiry, so open peers need no ICE restart; new allocations (a new peer)
// need the new credentials.
func (r *Room) refreshICE(ice protocol.ICE) {
	r.mu.Lock()
	r.ice = ice
	peers := make([]*peer, 0, len(r.peers))
	for _, p := range r.peers {
		peers = append(peers, p)
	}
	r.mu.Unlock()
	if rewrite := r.lobby.opts.RewriteICE; rewrite != nil {
		ice = rewrite(ice)
	}
	for _, p := range peers {
		if err := p.pc.SetConfiguration(peerConfig(ice)); err != nil {
			r.log.Debug("apply fresh ICE servers", "peer", p.id, "err", err)
		}
	}
}
