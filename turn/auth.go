package turn

import (
	"net"
	"time"

	pionturn "github.com/pion/turn/v4"
)

// authenticate is the pion AuthHandler. pion runs it for Allocate, Refresh,
// CreatePermission and ChannelBind, before it checks MESSAGE-INTEGRITY with the
// key returned here; so every refusal below is reachable without a valid
// password and is logged at debug only.
func (s *Server) authenticate(username, realm string, src net.Addr) ([]byte, bool) {
	key, refusal, session := s.authKey(username, realm, src)
	if refusal != "" {
		s.log.Debug("auth refused", "reason", refusal, "session", session, "client", src.String())

		return nil, false
	}

	return key, true
}

// screenKey is authenticate without the log, for the screen's look at a
// request before pion's (pion's own call logs any refusal).
func (s *Server) screenKey(username, realm string, src net.Addr) ([]byte, bool) {
	key, refusal, _ := s.authKey(username, realm, src)

	return key, refusal == ""
}

// authKey returns the long-term key for username, or why there is none.
func (s *Server) authKey(username, realm string, src net.Addr) (key []byte, refusal, session string) {
	if realm != s.cfg.Realm {
		return nil, "wrong realm", ""
	}
	expires, session, err := parseUsername(username)
	if err != nil {
		return nil, "malformed username", ""
	}
	now := time.Now()
	if expires > now.Add(s.cfg.MaxTTL).Unix() {
		return nil, "expiry beyond MaxTTL", session
	}
	// An ended session's Refreshes, permissions and channel binds fail here,
	// so its allocations cannot be kept alive while the janitor closes them.
	if !s.cfg.Sessions.SessionLive(session) {
		return nil, "session not live", session
	}
	// pion re-authenticates every Refresh, CreatePermission and ChannelBind, so
	// a credential that expires mid-game would kill a working allocation. An
	// expired credential is therefore still good for the allocation it made,
	// from the same client address, while the session is live; it cannot make
	// new allocations.
	if expires < now.Unix() && !s.reg.hasAllocation(src, username) {
		return nil, "expired", session
	}

	return pionturn.GenerateAuthKey(username, realm, restPassword(s.cfg.Secret, username)), "", session
}
