package server

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/buildinfo"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/static"
)

const testAdminToken = "admin-token-0123456789abcdef"

// adminClient calls the admin API from a chosen loopback address, so a
// test can be several client networks.
type adminClient struct {
	t    *testing.T
	base string
	http *http.Client
}

func newAdminClient(t *testing.T, s *Server, from string) *adminClient {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &adminClient{t: t, base: "http://" + s.Addrs().HTTP, http: &http.Client{Transport: tr}}
}

// do sends method path with header auth ("" for none) and returns the
// status, the response header and the body.
func (a *adminClient) do(method, path, auth string) (int, http.Header, []byte) {
	a.t.Helper()
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.base+path, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// refused requires status and the JSON error code.
func (a *adminClient) refused(method, path, auth string, status int, code string) http.Header {
	a.t.Helper()
	got, h, body := a.do(method, path, auth)
	var e apiError
	if err := json.Unmarshal(body, &e); err != nil || got != status || e.Error.Code != code || e.Error.Message == "" {
		a.t.Fatalf("%s %s: %d %s, want %d with code %q and a message", method, path, got, body, status, code)
	}
	if !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		a.t.Fatalf("%s %s: content type %q", method, path, h.Get("Content-Type"))
	}
	return h
}

func (a *adminClient) overview() adminOverview {
	a.t.Helper()
	status, h, body := a.do(http.MethodGet, "/api/v1/admin/overview", "Bearer "+testAdminToken)
	if status != http.StatusOK {
		a.t.Fatalf("overview: %d %s", status, body)
	}
	if h.Get("Cache-Control") != "no-store" {
		a.t.Fatalf("overview cacheable: %q", h.Get("Cache-Control"))
	}
	var o adminOverview
	if err := json.Unmarshal(body, &o); err != nil {
		a.t.Fatal(err)
	}
	return o
}

