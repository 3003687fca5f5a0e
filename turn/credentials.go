package turn

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // TURN REST credentials are defined as HMAC-SHA1.
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Credentials are TURN REST credentials for one lobby session, handed to the
// client with the ICE server URL.
type Credentials struct {
	// Username is "<expiry unix seconds>:<session id>".
	Username string
	// Password is base64(HMAC-SHA1(secret, Username)).
	Password string
	// Expires is when the credentials stop being accepted for new allocations.
	Expires time.Time
	// TTL is the lifetime the credentials were issued with; push fresh ones
	// before it runs out.
	TTL time.Duration
}

// maxSessionIDLen keeps usernames well under the 513-byte STUN USERNAME limit.
const maxSessionIDLen = 256

// Credentials issues credentials for sessionID, valid from now for
// Config.CredentialTTL. sessionID must be printable ASCII without spaces and at
// most 256 bytes, or the credentials will never authenticate.
func (s *Server) Credentials(sessionID string, now time.Time) Credentials {
	expires := now.Add(s.cfg.CredentialTTL).Unix()
	username := formatUsername(expires, sessionID)

	return Credentials{
		Username: username,
		Password: restPassword(s.cfg.Secret, username),
		Expires:  time.Unix(expires, 0),
		TTL:      s.cfg.CredentialTTL,
	}
}

// restPassword is pion's longTermCredentials with a []byte secret.
func restPassword(secret []byte, username string) string {
	mac := hmac.New(sha1.New, secret)
	mac.Write([]byte(username))

	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func formatUsername(expires int64, sessionID string) string {
	return strconv.FormatInt(expires, 10) + ":" + sessionID
}

// parseUsername splits a TURN REST username into its expiry and session id.
// It accepts only the canonical form formatUsername produces, so one
// credential has exactly one spelling.
func parseUsername(username string) (expires int64, sessionID string, err error) {
	ts, sessionID, found := strings.Cut(username, ":")
	if !found || !validSessionID(sessionID) || !canonicalDigits(ts) {
		return 0, "", errUsername
	}
	expires, err = strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return 0, "", errUsername
	}

	return expires, sessionID, nil
}

// canonicalDigits accepts decimal digits without sign or leading zero.
func canonicalDigits(s string) bool {
	if s == "" || len(s) > 19 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}

	return true
}

// validSessionID keeps session ids printable so they are safe to log.
func validSessionID(s string) bool {
	if s == "" || len(s) > maxSessionIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}

	return true
}
