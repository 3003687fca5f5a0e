package signaling

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// OriginRefusedReason is the close reason a browser page on an origin the
// server does not allow is given. A refused upgrade (HTTP 403) reaches a
// page only as close 1006 with no reason, which tells its player nothing;
// so the upgrade is accepted, nothing is read or sent, and the connection
// is closed at once with 1008 and this, which the SDK shows.
const OriginRefusedReason = "origin not allowed: add it with -allowed-origins"

// originAllowed applies coder/websocket's documented rule for
// AcceptOptions.OriginPatterns: no Origin (not a browser) is allowed, the
// request's own host always is, and otherwise the Origin's host (or
// scheme://host, for a pattern with a scheme) must match a pattern with
// path.Match, case-insensitively. Accept applies the same rule again; this
// copy only decides whether to explain a refusal instead of a 403.
func originAllowed(r *http.Request, patterns []string) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return fmt.Errorf("signaling: Origin %q is not a URL with a host", origin)
	}
	if strings.EqualFold(r.Host, u.Host) {
		return nil
	}
	for _, p := range patterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, err := path.Match(strings.ToLower(p), strings.ToLower(target)); err == nil && ok {
			return nil
		}
	}
	return fmt.Errorf("signaling: Origin %q is not allowed for host %q", u.Host, r.Host)
}