// TestAdminOffWithoutToken: with no -admin-token the page and every API
// route answer 404, whatever the request carries, and the page's file is
// not reachable by its name either.
func TestAdminOffWithoutToken(t *testing.T) {
	s := startServer(t, "-api-keys", testAPIKey)
	a := newAdminClient(t, s, "127.0.0.1")
	for _, auth := range []string{"", "Bearer " + testAdminToken, "Bearer " + testAPIKey} {
		a.refused(http.MethodGet, "/api/v1/admin/overview", auth, http.StatusNotFound, "not_found")
		a.refused(http.MethodDelete, "/api/v1/admin/rooms/ABC2345", auth, http.StatusNotFound, "not_found")
		a.refused(http.MethodGet, "/api/v1/admin", auth, http.StatusNotFound, "not_found")
	}
	for _, path := range []string{"/admin", "/admin.html"} {
		if status, _, body := a.do(http.MethodGet, path, ""); status != http.StatusNotFound {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
	}
	if _, err := LoadConfig([]string{"-admin-token", "short"}, noEnv, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "-admin-token (http.admin_token) (hidden): must be at least 16 bytes") {
		t.Fatalf("a short token: %v", err)
	}
}

// TestAdminRefusals: the API wants the token as a bearer header: none, the
// wrong scheme, a wrong token, an API key (which is for backends, not for
// this), the token in the URL, all refused with 401 and a JSON error, and
// neither token is ever logged. The page itself is a shell that holds no
// data, so it loads without the token (it asks for it).
func TestAdminRefusals(t *testing.T) {
	var logs logBuffer
	s := startServerLogging(t, slog.LevelDebug-8, &logs, "-admin-token", testAdminToken, "-api-keys", testAPIKey)
	a := newAdminClient(t, s, "127.0.0.1")
	wrong := "admin-token-0123456789abcdeX"

	h := a.refused(http.MethodGet, "/api/v1/admin/overview", "", http.StatusUnauthorized, "unauthenticated")
	if h.Get("WWW-Authenticate") == "" {
		t.Fatal("401 without WWW-Authenticate")
	}
	a.refused(http.MethodGet, "/api/v1/admin/overview", "Basic "+testAdminToken, http.StatusUnauthorized, "unauthenticated")
	a.refused(http.MethodGet, "/api/v1/admin/overview", "Bearer ", http.StatusUnauthorized, "unauthenticated")
	a.refused(http.MethodGet, "/api/v1/admin/overview", "Bearer "+wrong, http.StatusUnauthorized, "invalid_token")
	a.refused(http.MethodGet, "/api/v1/admin/overview", "Bearer "+testAPIKey, http.StatusUnauthorized, "invalid_token")
	a.refused(http.MethodGet, "/api/v1/admin/overview?token="+testAdminToken, "", http.StatusUnauthorized, "unauthenticated")
	a.refused(http.MethodDelete, "/api/v1/admin/rooms/ABC2345", "Bearer "+wrong, http.StatusUnauthorized, "invalid_token")
	// The scheme is case-insensitive; the token is not.
	a.overview()
	if status, _, body := a.do(http.MethodGet, "/api/v1/admin/overview", "bearer "+testAdminToken); status != http.StatusOK {
		t.Fatalf("lower-case scheme: %d %s", status, body)
	}
	a.refused(http.MethodGet, "/api/v1/admin/overview", "Bearer "+strings.ToUpper(testAdminToken), http.StatusUnauthorized, "invalid_token")

	status, h, body := a.do(http.MethodGet, "/admin", "")
	if !static.Built() { // go test before the web app is built
		if status != http.StatusServiceUnavailable {
			t.Fatalf("GET /admin without the web app: %d %s", status, body)
		}
	} else if status != http.StatusOK || !bytes.Contains(body, []byte(`src="/assets/admin-`)) || h.Get("X-Robots-Tag") != "noindex" {
		t.Fatalf("GET /admin: %d %s %v", status, body, h)
	}
	if status, _, _ := a.do(http.MethodGet, "/admin.html", ""); status != http.StatusNotFound {
		t.Fatalf("GET /admin.html: %d, want 404: only /admin serves the page", status)
	}

	out := logs.String()
	if !strings.Contains(out, "admin: refused token") {
		t.Fatalf("refusals not logged; is the log captured?\n%s", out)
	}
	for _, secret := range []string{testAdminToken, wrong, strings.ToUpper(testAdminToken), testAPIKey} {
		if strings.Contains(out, secret) {
			t.Fatalf("a token reached the log:\n%s", out)
		}
	}
}

// TestAdminFailureLimit: failures are throttled, not successes (red team,
// issue 24 finding 8: behind a proxy every client shares one address, and
// ten wrong tokens from anyone locked the operator out). Ten wrong tokens
// from one address are each refused 401 (at the limit); past it a wrong
// token is 429 with Retry-After, however many follow; the right token from
// the same address works at once, before and after, and costs nothing.
// Another address has its own budget.
func TestAdminFailureLimit(t *testing.T) {
	s := startServer(t, "-admin-token", testAdminToken)
	a, b := newAdminClient(t, s, "127.0.0.1"), newAdminClient(t, s, "127.0.0.2")
	const path, wrong = "/api/v1/admin/overview", "Bearer admin-token-wrong-wrong-wrong"
	for range 3 * adminFailureBurst {
		a.overview()
	}
	for i := range adminFailureBurst {
		if status, _, body := a.do(http.MethodGet, path, wrong); status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d of %d: %d %s, want 401", i+1, adminFailureBurst, status, body)
		}
	}
	a.overview() // at the limit
	for i := range 3 * adminFailureBurst {
		h := a.refused(http.MethodGet, path, wrong, http.StatusTooManyRequests, "rate_limited")
		if h.Get("Retry-After") == "" {
			t.Fatalf("past the limit, wrong token %d: 429 without Retry-After", i+1)
		}
		a.overview() // a guesser sharing the address does not lock the operator out
	}
	if status, _, body := a.do(http.MethodDelete, "/api/v1/admin/rooms/ABC2345", "Bearer "+testAdminToken); status != http.StatusNotFound {
		t.Fatalf("DELETE with the right token past the limit: %d %s, want 404 (no such room)", status, body)
	}
	b.overview()
	b.refused(http.MethodGet, path, wrong, http.StatusUnauthorized, "invalid_token")
}

