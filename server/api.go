package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// apiError is the JSON body of every /api/v1 failure, so programs can switch
// on a stable code as they do with lobby errors.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func apiFail(c echo.Context, status int, code, msg string) error {
	var e apiError
	e.Error.Code, e.Error.Message = code, msg
	if status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="hostrelay"`)
	}
	return c.JSON(status, e)
}

// iceResponse has the shape of RTCConfiguration.iceServers plus the lifetime.
type iceResponse struct {
	ICEServers []iceServerJSON `json:"iceServers"`
	TTL        int             `json:"ttl"`
	ExpiresAt  time.Time       `json:"expiresAt"`
}

type iceServerJSON struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username"`
	Credential string   `json:"credential"`
}

// apiKeys holds operator keys as hashes: comparing fixed-size hashes in
// constant time leaks neither a key nor its length.
type apiKeys [][sha256.Size]byte

func newAPIKeys(keys []string) apiKeys {
	out := make(apiKeys, len(keys))
	for i, k := range keys {
		out[i] = sha256.Sum256([]byte(k))
	}
	return out
}

func (k apiKeys) valid(key string) bool {
	h := sha256.Sum256([]byte(key))
	ok := 0
	for _, want := range k { // no early exit: time does not depend on which key matched
		ok |= subtle.ConstantTimeCompare(h[:], want[:])
	}
	return ok == 1
}

// handleICE issues TURN credentials to a program. Two ways in:
//   - Authorization: Bearer <token from Welcome>: credentials for that session.
//   - X-API-Key: <operator key> and ?session=<id>: a trusted backend asks on
//     behalf of a live session.
//
// Either way the credentials are bound to a connected lobby session, so TURN
// refuses them once it ends.
func (s *Server) handleICE(c echo.Context) error {
	var session string
	auth := c.Request().Header.Get("Authorization")
	key := c.Request().Header.Get("X-API-Key")
	switch {
	case key != "":
		if len(s.apiKeys) == 0 || !s.apiKeys.valid(key) {
			s.log.Info("api: refused API key", "component", "server", "remote", c.RealIP())
			return apiFail(c, http.StatusUnauthorized, "invalid_api_key", "the API key is not valid")
		}
		session = c.QueryParam("session")
		if session == "" {
			return apiFail(c, http.StatusBadRequest, "invalid_argument", "an API key request must name a lobby session: ?session=<id>")
		}
		if !s.hub.SessionLive(session) {
			return apiFail(c, http.StatusForbidden, "session_closed", "lobby session "+session+" is not connected")
		}
	case strings.HasPrefix(auth, "Bearer "):
		id, ok := s.hub.SessionByToken(strings.TrimPrefix(auth, "Bearer "))
		if !ok {
			return apiFail(c, http.StatusUnauthorized, "invalid_token",
				"unknown session token, or its lobby session has ended: reconnect to the lobby for a new one")
		}
		session = id
	default:
		return apiFail(c, http.StatusUnauthorized, "unauthenticated",
			"send Authorization: Bearer <token from the lobby welcome> or X-API-Key")
	}
	ice := s.iceFor(session, c.Request().Host)
	resp := iceResponse{TTL: ice.TTL, ExpiresAt: time.Now().Add(time.Duration(ice.TTL) * time.Second).UTC().Truncate(time.Second)}
	for _, sv := range ice.Servers {
		resp.ICEServers = append(resp.ICEServers, iceServerJSON{URLs: sv.URLs, Username: sv.Username, Credential: sv.Credential})
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, resp)
}

// hostOnly strips the port from a Host header value, keeping IPv6 literals
// bare so net.JoinHostPort can bracket them again.
func hostOnly(hostport string) string {
	if ap, err := netip.ParseAddrPort(hostport); err == nil {
		return ap.Addr().String()
	}
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}
