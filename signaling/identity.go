package signaling

import (
	"context"
	"errors"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/protocol"
)

// Identity: a hello may carry a token from the game's backend
// (Config.Auth). A verified session shows as Player.Verified with its
// UserID; one user holds one seat per room (a second session of the same
// user replaces the first), and a members-only room admits verified
// sessions only.

// verifyHello checks a hello's token before the hub lock: a JWKS fetch may
// wait up to auth.Config.JWKSTimeout. With auth off the token is ignored.
func (h *Hub) verifyHello(l *link, token string) (auth.Identity, error) {
	v := h.cfg.Auth
	if v == nil || (token == "" && !v.Required()) {
		return auth.Identity{}, nil
	}
	id, err := v.Verify(context.Background(), token)
	if err != nil {
		var e *auth.Error
		if !errors.As(err, &e) {
			return auth.Identity{}, fail(protocol.CodeAuthInvalid, "the token could not be checked")
		}
		// The token itself is a credential: only its fingerprint is logged.
		if token == "" {
			h.log.Debug("hello without a token refused", "remote", l.remote)
		} else {
			h.log.Info("token refused", "remote", l.remote, "cause", string(e.Cause), "token", auth.Fingerprint(token))
		}
		return auth.Identity{}, fail(e.Code, e.Message)
	}
	return id, nil
}

// checkResumeIdentity: a resume that sends a token must name the session's
// own user; one without a token keeps the identity the session has.
func checkResumeIdentity(s *Session, id auth.Identity, sent bool) error {
	if sent && id.UserID != s.identity.UserID {
		return fail(protocol.CodeAuthInvalid, "the token names another user than this seat's")
	}
	return nil
}

// checkMembersOnlyLocked refuses an unverified session a members-only room.
func checkMembersOnlyLocked(s *Session, r *room) error {
	if r.membersOnly && s.identity.UserID == "" {
		return fail(protocol.CodeMembersOnly, "room "+r.code+" admits verified players only: sign in to the game first")
	}
	return nil
}

// replaceSeatLocked takes out of r any other session of s's user before s
// joins: it leaves as if it had left (so a host's room migrates or closes
// by its own rule), and is told its seat was taken.
func (h *Hub) replaceSeatLocked(s *Session, r *room) {
	if s.identity.UserID == "" {
		return
	}
	for _, m := range r.members {
		if m == s || m.identity.UserID != s.identity.UserID {
			continue
		}
		h.leaveLocked(m, protocol.ReasonReplaced)
		m.send(0, protocol.TypeRoomClosed, &protocol.RoomClosed{Reason: protocol.ReasonReplaced})
		m.log().Info("seat replaced", "room", r.code, "by_session", s.id)
		return // one seat per user: there is at most one
	}
}

// quickFitsIdentityLocked: quick play seats group in r only if r admits
// each (members-only) and none of them already holds a seat there under its
// user id (quick play finds another room rather than replace a seat).
func quickFitsIdentityLocked(r *room, group []*Session) bool {
	for _, o := range group {
		if checkMembersOnlyLocked(o, r) != nil {
			return false
		}
		if o.identity.UserID == "" {
			continue
		}
		for _, m := range r.members {
			if m.identity.UserID == o.identity.UserID {
				return false
			}
		}
	}
	return true
}
