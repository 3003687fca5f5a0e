package turn

import (
	"net"
	"time"

	pionturn "github.com/pion/turn/v4"
)

// authRefusal is why a TURN credential was refused. Its String is the log's
// wording; its label names it in Stats.AuthFailures, from a fixed set so a
// client's username can never become a metric label.
type authRefusal uint8

const (
	authOK authRefusal = iota
	authWrongRealm
	authMalformed
	authTooFar
	authNotLive
	authExpired
	// authBadIntegrity is a wrong password (or a tampered request): pion
	// checks MESSAGE-INTEGRITY after the AuthHandler, and reports it to
	// OnAuth.
	authBadIntegrity
	authRefusals // how many there are
)

// authRefusalNames holds each refusal's log text and metric label.
var authRefusalNames = [authRefusals]struct{ text, label string }{ //nolint:gochecknoglobals // a read-only table
	authOK:           {"", ""},
	authWrongRealm:   {"wrong realm", "wrong_realm"},
	authMalformed:    {"malformed username", "malformed_username"},
	authTooFar:       {"expiry beyond MaxTTL", "expiry_too_far"},
	authNotLive:      {"session not live", "session_not_live"},
	authExpired:      {"expired", "expired"},
	authBadIntegrity: {"message integrity", "bad_integrity"},
}

func (a authRefusal) String() string { return authRefusalNames[a].text }

// authenticate is the pion AuthHandler. pion runs it for Allocate, Refresh,
// CreatePermission and ChannelBind, before it checks MESSAGE-INTEGRITY with the
// key returned here; so every refusal below is reachable without a valid
// password and is logged at debug only. Refusals are counted here and not in
// quietAuthKey, which looks at the same requests first.
func (s *Server) authenticate(username, realm string, src net.Addr) ([]byte, bool) {
	key, refusal, session := s.authKey(username, realm, src)
	if refusal != authOK {
		s.allocs.stats.authFailures[refusal].Add(1)
		s.log.Debug("auth refused", "reason", refusal.String(), "session", session, "client", src.String())

		return nil, false
	}

	return key, true
}

// quietAuthKey is authenticate without the log, for the rewriter's look at a
// request before pion's (pion's own call logs any refusal).
func (s *Server) quietAuthKey(username, realm string, src net.Addr) ([]byte, bool) {
	key, refusal, _ := s.authKey(username, realm, src)

	return key, refusal == authOK
}

// authKey returns the long-term key for username, or why there is none.
func (s *Server) authKey(username, realm string, src net.Addr) (key []byte, refusal authRefusal, session string) {
	if realm != s.cfg.Realm {
		return nil, authWrongRealm, ""
	}
	expires, session, err := parseUsername(username)
	if err != nil {
		return nil, authMalformed, ""
	}
	now := time.Now()
	if expires > now.Add(s.cfg.MaxTTL).Unix() {
		return nil, authTooFar, session
	}
	// An ended session's Refreshes, permissions and channel binds fail here,
	// so its allocations cannot be kept alive while the janitor closes them.
	if !s.cfg.Sessions.SessionLive(session) {
		return nil, authNotLive, session
	}
	// pion re-authenticates every Refresh, CreatePermission and ChannelBind, so
	// a credential that expires mid-game would kill a working allocation. An
	// expired credential is therefore still good for the allocation it made,
	// from the same client address, while the session is live; it cannot make
	// new allocations.
	if expires < now.Unix() && !s.allocs.hasAllocation(src, username) {
		return nil, authExpired, session
	}

	return pionturn.GenerateAuthKey(username, realm, restPassword(s.cfg.Secret, username)), authOK, session
}
