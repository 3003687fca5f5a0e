package signaling

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// The operator's view of the lobby and the two things an operator may do to
// it (the admin page, server/admin.go): close a room, remove a player.

var (
	// ErrRoomNotFound reports an operator action on a room that is not here.
	ErrRoomNotFound = errors.New("signaling: no such room")
	// ErrPlayerNotFound reports an operator action on a player not in the room.
	ErrPlayerNotFound = errors.New("signaling: no such player in the room")
)

// RoomView is a room as the operator sees it, password aside.
type RoomView struct {
	Code        string
	Name        string
	Created     time.Time
	Public      bool
	HasPassword bool
	Started     bool
	Migrate     bool
	Mode        string
	MaxPlayers  int
	Host        string // the host's player id
	Players     []PlayerView
}

// PlayerView is a member of a room, in join order (the host first until it
// migrates).
type PlayerView struct {
	ID      string // player id in the room
	Session string // lobby session id, what TURN credentials name
	Name    string
	Ready   bool
	Away    bool // connection lost, seat held
	PingMs  int  // 0: not measured yet
}

// Rooms returns every room, newest first.
func (h *Hub) Rooms() []RoomView {
	h.mu.RLock()
	defer h.mu.RUnlock()
	rooms := slices.Collect(maps.Values(h.rooms))
	// By creation order rather than time: two rooms made in one clock tick
	// keep their order from poll to poll.
	slices.SortFunc(rooms, func(a, b *room) int { return cmp.Compare(b.seq, a.seq) })
	out := make([]RoomView, len(rooms))
	for i, r := range rooms {
		v := RoomView{
			Code: r.code, Name: r.name, Created: r.created, Public: r.public, HasPassword: r.passwordHash != nil,
			Started: r.started, Migrate: r.migrate, Mode: r.mode, MaxPlayers: r.maxPlayers, Host: r.host.playerID,
			Players: make([]PlayerView, len(r.members)),
		}
		for j, m := range r.members {
			v.Players[j] = PlayerView{ID: m.playerID, Session: m.id, Name: m.displayName, Ready: m.ready,
				Away: m.away, PingMs: m.pingMs}
		}
		out[i] = v
	}
	return out
}

// CloseRoom closes a room for everyone in it: each member gets
// RoomClosed{ReasonOperatorClosed} and is in no room any more.
func (h *Hub) CloseRoom(code string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.rooms[code]
	if !ok {
		return ErrRoomNotFound
	}
	players := len(r.members)
	h.closeRoomLocked(r, protocol.ReasonOperatorClosed)
	h.log.Info("room closed by the operator", "room", code, "players", players)
	return nil
}

// KickPlayer removes a player from a room as a host's kick does, banning
// its session and device from the room: it gets
// RoomClosed{ReasonOperatorKicked}, the others PlayerLeft with that reason.
// Removing the host hands the room on (Migrate) or closes it, as the host
// leaving does.
func (h *Hub) KickPlayer(code, playerID string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.rooms[code]
	if !ok {
		return ErrRoomNotFound
	}
	target := r.member(playerID)
	if target == nil {
		return ErrPlayerNotFound
	}
	_ = r.ban(target, false) // a plain kick is never refused
	// Told before it leaves, while it still is the member the frame is about.
	target.send(0, protocol.TypeRoomClosed, &protocol.RoomClosed{Reason: protocol.ReasonOperatorKicked})
	h.leaveLocked(target, protocol.ReasonOperatorKicked)
	h.log.Info("player kicked by the operator", "room", code, "player", playerID, "session", target.id)
	return nil
}
