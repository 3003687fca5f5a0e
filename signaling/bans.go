package signaling

import (
	"net/netip"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// Server-wide bans (Config.Bans, the operator's, package bans): a banned
// network is refused at hello before any session is made, a banned user
// once its token is verified; the sessions a new ban covers are ended
// (DropBanned). Either way the client is told banned, with how long and
// why, and the connection is closed.

// checkBanIP refuses a hello from a banned network: first thing, before the
// token is verified or anything is made.
func (h *Hub) checkBanIP(remote netip.Addr) error {
	if b, ok := h.cfg.Bans.IP(remote); ok {
		return fail(protocol.CodeBanned, b.Message(h.cfg.Now()))
	}
	return nil
}

// checkBansLocked refuses a hello or resume of a banned user or network,
// under Hub.mu: a ban added meanwhile is either seen here or finds the
// session in DropBanned.
func (h *Hub) checkBansLocked(remote netip.Addr, userID string) error {
	if err := h.checkBanIP(remote); err != nil {
		return err
	}
	if b, ok := h.cfg.Bans.User(userID); ok {
		return fail(protocol.CodeBanned, b.Message(h.cfg.Now()))
	}
	return nil
}

// refusedBanned closes a link whose hello a ban refused, once the refusal
// is on its way: there is nothing else it may do here.
func (l *link) refusedBanned(code string) {
	if code == protocol.CodeBanned {
		l.kill(websocket.StatusPolicyViolation, "banned")
	}
}

// DropBanned ends every session that a ban now covers (call it after
// adding one): each is told banned with the ban's message, leaves its room
// as an operator's kick does, and its connection is closed. It returns how
// many were ended.
func (h *Hub) DropBanned() int {
	if h.cfg.Bans == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.sessions {
		err := h.checkBansLocked(s.remote, s.identity.UserID)
		if err == nil {
			continue
		}
		reply := asReply(err)
		s.send(0, protocol.TypeError, &reply)
		if s.room != nil {
			s.send(0, protocol.TypeRoomClosed, &protocol.RoomClosed{Reason: protocol.ReasonOperatorKicked})
		}
		s.outMu.Lock()
		l := s.link
		s.outMu.Unlock()
		h.endLocked(s, protocol.ReasonOperatorKicked)
		if l != nil {
			l.kill(websocket.StatusPolicyViolation, "banned")
		}
		s.log().Info("session ended: banned", "remote", s.remote, "verified", s.identity.UserID != "")
		n++
	}
	return n
}