// TestAdminBehindProxy: with -trusted-proxies, clients behind the proxy are
// told apart by X-Forwarded-For, so one guesser's budget is its own; the
// right token works from behind the proxy whatever the guesser did.
func TestAdminBehindProxy(t *testing.T) {
	s := startServer(t, "-admin-token", testAdminToken, "-trusted-proxies", "127.0.0.3/32")
	proxy := newAdminClient(t, s, "127.0.0.3")
	const path = "/api/v1/admin/overview"
	via := func(client, token string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, proxy.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := proxy.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range adminFailureBurst {
		if got := via("198.51.100.7", "admin-token-wrong-wrong-wrong"); got != http.StatusUnauthorized {
			t.Fatalf("wrong token %d behind the proxy: %d, want 401", i+1, got)
		}
	}
	if got := via("198.51.100.7", "admin-token-wrong-wrong-wrong"); got != http.StatusTooManyRequests {
		t.Fatalf("past the guesser's limit: %d, want 429", got)
	}
	if got := via("198.51.100.8", "admin-token-wrong-wrong-wrong"); got != http.StatusUnauthorized {
		t.Fatalf("another client behind the proxy: %d, want 401 (a budget of its own)", got)
	}
	for _, client := range []string{"198.51.100.7", "198.51.100.9"} {
		if got := via(client, testAdminToken); got != http.StatusOK {
			t.Fatalf("the right token from %s behind the proxy: %d, want 200", client, got)
		}
	}
}

// TestFailureLimitRefills: on a simulated clock the budget refills at one
// failure per adminFailureEvery, at the limit the next failure is refused
// with the wait until the next one, and IPv6 addresses of one /64 share a
// budget.
func TestFailureLimitRefills(t *testing.T) {
	l := newFailureLimit(adminFailureEvery, adminFailureBurst)
	now := time.Unix(1_700_000_000, 0)
	a := netipMust("2001:db8::1")
	for i := range adminFailureBurst {
		if wait, ok := l.fail(a, now); !ok || wait != 0 {
			t.Fatalf("failure %d refused (wait %v)", i+1, wait)
		}
	}
	if wait, ok := l.fail(netipMust("2001:db8::2"), now); ok || (wait-adminFailureEvery).Abs() > time.Millisecond {
		t.Fatalf("another address of the same /64: %v %v, want refused for %v", ok, wait, adminFailureEvery)
	}
	if _, ok := l.fail(netipMust("2001:db8:0:1::1"), now); !ok {
		t.Fatal("another /64 was refused")
	}
	if wait, ok := l.fail(a, now.Add(adminFailureEvery-time.Second)); ok || (wait-time.Second).Abs() > time.Millisecond {
		t.Fatalf("a second early: %v %v, want refused for 1s", ok, wait)
	}
	// One failure every adminFailureEvery keeps the address at its limit.
	later := now.Add(adminFailureEvery)
	if _, ok := l.fail(a, later); !ok {
		t.Fatal("not refilled after adminFailureEvery")
	}
	if _, ok := l.fail(a, later); ok {
		t.Fatal("two failures for one refill")
	}
}

// TestAdminOverview: with real lobby clients and real TURN allocations the
// overview shows the room (players in order, host, age), every allocation
// under its room and player or outside any room, and the bytes each
// allocation relayed, summed per player and per room, to the byte.
func TestAdminOverview(t *testing.T) {
	s := startServer(t, "-admin-token", testAdminToken)
	a := newAdminClient(t, s, "127.0.0.1")
	o := a.overview()
	if o.Server.Rooms != 0 || len(o.Rooms) != 0 || len(o.Allocations) != 0 || o.Server.Protocol != protocol.Version ||
		o.Server.Version == "" || o.Server.GoVersion == "" || o.Server.StartedAt.IsZero() || o.Server.Now.Before(o.Server.StartedAt) {
		t.Fatalf("empty server: %+v", o)
	}
	if b := buildinfo.Read(); o.Server.Commit != b.Commit || !strings.HasPrefix(o.Server.Version, b.Version) {
		t.Fatalf("admin version %q commit %q, want %q and %q", o.Server.Version, o.Server.Commit, b.Version, b.Commit)
	}

	addr := s.Addrs()
	host := dialLobby(t, addr.HTTP, "Ada")
	rj := host.create("Friday night", 4, "pw")
	mate := dialLobby(t, addr.HTTP, "Bob")
	mj, err := mate.join(rj.Room.Code, "pw")
	if err != nil {
		t.Fatal(err)
	}
	idle := dialLobby(t, addr.HTTP, "Idle") // in the lobby, with TURN credentials from the API
	_, ice, _ := getICE(t, "http://"+addr.HTTP+"/api/v1/ice", http.Header{"Authorization": {"Bearer " + idle.welcome.Token}})
	hostRelay, mateRelay := allocate(t, addr.TURNUDP, rj.ICE), allocate(t, addr.TURNUDP, mj.ICE)
	allocate(t, addr.TURNUDP, iceFromJSON(ice))

	// Both ways through the relay: each packet is counted on its sender.
	sent := map[string]int{}
	for _, p := range []struct {
		from, to net.PacketConn
		who      string
		size, n  int
	}{{hostRelay, mateRelay, "Ada", 600, 5}, {mateRelay, hostRelay, "Bob", 100, 7}} {
		for range p.n {
			if _, err := p.from.WriteTo(bytes.Repeat([]byte("x"), p.size), p.to.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		sent[p.who] = p.size * p.n
	}
	var room adminRoom
	testwait.For(t, "the relayed bytes counted", func() bool {
		o = a.overview()
		if len(o.Rooms) != 1 {
			return false
		}
		room = o.Rooms[0]
		return room.RelayedBytes == uint64(sent["Ada"]+sent["Bob"])
	})
	if room.Code != rj.Room.Code || room.Name != "Friday night" || !room.HasPassword || room.MaxPlayers != 4 ||
		room.Host != rj.You || room.AgeSeconds < 0 || room.CreatedAt.After(o.Server.Now) || room.Allocations != 2 {
		t.Fatalf("room %+v", room)
	}
	if len(room.Players) != 2 {
		t.Fatalf("players %+v", room.Players)
	}
	for i, want := range []struct {
		id, name, session string
		host              bool
	}{{rj.You, "Ada", host.welcome.Session, true}, {mj.You, "Bob", mate.welcome.Session, false}} {
		p := room.Players[i]
		if p.ID != want.id || p.Name != want.name || p.Session != want.session || p.Host != want.host ||
			p.Allocations != 1 || p.RelayedBytes != uint64(sent[want.name]) {
			t.Fatalf("player %d: %+v, want %+v and %d bytes", i, p, want, sent[want.name])
		}
	}
	// The total since start counts a packet when the receiving relay reads it, before pion
	// checks that relay's permissions: every packet sent here counts.
	testwait.For(t, "the total relayed", func() bool {
		o = a.overview()
		return o.Server.RelayedBytesTotal == uint64(sent["Ada"]+sent["Bob"])
	})
	if o.Server.Sessions != 3 || o.Server.Rooms != 1 || o.Server.Players != 2 || o.Server.Allocations != 3 ||
		o.Server.RelayedBytes != room.RelayedBytes || o.Server.TURN.Allocations != 3 || o.Server.Conns["webSockets"] != 3 {
		t.Fatalf("server figures %+v", o.Server)
	}
	rooms := map[string]string{}
	for _, al := range o.Allocations {
		rooms[al.Session] = al.Room + "/" + al.Player
		if al.ID == 0 || al.Transport != "udp" || al.Relay == "" || al.Client == "" || al.CreatedAt.IsZero() {
			t.Fatalf("allocation %+v", al)
		}
	}
	if rooms[host.welcome.Session] != rj.Room.Code+"/"+rj.You || rooms[mate.welcome.Session] != rj.Room.Code+"/"+mj.You ||
		rooms[idle.welcome.Session] != "/" {
		t.Fatalf("allocations by session: %v", rooms)
	}
}

// TestAdminKickAndClose: DELETE on a player removes it (it is told
// operator_kicked and cannot rejoin; the host hears it left), DELETE on the
// room closes it for everyone left (operator_closed); unknown rooms and
// players are 404 with their own codes, and a refused request changes
// nothing.
func TestAdminKickAndClose(t *testing.T) {
	s := startServer(t, "-admin-token", testAdminToken)
	a := newAdminClient(t, s, "127.0.0.1")
	addr := s.Addrs().HTTP
	host := dialLobby(t, addr, "Ada")
	rj := host.create("r", 4, "")
	code := rj.Room.Code
	mate := dialLobby(t, addr, "Bob")
	mj, err := mate.join(code, "")
	if err != nil {
		t.Fatal(err)
	}
	host.next(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	const bearer = "Bearer " + testAdminToken

	a.refused(http.MethodDelete, "/api/v1/admin/rooms/"+code+"/players/"+mj.You, "Bearer nope-nope-nope-nope-nope", http.StatusUnauthorized, "invalid_token")
	a.refused(http.MethodDelete, "/api/v1/admin/rooms/"+code, "", http.StatusUnauthorized, "unauthenticated")
	if o := a.overview(); len(o.Rooms) != 1 || len(o.Rooms[0].Players) != 2 {
		t.Fatalf("a refused request changed something: %+v", o.Rooms)
	}
	a.refused(http.MethodDelete, "/api/v1/admin/rooms/"+code+"/players/p99", bearer, http.StatusNotFound, "player_not_found")
	a.refused(http.MethodDelete, "/api/v1/admin/rooms/NOPE234/players/"+mj.You, bearer, http.StatusNotFound, "room_not_found")

	if status, _, body := a.do(http.MethodDelete, "/api/v1/admin/rooms/"+code+"/players/"+mj.You, bearer); status != http.StatusOK {
		t.Fatalf("kick: %d %s", status, body)
	}
	var rc protocol.RoomClosed
	mate.next(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonOperatorKicked {
		t.Fatalf("kicked player told %+v", rc)
	}
	var pl protocol.PlayerLeft
	host.next(protocol.TypePlayerLeft, &pl)
	if pl.ID != mj.You || pl.Reason != protocol.ReasonOperatorKicked {
		t.Fatalf("host told %+v", pl)
	}
	if _, err := mate.join(code, ""); !isCode(err, protocol.CodeKicked) {
		t.Fatalf("rejoin after the kick: %v, want kicked", err)
	}

	if status, _, body := a.do(http.MethodDelete, "/api/v1/admin/rooms/"+code, bearer); status != http.StatusOK {
		t.Fatalf("close: %d %s", status, body)
	}
	host.next(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonOperatorClosed {
		t.Fatalf("host told %+v", rc)
	}
	if o := a.overview(); len(o.Rooms) != 0 || o.Server.Rooms != 0 || o.Server.Sessions != 2 {
		t.Fatalf("after the close: %+v", o)
	}
	a.refused(http.MethodDelete, "/api/v1/admin/rooms/"+code, bearer, http.StatusNotFound, "room_not_found")
}

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }
