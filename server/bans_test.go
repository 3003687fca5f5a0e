package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

const adminBearer = "Bearer " + testAdminToken

// send is do with a JSON body, authenticated.
func (a *adminClient) send(method, path, body string) (int, []byte) {
	a.t.Helper()
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.base+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", adminBearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// ban adds a ban through the API and returns how many sessions it ended.
func (a *adminClient) ban(body string) int {
	a.t.Helper()
	status, out := a.send(http.MethodPost, "/api/v1/admin/bans", body)
	var r struct {
		Ban           adminBan `json:"ban"`
		SessionsEnded int      `json:"sessionsEnded"`
	}
	if status != http.StatusCreated || json.Unmarshal(out, &r) != nil || r.Ban.ID == "" {
		a.t.Fatalf("ban %s: %d %s", body, status, out)
	}
	return r.SessionsEnded
}

func (a *adminClient) bans() []adminBan {
	a.t.Helper()
	status, _, body := a.do(http.MethodGet, "/api/v1/admin/bans", adminBearer)
	var r struct {
		Bans []adminBan `json:"bans"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &r) != nil {
		a.t.Fatalf("bans: %d %s", status, body)
	}
	return r.Bans
}

func (a *adminClient) lift(id string) int {
	a.t.Helper()
	status, _ := a.send(http.MethodDelete, "/api/v1/admin/bans?id="+url.QueryEscape(id), "")
	return status
}

// TestBansAcrossARestart: a network ban added on the admin API ends the
// session it covers at once, refuses the next hello from that network
// (and no other), and holds after the real server restarts on its file;
// lifting it lets the network in.
func TestBansAcrossARestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bans.json")
	s := startServer(t, "-admin-token", testAdminToken, "-bans-file", file)
	a := newAdminClient(t, s, "127.0.0.1")
	banned := dialLobbyFrom(t, s.Addrs().HTTP, "127.0.0.2", "Bob")
	other := dialLobbyFrom(t, s.Addrs().HTTP, "127.0.0.3", "Carol")

	if n := a.ban(`{"ip": "127.0.0.2", "duration": "2h", "reason": "flooding"}`); n != 1 {
		t.Fatalf("ban ended %d sessions, want 1", n)
	}
	var e protocol.Error
	banned.next(protocol.TypeError, &e)
	if e.Code != protocol.CodeBanned || !strings.Contains(e.Message, "your network is banned") || !strings.Contains(e.Message, "flooding") {
		t.Fatalf("told %+v", e)
	}
	if err := banned.closed(); err == nil {
		t.Fatal("the banned connection stayed open")
	}
	if err := other.call(protocol.TypeSetName, &protocol.SetName{Name: "Carol2"}, &protocol.OK{}); err != nil {
		t.Fatalf("another network was hit: %v", err)
	}
	helloBanned(t, s.Addrs().HTTP, "127.0.0.2")

	// Restart on the same file.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, "-admin-token", testAdminToken, "-bans-file", file)
	a = newAdminClient(t, s, "127.0.0.1")
	list := a.bans()
	if len(list) != 1 || list[0].IP != "127.0.0.2/32" || list[0].Reason != "flooding" || list[0].RemainingSeconds < 7100 {
		t.Fatalf("after the restart: %+v", list)
	}
	helloBanned(t, s.Addrs().HTTP, "127.0.0.2")
	dialLobbyFrom(t, s.Addrs().HTTP, "127.0.0.3", "Carol")

	if st := a.lift("ip:127.0.0.2/32"); st != http.StatusOK {
		t.Fatalf("lift: %d", st)
	}
	if st := a.lift("ip:127.0.0.2/32"); st != http.StatusNotFound {
		t.Fatalf("second lift: %d", st)
	}
	dialLobbyFrom(t, s.Addrs().HTTP, "127.0.0.2", "Bob")
}

// helloBanned says hello from from and expects banned.
func helloBanned(t *testing.T, addr, from string) {
	t.Helper()
	conn, resp, err := dialWS(t, addr, from, nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	l := newLobby(t, conn)
	err = l.call(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Bob"}, &protocol.Welcome{})
	if !isCode(err, protocol.CodeBanned) {
		t.Fatalf("hello from %s: %v, want banned", from, err)
	}
}

func TestCorruptBanFileStopsTheStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bans.json")
	if err := os.WriteFile(file, []byte(`{"version":1,"bans":[{"id":"user:a"`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig([]string{"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-bans-file", file}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(t.Context(), cfg, slog.New(slog.NewTextHandler(testLog{t}, nil)))
	if err == nil || !strings.Contains(err.Error(), "corrupt ban file") || !strings.Contains(err.Error(), file) {
		t.Fatalf("New: %v, want a corrupt ban file error naming it", err)
	}
}

func TestAdminBanInput(t *testing.T) {
	s := startServer(t, "-admin-token", testAdminToken, "-bans-max", "2")
	a := newAdminClient(t, s, "127.0.0.1")
	a.refused(http.MethodGet, "/api/v1/admin/bans", "", http.StatusUnauthorized, "unauthenticated")
	a.refused(http.MethodDelete, "/api/v1/admin/bans?id=user:a", "Bearer wrong-wrong-wrong-wrong", http.StatusUnauthorized, "invalid_token")

	for _, tc := range []struct {
		body, code string
		status     int
	}{
		{`{"user": "a", "duration": "1h", "extra": 1}`, "invalid_argument", http.StatusBadRequest},
		{`{"user": "a", "duration": "forever"}`, "invalid_argument", http.StatusBadRequest},
		{`{"user": "a", "duration": "59s"}`, "invalid_argument", http.StatusBadRequest},
		{`{"ip": "10.0.0.0/7", "duration": "1h"}`, "invalid_argument", http.StatusBadRequest},
		{`{"ip": "not-an-ip", "duration": "1h"}`, "invalid_argument", http.StatusBadRequest},
		{`{"user": "a", "ip": "10.0.0.1", "duration": "1h"}`, "invalid_argument", http.StatusBadRequest},
		{`not json`, "invalid_argument", http.StatusBadRequest},
	} {
		status, out := a.send(http.MethodPost, "/api/v1/admin/bans", tc.body)
		var e apiError
		if json.Unmarshal(out, &e) != nil || status != tc.status || e.Error.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.body, status, out, tc.status, tc.code)
		}
	}
	// The body bound, at and past: a reason that pads the body to exactly
	// maxBanBody bytes is read (and refused for its length, a bans rule);
	// one byte more is refused unread.
	pad := func(n int) string {
		head := `{"user": "a", "duration": "1h", "reason": "`
		return head + strings.Repeat("x", n-len(head)-2) + `"}`
	}
	if status, out := a.send(http.MethodPost, "/api/v1/admin/bans", pad(maxBanBody)); status != http.StatusBadRequest ||
		!strings.Contains(string(out), "reason") {
		t.Fatalf("body at the bound: %d %s", status, out)
	}
	if status, out := a.send(http.MethodPost, "/api/v1/admin/bans", pad(maxBanBody+1)); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("body past the bound: %d %s", status, out)
	}
	// -bans-max, at and past.
	a.ban(`{"user": "a", "duration": "1h"}`)
	a.ban(`{"ip": "2001:db8::/32", "duration": "24h", "reason": "abuse"}`)
	if status, out := a.send(http.MethodPost, "/api/v1/admin/bans", `{"user": "c", "duration": "1h"}`); status != http.StatusConflict {
		t.Fatalf("past -bans-max: %d %s", status, out)
	}
	a.refused(http.MethodDelete, "/api/v1/admin/bans?id="+strings.Repeat("x", 257), adminBearer, http.StatusBadRequest, "invalid_argument")
	a.refused(http.MethodDelete, "/api/v1/admin/bans?id=user:nobody", adminBearer, http.StatusNotFound, "ban_not_found")
	if got := len(a.bans()); got != 2 {
		t.Fatalf("%d bans listed", got)
	}
	if st := s.bans.Stats(); st.Users != 1 || st.IPs != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBansAcrossACluster: two nodes on a real NATS server share one ban
// list: a user banned on node A's admin API is refused at node B's hello,
// and a session of that user on node B is ended; lifting it on node B
// lets the user in on A. A third node started afterwards has the ban
// (the bucket, not a node's memory, holds it).
func TestBansAcrossACluster(t *testing.T) {
	nats := startNATS(t)
	authArgs := []string{"-admin-token", testAdminToken, "-auth", "optional", "-auth-hs256-secret", authSecret}
	a := startNode(t, nats, "node-a", "eu", authArgs...)
	b := startNode(t, nats, "node-b", "us", authArgs...)
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "user-bob", "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(authSecret))
	if err != nil {
		t.Fatal(err)
	}

	onB := dialLobbyWith(t, b.Addrs().HTTP, protocol.Hello{Version: protocol.Version, Name: "Bob", Token: tok})
	if n := newAdminClient(t, a, "127.0.0.1").ban(`{"user": "user-bob", "duration": "1h", "reason": "spam"}`); n != 0 {
		t.Fatalf("node A ended %d sessions; Bob is on B", n)
	}
	var e protocol.Error
	onB.next(protocol.TypeError, &e)
	if e.Code != protocol.CodeBanned || !strings.HasSuffix(e.Message, ": spam") {
		t.Fatalf("Bob on B told %+v", e)
	}
	helloAsBanned(t, b.Addrs().HTTP, tok)

	c := startNode(t, nats, "node-c", "ap", authArgs...)
	helloAsBanned(t, c.Addrs().HTTP, tok)
	if list := newAdminClient(t, c, "127.0.0.1").bans(); len(list) != 1 || list[0].User != "user-bob" {
		t.Fatalf("node C lists %+v", list)
	}

	if st := newAdminClient(t, b, "127.0.0.1").lift("user:user-bob"); st != http.StatusOK {
		t.Fatalf("lift on B: %d", st)
	}
	testwait.For(t, "the lift to reach node A", func() bool { return len(a.bans.List()) == 0 })
	dialLobbyWith(t, a.Addrs().HTTP, protocol.Hello{Version: protocol.Version, Name: "Bob", Token: tok})
}

// helloAsBanned says hello with token and expects banned.
func helloAsBanned(t *testing.T, addr, token string) {
	t.Helper()
	conn, resp, err := dialWS(t, addr, "", nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	l := newLobby(t, conn)
	err = l.call(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Bob", Token: token}, &protocol.Welcome{})
	if !isCode(err, protocol.CodeBanned) {
		t.Fatalf("hello: %v, want banned", err)
	}
}

// dialLobbyWith opens a lobby session with hello.
func dialLobbyWith(t *testing.T, addr string, hello protocol.Hello) *lobby {
	t.Helper()
	conn, resp, err := dialWS(t, addr, "", nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	l := newLobby(t, conn)
	if err := l.call(protocol.TypeHello, &hello, &l.welcome); err != nil {
		t.Fatalf("hello: %v", err)
	}
	return l
}
