package signaling

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/hostrelay/hostrelay/protocol"
)

// maxBansPerRoom bounds the players a room remembers kicking. Past it the
// oldest plain kick is forgotten; a ban (kick with ban) is never forgotten,
// so once all are bans the next ban is refused. A host kicking hundreds of
// players is not a use we serve.
const maxBansPerRoom = 256

// roomBan is one kicked player: its session, device hash ("" if none) and,
// for a kick with ban of a verified player, its user id.
type roomBan struct {
	session, device, user string
	ban                   bool // kick with ban: refused with banned, never forgotten
}

// room is a lobby room. All fields are guarded by Hub.mu.
type room struct {
	code       string
	seq        uint64 // creation order, newest highest: the room list shows newest first
	created    time.Time
	name       string
	maxPlayers int
	public     bool
	mode       string
	started    bool
	migrate    bool // promote a member when the host leaves
	// membersOnly admits verified sessions only (identity.go).
	membersOnly bool
	// passwordHash is nil for rooms without a password. Comparing fixed-size
	// hashes in constant time leaks neither the password nor its length.
	passwordHash []byte
	host         *Session
	members      []*Session // join order, host first
	nextPlayer   int
	// bans holds the kicked players, oldest first. A kick must survive a
	// reload (new session, same device), the session id catches a client
	// that sent no device, and a ban's user id catches the same user on any
	// device.
	bans []roomBan
	// spectators watch without a seat (spectate.go); stream is nil until
	// the host sends a frame or someone watches.
	spectators int
	stream     *stream
	// spectatorsSent is the count the members last heard (roomUpdated or
	// roomJoined); countTimer is armed while a change waits to be sent
	// (spectatorsChangedLocked).
	spectatorsSent int
	countTimer     stopper
	// listing is set on another node's room (Hub.remote): all this node
	// knows of it is what the room list shows.
	listing *protocol.RoomSummary
	// vote is the room's vote on a silent host (hostcheck.go), nil until
	// the first report; prefer, set while a frozen host is replaced, is
	// the successor the vote chose.
	vote   *hostVote
	prefer *Session
}

func hashPassword(p string) []byte {
	if p == "" {
		return nil
	}
	h := sha256.Sum256([]byte(p))
	return h[:]
}

func (r *room) passwordOK(p string) bool {
	if r.passwordHash == nil {
		return true
	}
	h := sha256.Sum256([]byte(p))
	return subtle.ConstantTimeCompare(h[:], r.passwordHash) == 1
}

func (r *room) newPlayerID() string {
	r.nextPlayer++
	return "p" + strconv.Itoa(r.nextPlayer)
}

func (r *room) member(playerID string) *Session {
	for _, m := range r.members {
		if m.playerID == playerID {
			return m
		}
	}
	return nil
}

// successor is who becomes host when the host leaves a migrating room: the
// member a frozen host's vote chose (prefer, hostcheck.go), else the
// longest-present member whose connection is up, or failing that the
// longest-present member (its seat is held; it may come back).
func (r *room) successor() *Session {
	if p := r.prefer; p != nil && !p.away && p.room == r {
		return p
	}
	for _, m := range r.members {
		if !m.away {
			return m
		}
	}
	if len(r.members) > 0 {
		return r.members[0]
	}
	return nil
}

func (r *room) remove(s *Session) {
	for i, m := range r.members {
		if m == s {
			r.members = append(r.members[:i], r.members[i+1:]...)
			return
		}
	}
}

// errRoomBansFull: a ban past maxBansPerRoom when every one held is a ban.
var errRoomBansFull = fmt.Errorf("the room already bans %d players", maxBansPerRoom)

// ban remembers a kicked session and its device, and with ban its user id.
// Past the bound the oldest plain kick is forgotten; a ban that finds none
// to forget is refused (errRoomBansFull) and nothing changes. A plain kick
// that finds none is not remembered: the bans held matter more.
func (r *room) ban(s *Session, ban bool) error {
	b := roomBan{session: s.id, device: s.device, ban: ban}
	if ban {
		b.user = s.identity.UserID
	}
	if len(r.bans) >= maxBansPerRoom {
		i := slices.IndexFunc(r.bans, func(b roomBan) bool { return !b.ban })
		if i < 0 {
			if ban {
				return errRoomBansFull
			}
			return nil
		}
		r.bans = slices.Delete(r.bans, i, i+1)
	}
	r.bans = append(r.bans, b)
	return nil
}

// banned reports whether s was kicked from the room, and whether by a ban.
func (r *room) banned(s *Session) (kicked, ban bool) {
	for _, b := range r.bans {
		if b.session == s.id || (s.device != "" && b.device == s.device) ||
			(b.user != "" && b.user == s.identity.UserID) {
			kicked, ban = true, ban || b.ban
		}
	}
	return kicked, ban
}

// refuseBanned is joinRoom's and spectate's answer to a player the
// room kicked: banned or kicked, nil for anyone else.
func (r *room) refuseBanned(s *Session, code string) error {
	kicked, ban := r.banned(s)
	switch {
	case ban:
		return fail(protocol.CodeBanned, "the host banned you from room "+code+" for as long as it lasts")
	case kicked:
		return fail(protocol.CodeKicked, "the host removed you from room "+code)
	}
	return nil
}

// uniqueName returns name, or name with " (2)", " (3)"... if another member
// already shows it or a look-alike of it (protocol.SameName: case, Cyrillic
// "о" for "o", fullwidth forms), so that players can tell two Adas apart.
// The result stays within MaxPlayerName.
func (r *room) uniqueName(name string, self *Session) string {
	taken := func(n string) bool {
		for _, m := range r.members {
			if m != self && protocol.SameName(m.displayName, n) {
				return true
			}
		}
		return false
	}
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf(" (%d)", i)
		base := name
		for utf8.RuneCountInString(base)+len(suffix) > protocol.MaxPlayerName {
			_, size := utf8.DecodeLastRuneInString(base)
			base = base[:len(base)-size]
		}
		if n := base + suffix; !taken(n) {
			return n
		}
	}
}

// allReady reports whether every member but the host is ready; if not, it
// names one who is not.
func (r *room) allReady() (bool, string) {
	for _, m := range r.members {
		if m != r.host && !m.ready {
			return false, m.displayName
		}
	}
	return true, ""
}

func (r *room) info() protocol.RoomInfo {
	return protocol.RoomInfo{
		Code:        r.code,
		Name:        r.name,
		MaxPlayers:  r.maxPlayers,
		Public:      r.public,
		HasPassword: r.passwordHash != nil,
		Host:        r.host.playerID,
		Mode:        r.mode,
		Started:     r.started,
		Migrate:     r.migrate,
		Spectators:  r.spectators,
		MembersOnly: r.membersOnly,
	}
}

func (r *room) summary() protocol.RoomSummary {
	return protocol.RoomSummary{
		Code:        r.code,
		Name:        r.name,
		Host:        r.host.displayName,
		Players:     len(r.members),
		MaxPlayers:  r.maxPlayers,
		Mode:        r.mode,
		HasPassword: r.passwordHash != nil,
		Started:     r.started,
	}
}

func (r *room) players() []protocol.Player {
	ps := make([]protocol.Player, len(r.members))
	for i, m := range r.members {
		ps[i] = m.player()
	}
	return ps
}
