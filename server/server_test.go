package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// startServer runs the whole server in-process on loopback ports chosen by
// the kernel.
func startServer(t *testing.T, extraArgs ...string) *Server {
	t.Helper()
	cfg, err := LoadConfig(append([]string{
		"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-public-ip", "127.0.0.1", "-turn-secret", "0123456789abcdef0123456789abcdef",
	}, extraArgs...), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
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

	host.conn.Close(websocket.StatusNormalClosure, "bye")
	var rc protocol.RoomClosed
	cat.next(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonHostLeft {
		t.Fatalf("RoomClosed %+v", rc)
	}
}

func isCode(err error, code string) bool {
	var re replyErr
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
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || h.Status != "ok" || resp.StatusCode != 200 {
		t.Fatalf("healthz: %d %+v %v", resp.StatusCode, h, err)
	}
	resp.Body.Close()

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
		conn, _, err := websocket.Dial(t.Context(), "ws://"+addr+"/ws", &websocket.DialOptions{
			HTTPHeader: http.Header{"X-Forwarded-For": {"198.51.100." + string(rune('1'+i))}},
		})
		if err != nil {
			t.Fatal(err)
		}
		l := &lobby{t: t, conn: conn, wait: map[uint32]chan protocol.Envelope{}, events: make(chan protocol.Envelope, 16), closed: make(chan struct{})}
		go l.readLoop()
		if err := l.call(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "M"}, &protocol.Welcome{}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.join("2345678", ""); !isCode(err, protocol.CodeRoomNotFound) {
			t.Fatalf("attempt %d: %v", i, err)
		}
		conn.CloseNow()
		<-l.closed
	}
	l := dialLobby(t, addr, "M")
	if _, err := l.join("2345678", ""); !isCode(err, protocol.CodeRateLimited) {
		t.Fatalf("11th failed join from one IP with forged XFF: %v, want rate_limited", err)
	}
}

func TestConfigLayers(t *testing.T) {
	env := map[string]string{"HOSTRELAY_HTTP": "127.0.0.1:9000", "HOSTRELAY_LOG_LEVEL": "debug", "HOSTRELAY_TURN_SECRET": "env-secret-at-least-16"}
	cfg, err := LoadConfig([]string{"-http", "127.0.0.1:9001"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTPAddr != "127.0.0.1:9001" || cfg.LogLevel != slog.LevelDebug || cfg.TURNSecret != "env-secret-at-least-16" || cfg.secretGenerated {
		t.Fatalf("layering wrong: %+v", cfg)
	}
	cfg, err = LoadConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil || !cfg.secretGenerated || len(cfg.TURNSecret) < 16 || cfg.HTTPAddr != ":8080" || cfg.TURNUDPAddr != ":3478" {
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
