package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pion/stun/v3"

	"github.com/hostrelay/hostrelay/internal/buildinfo"
	"github.com/hostrelay/hostrelay/internal/leakcheck"
	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/internal/stunprobe"
	"github.com/hostrelay/hostrelay/internal/testcert"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

// startServer runs the whole server in-process on loopback ports chosen by
// the kernel.
func startServer(t *testing.T, extraArgs ...string) *Server {
	t.Helper()
	return startServerLogging(t, slog.LevelInfo, testLog{t}, extraArgs...)
}

// startServerLogging is startServer with its log, from level up, written
// to w.
func startServerLogging(t *testing.T, level slog.Level, w io.Writer, extraArgs ...string) *Server {
	t.Helper()
	return startServerWith(t, level, w, nil, extraArgs...)
}

// startServerWith is startServerLogging with the loaded config changed by
// mutate (nil: as loaded) before the server starts, for what has no flag
// (the lobby's clock).
func startServerWith(t *testing.T, level slog.Level, w io.Writer, mutate func(*Config), extraArgs ...string) *Server {
	t.Helper()
	cfg, err := LoadConfig(append([]string{
		"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-public-ip", "127.0.0.1", "-turn-secret", "0123456789abcdef0123456789abcdef",
	}, extraArgs...), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(&cfg)
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	s, err := New(t.Context(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// TestNewFailureClosesWhatItOpened: New failing at its last listener (the
// metrics port is taken) leaves nothing it had started running: TURN (UDP,
// TCP and TLS), the debug listener, the HTTP listener and the HTTPS redirect.
func TestNewFailureClosesWhatItOpened(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	certs := testcert.New(t)
	cfg, err := LoadConfig([]string{
		"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0", "-turn-tls", "127.0.0.1:0",
		"-turn-secret", "0123456789abcdef0123456789abcdef", "-tls-cert", certs.CertFile, "-tls-key", certs.KeyFile,
		"-http-redirect", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0", "-metrics-addr", taken.Addr().String(),
	}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		_ = s.Shutdown(t.Context())
		t.Fatal("New succeeded with the metrics port taken")
	}
	ours := func(stack string) bool { return strings.Contains(stack, "github.com/hostrelay/hostrelay/") }
	if left := leakcheck.Wait(testwait.Within, ours); len(left) > 0 {
		t.Fatalf("New failed (%v) and left %d goroutines of ours running; the first:\n%s", err, len(left), left[0])
	}
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestLobbyEndToEnd(t *testing.T) {
	s := startServer(t)
	addr := s.Addrs().HTTP

	host := dialLobby(t, addr, "Ada")
	rj := host.create("Friday", 3, "hunter2")
	if rj.Room.Host != rj.You {
		t.Fatalf("creator is not host: %+v", rj)
	}
	ice := rj.ICE.Servers[0]
	if len(ice.URLs) != 2 || !strings.HasPrefix(ice.URLs[0], "turn:127.0.0.1:") || ice.Username == "" || ice.Credential == "" || rj.ICE.TTL <= 0 {
		t.Fatalf("ICE = %+v", rj.ICE)
	}

	eve := dialLobby(t, addr, "Eve")
	if _, err := eve.join(rj.Room.Code, "wrong"); !isCode(err, protocol.CodeWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := eve.join("2345678", ""); !isCode(err, protocol.CodeRoomNotFound) {
		t.Fatalf("unknown code: %v", err)
	}

	bob := dialLobby(t, addr, "Bob")
	brj, err := bob.join(rj.Room.Code, "hunter2")
	if err != nil {
		t.Fatal(err)
	}
	var pj protocol.PlayerJoined
	host.next(protocol.TypePlayerJoined, &pj)
	cat := dialLobby(t, addr, "Cat")
	if _, err := cat.join(rj.Room.Code, "hunter2"); err != nil {
		t.Fatal(err)
	}
	host.next(protocol.TypePlayerJoined, &pj)
	bob.next(protocol.TypePlayerJoined, &pj)
	if _, err := eve.join(rj.Room.Code, "hunter2"); !isCode(err, protocol.CodeRoomFull) {
		t.Fatalf("full room: %v", err)
	}

	if err := bob.call(protocol.TypeLeaveRoom, nil, &protocol.OK{}); err != nil {
		t.Fatal(err)
	}
	var pl protocol.PlayerLeft
	host.next(protocol.TypePlayerLeft, &pl)
	cat.next(protocol.TypePlayerLeft, &pl)
	if pl.ID != brj.You || pl.Reason != protocol.ReasonLeft {
		t.Fatalf("PlayerLeft %+v", pl)
	}

	host.WS().Close(websocket.StatusNormalClosure, "bye")
	var rc protocol.RoomClosed
	cat.next(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonHostLeft {
		t.Fatalf("RoomClosed %+v", rc)
	}
}

func isCode(err error, code string) bool {
	var re lobbytest.ReplyError
	return errors.As(err, &re) && re.Code == code
}

func TestHealthAndPages(t *testing.T) {
	s := startServer(t)
	base := "http://" + s.Addrs().HTTP
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Status  string `json:"status"`
		Version string `json:"version"`
		Commit  string `json:"commit"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || h.Status != "ok" || resp.StatusCode != 200 {
		t.Fatalf("healthz: %d %+v %v", resp.StatusCode, h, err)
	}
	resp.Body.Close()
	// The build's version and commit (a test binary has neither from the
	// linker; server/cmd/hostrelay's test builds one that has).
	if b := buildinfo.Read(); h.Version != b.Version || h.Commit != b.Commit || h.Version == "" || h.Version == "(devel)" {
		t.Fatalf("healthz version %q commit %q, want %q %q", h.Version, h.Commit, b.Version, b.Commit)
	}

	for _, path := range []string{"/", "/r/ABC2345"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// Whether or not the web app was built into this test binary, the
		// page routes answer: the app, or a message saying how to build it.
		switch resp.StatusCode {
		case http.StatusOK:
			if !strings.Contains(string(body), "<html") && !strings.Contains(string(body), "<!doctype") && !strings.Contains(string(body), "<!DOCTYPE") {
				t.Fatalf("%s: not HTML: %.200s", path, body)
			}
		case http.StatusServiceUnavailable:
			if !strings.Contains(string(body), "make run") {
				t.Fatalf("%s: unhelpful message %q", path, body)
			}
		default:
			t.Fatalf("%s: status %d", path, resp.StatusCode)
		}
		if resp.Header.Get("Content-Security-Policy") == "" {
			t.Fatalf("%s: no CSP", path)
		}
	}
	resp, err = http.Get(base + "/no/such/file.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("missing file: %d", resp.StatusCode)
	}
}

// TestForgedForwardedForIgnored: with no trusted proxy, X-Forwarded-For must
// not change which IP the join rate limit charges.
func TestForgedForwardedForIgnored(t *testing.T) {
	s := startServer(t)
	addr := s.Addrs().HTTP
	for i := 0; i < 10; i++ {
		conn, _, err := dialWS(t, addr, "", http.Header{"X-Forwarded-For": {"198.51.100." + string(rune('1'+i))}})
		if err != nil {
			t.Fatal(err)
		}
		l := newLobby(t, conn)
		if err := l.call(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "M"}, &protocol.Welcome{}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.join("2345678", ""); !isCode(err, protocol.CodeRoomNotFound) {
			t.Fatalf("attempt %d: %v", i, err)
		}
		l.CloseNow()
	}
	l := dialLobby(t, addr, "M")
	if _, err := l.join("2345678", ""); !isCode(err, protocol.CodeRateLimited) {
		t.Fatalf("11th failed join from one IP with forged XFF: %v, want rate_limited", err)
	}
}

// TestTrustedProxyForwardedFor: with -trusted-proxies, a connection from a
// trusted proxy is charged to the right-most X-Forwarded-For entry that is
// not itself a trusted proxy, so what a client writes in front of that (the
// proxy appends the real address after it) is not believed; from any other
// peer the header is ignored. The per-IP connection limit shows which
// address each connection was charged to.
func TestTrustedProxyForwardedFor(t *testing.T) {
	const proxy, direct = "127.0.0.2", "127.0.0.1" // both reach a loopback server
	s := startServer(t, "-trusted-proxies", proxy+"/32", "-max-conns-per-ip", "2")
	addr := s.Addrs().HTTP
	// open upgrades from `from` with X-Forwarded-For xff and returns the
	// status; an accepted connection stays open until the test ends.
	open := func(from, xff string) int {
		t.Helper()
		conn, resp, err := dialWS(t, addr, from, http.Header{"X-Forwarded-For": {xff}})
		if err == nil {
			t.Cleanup(func() { conn.CloseNow() })
			return http.StatusSwitchingProtocols
		}
		if resp == nil {
			t.Fatalf("dial from %s, XFF %q: %v", from, xff, err)
		}
		return resp.StatusCode
	}
	for i, step := range []struct {
		why       string
		from, xff string
		want      int
	}{
		{"client behind the proxy, 1 of 2", proxy, "203.0.113.5", 101},
		{"client behind the proxy, 2 of 2", proxy, "203.0.113.5", 101},
		{"client behind the proxy, past its limit", proxy, "203.0.113.5", 429},
		{"the same client with a forged entry in front", proxy, "198.51.100.9, 203.0.113.5", 429},
		{"another client behind the proxy (the proxy is not charged)", proxy, "203.0.113.6", 101},
		{"a trusted hop is skipped: still 203.0.113.6, 2 of 2", proxy, "198.51.100.9, 203.0.113.6, " + proxy, 101},
		{"a trusted hop is skipped: 203.0.113.6 past its limit", proxy, "198.51.100.10, 203.0.113.6, " + proxy, 429},
		{"untrusted peer: charged to the peer, 1 of 2", direct, "203.0.113.7", 101},
		{"untrusted peer: charged to the peer, 2 of 2", direct, "203.0.113.8", 101},
		{"untrusted peer past its limit, whatever it claims", direct, "203.0.113.9", 429},
	} {
		if got := open(step.from, step.xff); got != step.want {
			t.Fatalf("step %d (%s): from %s, X-Forwarded-For %q: status %d, want %d",
				i, step.why, step.from, step.xff, got, step.want)
		}
	}
}

func TestConfigLayers(t *testing.T) {
	env := map[string]string{"HOSTRELAY_HTTP": "127.0.0.1:9000", "HOSTRELAY_LOG_LEVEL": "debug", "HOSTRELAY_TURN_SECRET": "env-secret-at-least-16"}
	cfg, err := LoadConfig([]string{"-http", "127.0.0.1:9001"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Addr != "127.0.0.1:9001" || cfg.Log.Level != slog.LevelDebug || string(cfg.TURN.Secret) != "env-secret-at-least-16" {
		t.Fatalf("layering wrong: %+v", cfg)
	}
	cfg, err = LoadConfig(nil, func(string) string { return "" }, io.Discard)
	// No secret given: New makes one up (TestGeneratedSecret).
	if err != nil || len(cfg.TURN.Secret) != 0 || cfg.HTTP.Addr != ":8080" || cfg.TURN.UDPAddr != ":3478" {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	for _, bad := range [][]string{
		{"-turn-secret", "short"},
		{"-public-ip", "0.0.0.0"},
		{"-public-ip", "nonsense"},
		{"-log-format", "xml"},
		{"-turn-ttl", "1s"},
		{"-turn-max-allocations", "1"},
		{"-seat-grace", "-1s"},
		{"-seat-grace", "1h"},
		{"-max-conns-per-ip", "0"},
		{"-rooms-per-minute", "0"},
		{"-max-rooms", "0"},
		{"-messages-per-second", "0.5"},
		{"-http", "nope"},
		{"stray"},
	} {
		if _, err := LoadConfig(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := LoadConfig(nil, func(k string) string {
		if k == "HOSTRELAY_TURN_TTL" {
			return "forever"
		}
		return ""
	}, io.Discard); err == nil || !strings.Contains(err.Error(), "HOSTRELAY_TURN_TTL") {
		t.Errorf("bad env not named: %v", err)
	}
}

// TestLobbyLimitFlags: the lobby limits set by flags reach the live hub,
// at and past each limit.
func TestLobbyLimitFlags(t *testing.T) {
	s := startServer(t, "-rooms-per-minute", "2", "-max-rooms", "2")
	addr := s.Addrs().HTTP

	// -rooms-per-minute 2: a session creates two rooms, the third is refused.
	ada := dialLobby(t, addr, "Ada")
	for i := 0; i < 2; i++ {
		ada.create("r", 2, "")
		if err := ada.call(protocol.TypeLeaveRoom, nil, &protocol.OK{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ada.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 2}, &protocol.RoomJoined{}); !isCode(err, protocol.CodeRateLimited) {
		t.Fatalf("third create: %v", err)
	}

	// -max-rooms 2: two rooms stand, a third (by another session) is refused.
	dialLobby(t, addr, "Bob").create("b", 2, "")
	dialLobby(t, addr, "Cat").create("c", 2, "")
	if err := dialLobby(t, addr, "Dan").call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "d", MaxPlayers: 2}, &protocol.RoomJoined{}); !isCode(err, protocol.CodeServerFull) {
		t.Fatalf("create past -max-rooms: %v", err)
	}
}

// TestMessagesPerSecondFlag: a session that sends faster than
// -messages-per-second (bursts of twice that) is refused with rate_limited.
func TestMessagesPerSecondFlag(t *testing.T) {
	s := startServer(t, "-messages-per-second", "5")
	l := dialLobby(t, s.Addrs().HTTP, "Ada")
	// The burst is 10 and hello took one: nine more are accepted at once
	// (at the limit), then one is refused (past it). The loop allows for a
	// few tokens refilled while a slow machine runs it.
	refused := -1
	for i := 0; i < 30 && refused < 0; i++ {
		err := l.call(protocol.TypeSetName, &protocol.SetName{Name: fmt.Sprintf("Ada%d", i)}, &protocol.OK{})
		if err != nil && !isCode(err, protocol.CodeRateLimited) {
			t.Fatal(err)
		}
		if err != nil {
			refused = i
		}
	}
	if refused < 9 {
		t.Fatalf("refused message %d, want none of the first 9 and one soon after", refused)
	}
}

// TestMaxConnsPerIPFlag: -max-conns-per-ip reaches the live hub: at the limit
// every connection of one IP is served, past it the upgrade gets 429, other
// IPs are unaffected, and closing one makes room again.
func TestMaxConnsPerIPFlag(t *testing.T) {
	s := startServer(t, "-max-conns-per-ip", "3")
	addr := s.Addrs().HTTP
	var conns []*lobby
	for i := 0; i < 3; i++ {
		conns = append(conns, dialLobbyFrom(t, addr, "127.0.0.1", fmt.Sprintf("P%d", i)))
	}
	conn, resp, err := dialWS(t, addr, "127.0.0.1", nil)
	if err == nil {
		conn.CloseNow()
		t.Fatal("4th connection from one IP accepted, want 429")
	}
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th connection from one IP: %v, want 429", err)
	}
	dialLobbyFrom(t, addr, "127.0.0.2", "Other")

	conns[0].WS().Close(websocket.StatusNormalClosure, "")
	// The server releases the slot when it has finished with the session,
	// a moment after the close handshake.
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, resp, err := dialWS(t, addr, "127.0.0.1", nil)
		if err == nil {
			conn.CloseNow()
			break
		}
		if resp == nil || resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after one of 3 closed: %v %v", resp, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestJoinsPerMinuteFlag: -joins-per-minute reaches the live hub: that many
// joins from one IP succeed, the next is refused with rate_limited, and
// another IP still joins.
func TestJoinsPerMinuteFlag(t *testing.T) {
	// 3 a minute refills one every 20 s, far longer than this test takes.
	s := startServer(t, "-joins-per-minute", "3")
	addr := s.Addrs().HTTP
	code := dialLobbyFrom(t, addr, "127.0.0.3", "Host").create("r", 8, "").Room.Code
	for i := 0; i < 3; i++ {
		if _, err := dialLobbyFrom(t, addr, "127.0.0.1", fmt.Sprintf("P%d", i)).join(code, ""); err != nil {
			t.Fatalf("join %d of 3: %v", i+1, err)
		}
	}
	if _, err := dialLobbyFrom(t, addr, "127.0.0.1", "P3").join(code, ""); !isCode(err, protocol.CodeRateLimited) {
		t.Fatalf("4th join from one IP: %v, want rate_limited", err)
	}
	if _, err := dialLobbyFrom(t, addr, "127.0.0.2", "Other").join(code, ""); err != nil {
		t.Fatalf("join from another IP: %v", err)
	}
}

// TestTURNMaxAllocationsFlag: -turn-max-allocations reaches the live TURN
// server: a session gets that many allocations, the next is refused with
// 486 Allocation Quota Reached, and another session is unaffected.
func TestTURNMaxAllocationsFlag(t *testing.T) {
	s := startServer(t, "-turn-max-allocations", "2")
	a := s.Addrs()
	host := dialLobby(t, a.HTTP, "Host")
	rj := host.create("r", 4, "")
	for i := 0; i < 2; i++ {
		allocate(t, a.TURNUDP, rj.ICE)
	}
	_, err := tryAllocate(t, a.TURNUDP, rj.ICE)
	var te *stun.TurnError
	if !errors.As(err, &te) || te.ErrorCodeAttr.Code != stun.CodeAllocQuotaReached {
		t.Fatalf("3rd allocation: %v, want 486 Allocation Quota Reached", err)
	}
	mate, err := dialLobby(t, a.HTTP, "Mate").join(rj.Room.Code, "")
	if err != nil {
		t.Fatal(err)
	}
	allocate(t, a.TURNUDP, mate.ICE)
}

// TestTURNMaxBandwidthFlag: -turn-max-bandwidth and -turn-bandwidth-burst
// reach the live TURN server: a burst within them is relayed whole, a
// larger one is cut. At the default (1 MiB/s, 256 KiB bursts) nothing here
// would be dropped.
func TestTURNMaxBandwidthFlag(t *testing.T) {
	s := startServer(t, "-turn-max-bandwidth", "16KiB", "-turn-bandwidth-burst", "4KiB")
	a := s.Addrs()
	host := dialLobby(t, a.HTTP, "Host")
	rj := host.create("r", 2, "")
	mate, err := dialLobby(t, a.HTTP, "Mate").join(rj.Room.Code, "")
	if err != nil {
		t.Fatal(err)
	}
	sender, receiver := allocate(t, a.TURNUDP, rj.ICE), allocate(t, a.TURNUDP, mate.ICE)
	// TURN delivers only from peers with a permission: open one each way.
	if _, err := receiver.WriteTo([]byte("open"), sender.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	readOne := func(what string) {
		t.Helper()
		_ = receiver.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := receiver.ReadFrom(buf); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if _, err := sender.WriteTo([]byte("open"), receiver.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	readOne("first packet")

	// Within the burst: 3000 bytes, all relayed, none dropped.
	packet := bytes.Repeat([]byte("x"), 1000)
	for i := 0; i < 3; i++ {
		if _, err := sender.WriteTo(packet, receiver.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		readOne(fmt.Sprintf("packet %d of a burst within the limit", i+1))
	}
	if st := s.turn.Stats(); st.DroppedBandwidth != 0 {
		t.Fatalf("within the limit: %d packets dropped", st.DroppedBandwidth)
	}

	// Past it: 40 KB at once is ten bursts' worth.
	for i := 0; i < 40; i++ {
		if _, err := sender.WriteTo(packet, receiver.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, "drops: 40 KB at once on a 4 KiB burst", func() bool { return s.turn.Stats().DroppedBandwidth > 0 })
}

// TestShutdownClosesTURN: Shutdown closes TURN itself, not the process's
// exit: while this process lives on, the TURN ports that answered before
// stop answering.
func TestShutdownClosesTURN(t *testing.T) {
	cfg, err := LoadConfig([]string{"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-turn-secret", "0123456789abcdef0123456789abcdef"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Not startServer: its cleanup would shut the server down a second time.
	s, err := New(t.Context(), cfg, slog.New(slog.NewTextHandler(testLog{t}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	a := s.Addrs()
	dialTCP := func() error {
		c, err := net.DialTimeout("tcp", a.TURNTCP, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := stunBinding(a.TURNUDP, 5*time.Second); err != nil {
		t.Fatalf("TURN UDP before shutdown: %v", err)
	}
	if err := dialTCP(); err != nil {
		t.Fatalf("TURN TCP before shutdown: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := stunBinding(a.TURNUDP, time.Second); err == nil {
		t.Fatal("TURN UDP still answers after Shutdown")
	}
	if err := dialTCP(); err == nil {
		t.Fatal("TURN TCP still accepts after Shutdown")
	}
}

// stunBinding asks the TURN server at addr for a Binding, waiting up to wait.
func stunBinding(addr string, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return stunprobe.Binding(ctx, addr)
}
