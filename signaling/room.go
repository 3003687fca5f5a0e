package signaling

import (
	"crypto/sha256"
	"crypto/subtle"
	"strconv"

	"github.com/hostrelay/hostrelay/protocol"
)

// room is a lobby room. All fields are guarded by Hub.mu.
type room struct {
	code       string
	name       string
	maxPlayers int
	public     bool
	// passwordHash is nil for rooms without a password. Comparing fixed-size
	// hashes in constant time leaks neither the password nor its length.
	passwordHash []byte
	host         *Session
	members      []*Session // join order, host first
	nextPlayer   int
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

func (r *room) remove(s *Session) {
	for i, m := range r.members {
		if m == s {
			r.members = append(r.members[:i], r.members[i+1:]...)
			return
		}
	}
}

func (r *room) info() protocol.RoomInfo {
	return protocol.RoomInfo{
		Code:        r.code,
		Name:        r.name,
		MaxPlayers:  r.maxPlayers,
		Public:      r.public,
		HasPassword: r.passwordHash != nil,
		Host:        r.host.playerID,
	}
}

func (r *room) players() []protocol.Player {
	ps := make([]protocol.Player, len(r.members))
	for i, m := range r.members {
		ps[i] = protocol.Player{ID: m.playerID, Name: m.name}
	}
	return ps
}
