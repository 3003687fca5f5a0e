package signaling

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hostrelay/hostrelay/protocol"
)

// Two seams for a game's backend (issue 27, webhooks): Config.Events hears
// of every room's life, and Config.JoinCheck is asked before a room is
// joined or made. The hub knows nothing of HTTP; package webhook plugs in.

// RoomEventType names what happened to a room.
type RoomEventType string

// The room events, in the order a room lives them. A room's events are
// reported in the order they happened: each is reported under Hub.mu, in the
// same hold that made the change.
const (
	RoomCreated  RoomEventType = "room.created"  // Host (and Session, Player) is its creator
	PlayerJoined RoomEventType = "player.joined" // Session, Player: who joined
	PlayerLeft   RoomEventType = "player.left"   // Session, Player: who left; Reason why
	HostChanged  RoomEventType = "host.changed"  // Host: the new host; Player: the one before
	RoomStarted  RoomEventType = "room.started"  // the host started the game
	RoomClosed   RoomEventType = "room.closed"   // Reason why; every member is out
)

// RoomEvent is one change of a room. Ids are the protocol's: Room is the
// room code, Player a player id within the room (p1, p2...), Session the
// lobby session id (as in TURN usernames; never its token).
type RoomEvent struct {
	Type    RoomEventType
	Room    string
	Session string // the player's session, "" where no one player is concerned
	Player  string
	Host    string // the room's host's player id after the event
	Reason  string // a protocol.Reason* for player.left and room.closed
	Time    time.Time
}

// RoomEvents hears of room events (Config.Events).
type RoomEvents interface {
	// OnRoomEvent is called under Hub.mu, in the order of the events, so
	// per-room order is the lobby's own. It must return at once (queue the
	// event, never do I/O or wait for a lock held across I/O) and must not
	// call the hub: every lobby request waits while it runs.
	OnRoomEvent(e RoomEvent)
}

// JoinRequest is what JoinCheck is asked about.
type JoinRequest struct {
	// Action is "create", "join" or "quickplay" (a room is chosen or made
	// under the lock afterwards, so Room is "").
	Action string
	// Room is the room code joined; for create, the code claimed in a
	// cluster, "" on a single node (drawn when the room is made).
	Room     string
	RoomName string // create: the name asked for
	Session  string
	Name     string // the player's name as it chose it
	// UserID is the verified user id of the session's token (-auth), ""
	// for an unverified player.
	UserID string
}

// JoinChecker decides whether a join or create may go ahead (Config.JoinCheck).
type JoinChecker interface {
	// CheckJoin is called outside Hub.mu, on the requesting connection's
	// own goroutine, before the request takes the lock; the hub checks the
	// room's state again under the lock afterwards (it may have filled or
	// closed meanwhile). nil allows the request; a *JoinRefused refuses it
	// with join_refused and its message; any other error refuses it with
	// unavailable (the checker's own policy decides whether a failure to
	// reach its backend is an error: fail-closed, or nil: fail-open). The
	// checker bounds its own wait: a slow one holds up only this
	// connection's requests, never the lobby's.
	CheckJoin(ctx context.Context, j JoinRequest) error
}

// JoinRefused is a backend's refusal, shown to the player.
type JoinRefused struct{ Message string }

func (e *JoinRefused) Error() string { return "signaling: join refused: " + e.Message }

// MaxRefusalMessage bounds the bytes of a JoinRefused message a client is
// sent; longer is cut at a rune boundary.
const MaxRefusalMessage = 200

// emitLocked reports e to Config.Events, if set.
func (h *Hub) emitLocked(e RoomEvent) {
	if h.cfg.Events == nil {
		return
	}
	e.Time = h.cfg.Now()
	h.cfg.Events.OnRoomEvent(e)
}

// emitMemberLocked reports typ for member s of r.
func (h *Hub) emitMemberLocked(typ RoomEventType, r *room, s *Session, player, reason string) {
	if h.cfg.Events == nil {
		return
	}
	e := RoomEvent{Type: typ, Room: r.code, Session: s.id, Player: player, Reason: reason}
	if r.host != nil {
		e.Host = r.host.playerID
	}
	h.emitLocked(e)
}

// checkJoin asks Config.JoinCheck, if set, outside the lock.
func (h *Hub) checkJoin(s *Session, j JoinRequest) error {
	if h.cfg.JoinCheck == nil {
		return nil
	}
	h.mu.RLock()
	j.Session, j.Name, j.UserID = s.id, s.name, s.identity.UserID
	inRoom := s.room != nil
	h.mu.RUnlock()
	if inRoom {
		return nil // refused under the lock with already_in_room: nothing to ask
	}
	// A link has no context of its own (as FindRoom); the checker bounds
	// its wait.
	err := h.cfg.JoinCheck.CheckJoin(context.Background(), j)
	if err == nil {
		return nil
	}
	var refused *JoinRefused
	if errors.As(err, &refused) {
		msg := refusalMessage(refused.Message)
		s.log().Info("join refused by the join check", "action", j.Action, "room", j.Room, "message", msg)
		return fail(protocol.CodeJoinRefused, msg)
	}
	s.log().Warn("join check failed: refusing", "action", j.Action, "room", j.Room, "err", err)
	return fail(protocol.CodeUnavailable, "the game's backend cannot be reached just now; try again")
}

// refusalMessage is a backend's message as a client may be shown it: one
// line of printable text, at most MaxRefusalMessage bytes.
func refusalMessage(m string) string {
	m = strings.ToValidUTF8(m, "")
	m = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, m)
	m = strings.TrimSpace(m)
	for len(m) > MaxRefusalMessage {
		_, size := utf8.DecodeLastRuneInString(m)
		m = m[:len(m)-size]
	}
	if m == "" {
		return "the game's backend refused this request"
	}
	return m
}
