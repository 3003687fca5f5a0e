package server

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// A network held back after a flood is told why once per hold (429 with
// Retry-After on an upgrade); its next connections in the hold are reset at
// accept, before any HTTP is read, so a flooder that reconnects regardless
// costs an accept, not a goroutine, a request and a reply. Other networks
// are served, and the network is served again once its hold ends. Before,
// every reconnect in the hold was read and answered 429.
func TestHeldNetworkIsResetAtAccept(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	s := startServerWith(t, slog.LevelInfo, testLog{t}, func(c *Config) { c.Lobby.Now = clock })
	addr := s.Addrs().HTTP
	url := "ws://" + addr + "/ws"

	// A flood before hello: the ninth frame closes the connection with 1008
	// and holds 127.0.0.1 back.
	ws, _, err := websocket.Dial(t.Context(), url, nil) //nolint:bodyclose // a 101 has no body
	if err != nil {
		t.Fatal(err)
	}
	for range 12 {
		if ws.Write(t.Context(), websocket.MessageBinary, []byte{0x80}) != nil {
			break
		}
	}
	// Read until the server closes: closing first, with its replies unread,
	// would reset the connection before the server read the ninth frame.
	for {
		if _, _, err := ws.Read(t.Context()); err != nil {
			if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
				t.Fatalf("the flood ended with %v, want 1008", err)
			}
			break
		}
	}

	// The first upgrade in the hold is told: 429 with Retry-After.
	testwait.For(t, "an upgrade answered 429 after the flood", func() bool {
		c, resp, err := websocket.Dial(t.Context(), url, nil)
		if err == nil {
			_ = c.CloseNow()
			return false // the flood's close is still on its way
		}
		return resp != nil && resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != ""
	})

	// The next is reset at accept: no byte of HTTP comes back.
	if got := rawUpgrade(t, addr, ""); got != "" {
		t.Fatalf("a held network's second connection in the hold was answered %q; want it closed at accept", got)
	}
	if n := s.Hub().Metrics().RateLimited["flood_hold_accept"]; n != 1 {
		t.Fatalf("flood_hold_accept counted %d, want 1", n)
	}
	// Another network is served meanwhile.
	if got := dialHTTPFrom(t, addr, "127.0.0.2").get("/healthz"); got != http.StatusOK {
		t.Fatalf("another network's /healthz: %d, want 200", got)
	}
	// Once the hold is over, the network is served again.
	advance(2 * time.Second)
	c, _, err := websocket.Dial(t.Context(), url, nil) //nolint:bodyclose // a 101 has no body
	if err != nil {
		t.Fatalf("after the hold: %v", err)
	}
	_ = c.CloseNow()
}

// rawUpgrade sends a WebSocket upgrade from the local address from ("": any)
// and returns the status line of the reply, "" if the connection was closed
// before any byte of one came.
func rawUpgrade(t *testing.T, addr, from string) string {
	t.Helper()
	c, err := dialFrom(addr, from)
	if err != nil {
		return "" // reset as the connection was made
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(testwait.Within))
	_, err = io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	if err != nil {
		return "" // reset before the request was written
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if line == "" {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the connection was neither answered nor closed")
		}
	}
	return line
}

// dialFrom connects to addr from the local address from ("": any). A
// connection reset as it is accepted may fail here already (connect reads
// the socket's error).
func dialFrom(addr, from string) (net.Conn, error) {
	d := &net.Dialer{Timeout: testwait.Within}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	return d.Dial("tcp", addr) //nolint:noctx // bounded by the dialer's timeout
}

// A trusted proxy's connections are never reset at accept: the hold is on
// its clients' networks, which only their requests name.
func TestTrustedProxyIsNotRefusedAtAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan netip.Addr, 4)
	l := newConnLimiter(ln, connCaps{max: 10, perAddr: 10, exempt: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")},
		refuse: func(ip netip.Addr) bool { asked <- ip; return true }}, slog.New(slog.DiscardHandler))
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	if refused, err := dialFrom(ln.Addr().String(), "127.0.0.1"); err == nil {
		_ = refused.SetDeadline(time.Now().Add(testwait.Within))
		if _, err := refused.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a refused address's connection was not closed: %v", err)
		}
		_ = refused.Close()
	}
	if ip := <-asked; ip != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("asked about %v", ip)
	}
	dialHTTPFrom(t, ln.Addr().String(), "127.0.0.2")
	select {
	case c := <-accepted:
		_ = c.Close()
	case <-time.After(testwait.Within):
		t.Fatal("the trusted proxy's connection was not accepted")
	}
	select {
	case ip := <-asked:
		t.Fatalf("asked about the trusted proxy %v", ip)
	default:
	}
}
