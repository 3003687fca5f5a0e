package signaling

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

// testHub runs a Hub behind a real HTTP server. Each connection's remote
// address is the X-Test-IP header if present, so tests can act as many IPs.
func testHub(t testing.TB, mutate func(*Config)) (*Hub, string) {
	t.Helper()
	return testHubOn(t, mutate, httptest.NewServer)
}

// testHubOn is testHub on the server newServer starts (httptest.NewServer
// or NewTLSServer).
func testHubOn(t testing.TB, mutate func(*Config), newServer func(http.Handler) *httptest.Server) (*Hub, string) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ICE = func(sessionID, host string) protocol.ICE {
		return protocol.ICE{Servers: []protocol.ICEServer{{URLs: []string{"turn:" + host + ":3478"},
			Username: "9999999999:" + sessionID, Credential: "x"}}, TTL: 60}
	}
	// Seats are not held unless a test asks: most tests assert what a
	// dropped connection means to the room at once.
	cfg.Grace = 0
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if mutate != nil {
		mutate(&cfg)
	}
	hub, err := NewHub(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := netip.MustParseAddr("127.0.0.1")
		if h := r.Header.Get("X-Test-IP"); h != "" {
			ip = netip.MustParseAddr(h)
		}
		hub.ServeWebSocket(w, r, ip)
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hub.Close(ctx); err != nil {
			t.Errorf("hub close: %v", err)
		}
		srv.Close()
	})
	return hub, "ws" + strings.TrimPrefix(srv.URL, "http") // http: ws, https: wss
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// client is a raw lobby connection that fails its test on anything
// unexpected. conn is the WebSocket under it, for what a client never sends.
type client struct {
	*lobbytest.Conn
	t           testing.TB
	conn        *websocket.Conn
	readTimeout time.Duration
}

func dial(t testing.TB, url string, header http.Header) *client {
	t.Helper()
	return dialWith(t, url, lobbytest.Options{Header: header})
}

func dialWith(t testing.TB, url string, opts lobbytest.Options) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lc, _, err := lobbytest.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = lc.CloseNow() })
	return &client{Conn: lc, t: t, conn: lc.WS(), readTimeout: 5 * time.Second}
}

// connect dials and completes the hello handshake.
func connect(t testing.TB, url, name string) *client {
	c := dial(t, url, nil)
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: name})
	c.expect(protocol.TypeWelcome, &protocol.Welcome{})
	return c
}

func (c *client) writeRaw(frame []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, frame); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// request sends a message with a fresh request id and returns the id.
func (c *client) request(typ string, body any) uint32 {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id, err := c.Send(ctx, typ, body)
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// read returns the next frame, waiting up to readTimeout.
func (c *client) read() (protocol.Envelope, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.readTimeout)
	defer cancel()
	return c.Read(ctx)
}

// expect reads the next frame, requires its type, and decodes its body.
func (c *client) expect(typ string, body any) protocol.Envelope {
	c.t.Helper()
	env, err := c.read()
	if err != nil {
		c.t.Fatalf("waiting for %s: %v", typ, err)
	}
	if env.Type != typ {
		var e protocol.Error
		_ = protocol.DecodeBody(env, &e)
		c.t.Fatalf("got %s %+v, want %s", env.Type, e, typ)
	}
	if err := protocol.DecodeBody(env, body); err != nil {
		c.t.Fatal(err)
	}
	return env
}

// expectError reads the next frame and requires an Error with code.
func (c *client) expectError(code string) protocol.Error {
	c.t.Helper()
	var e protocol.Error
	c.expect(protocol.TypeError, &e)
	if e.Code != code {
		c.t.Fatalf("error %q (%s), want %q", e.Code, e.Message, code)
	}
	return e
}

// expectClose reads until the connection closes and returns its status.
func (c *client) expectClose() websocket.StatusCode {
	c.t.Helper()
	for {
		_, err := c.read()
		if err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

func (c *client) create(name string, max int, password string) protocol.RoomJoined {
	c.t.Helper()
	id := c.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: name, MaxPlayers: max, Public: true, Password: password})
	var rj protocol.RoomJoined
	if env := c.expect(protocol.TypeRoomJoined, &rj); env.ID != id {
		c.t.Fatalf("reply id %d, want %d", env.ID, id)
	}
	return rj
}

func (c *client) join(code, password string) protocol.RoomJoined {
	c.t.Helper()
	c.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code, Password: password})
	var rj protocol.RoomJoined
	c.expect(protocol.TypeRoomJoined, &rj)
	return rj
}

// waitFor polls cond; tests use it for server-side state with no event.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, what, cond)
}

// frameLimitIs sends {"t": "xxx…"}, a well-formed envelope of exactly limit
// bytes, which must be read and answered (unknown_type), then the same
// frame one byte longer, which must close the connection with 1009.
func (c *client) frameLimitIs(limit int) {
	c.t.Helper()
	frame := []byte{0x81, 0xa1, 't', 0xda}
	pad := limit - len(frame) - 2
	frame = append(frame, byte(pad>>8), byte(pad))
	frame = append(frame, strings.Repeat("x", pad)...)
	c.writeRaw(frame)
	c.expectError(protocol.CodeUnknownType)
	c.writeRaw(append(frame, 0))
	if code := c.expectClose(); code != websocket.StatusMessageTooBig {
		c.t.Fatalf("close %v, want %v", code, websocket.StatusMessageTooBig)
	}
}
