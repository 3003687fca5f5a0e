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
	refuse := func(reason, session string) ([]byte, bool) {
		s.log.Debug("auth refused", "reason", reason, "session", session, "client", src.String())

		return nil, false
	}
	if realm != s.cfg.Realm {
		return refuse("wrong realm", "")
	}
	expires, session, err := parseUsername(username)
	if err != nil {
		return refuse("malformed username", "")
	}
	now := time.Now()
	if expires > now.Add(s.cfg.MaxTTL).Unix() {
		return refuse("expiry beyond MaxTTL", session)
	}
	if !s.cfg.Sessions.SessionLive(session) {
		return refuse("session not live", session)
	}
	// pion re-authenticates every Refresh, CreatePermission and ChannelBind, so
	// a credential that expires mid-game would kill a working allocation. An
	// expired credential is therefore still good for the allocation it made,
	// from the same client address, while the session is live; it cannot make
	// new allocations.
	if expires < now.Unix() && !s.reg.hasAllocation(src, username) {
		return refuse("expired", session)
	}

	return pionturn.GenerateAuthKey(username, realm, restPassword(s.cfg.Secret, username)), true
}
