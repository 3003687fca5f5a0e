package server

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// rawHTTP is one client HTTP/1.1 connection driven by hand, so a test
// decides when it sends and when it stays idle.
type rawHTTP struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialHTTP(t *testing.T, addr string) *rawHTTP {
	t.Helper()
	return dialHTTPFrom(t, addr, "")
}

// dialHTTPFrom is dialHTTP from the local address from ("": any).
func dialHTTPFrom(t *testing.T, addr, from string) *rawHTTP {
	t.Helper()
	d := &net.Dialer{Timeout: testwait.Within}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawHTTP{t: t, c: c, r: bufio.NewReader(c)}
}

// get sends GET path on the connection, keeping it alive, and returns the
// status, or 0 if the connection failed.
func (h *rawHTTP) get(path string) int {
	h.t.Helper()
	_ = h.c.SetDeadline(time.Now().Add(testwait.Within))
	defer func() { _ = h.c.SetDeadline(time.Time{}) }()
	if _, err := io.WriteString(h.c, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		return 0
	}
	resp, err := http.ReadResponse(h.r, nil)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// closedByServer reports whether the server closes the connection: reading
// ends in EOF (or a reset) before testwait.Within.
func (h *rawHTTP) closedByServer() bool {
	h.t.Helper()
	return h.closedWithin(testwait.Within)
}

// closedWithin is closedByServer waiting d.
func (h *rawHTTP) closedWithin(d time.Duration) bool {
	h.t.Helper()
	_ = h.c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, h.r)
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// At -max-http-conns every connection is served; one more takes the place of
// the connection that has waited longest without a request, which the
// server closes. WebSockets are never evicted, and may take all but an
// eighth (at least one) of the connections, so /healthz still fits.
func TestHTTPConnCap(t *testing.T) {
	s := startServer(t, "-max-http-conns", "4")
	addr := s.Addrs().HTTP

	var conns []*rawHTTP
	for i := range 4 {
		h := dialHTTP(t, addr)
		if code := h.get("/healthz"); code != http.StatusOK {
			t.Fatalf("connection %d of 4: status %d", i+1, code)
		}
		conns = append(conns, h)
		// The server marks a connection idle just after the client has its
		// answer; one at a time, so they wait in the order they came.
		testwait.For(t, "the connection to be idle", func() bool { return s.conns.waitingLen() == i+1 })
	}
	if open, _ := s.conns.counts(); open != 4 || s.conns.evicted.Load() != 0 {
		t.Fatalf("at the cap: %d open, %d evicted; want 4, 0", open, s.conns.evicted.Load())
	}
	fifth := dialHTTP(t, addr)
	if code := fifth.get("/healthz"); code != http.StatusOK {
		t.Fatalf("past the cap: status %d", code)
	}
	if !conns[0].closedByServer() {
		t.Fatal("the longest-idle connection was not closed to make room")
	}
	if code := conns[1].get("/healthz"); code != http.StatusOK {
		t.Fatalf("a connection that was not the longest idle: status %d", code)
	}
	if got := s.conns.evicted.Load(); got != 1 {
		t.Fatalf("evicted %d, want 1", got)
	}
	// As above: the server marks conns[1] idle again just after its answer.
	testwait.For(t, "four idle connections again", func() bool { return s.conns.waitingLen() == 4 })

	// Three lobby WebSockets fit (4 less one kept for plain requests), and
	// new connections evict idle ones rather than them.
	for i := range 3 {
		dialLobby(t, addr, "p"+string(rune('a'+i)))
	}
	testwait.For(t, "three WebSockets and one idle connection", func() bool {
		_, ws := s.conns.counts()
		return ws == 3 && s.conns.waitingLen() == 1
	})
	if _, resp, err := dialWS(t, addr, "", nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a WebSocket past the share: %v %v, want 503", err, resp)
	}
	// The 503's connection is busy until the server has finished with it,
	// which can be just after the client read the answer; a connection can
	// only take the place of an idle one (or a free one).
	testwait.For(t, "the refused WebSocket's connection to be idle or closed", func() bool {
		open, _ := s.conns.counts()
		return open < 4 || s.conns.waitingLen() > 0
	})
	if code := dialHTTP(t, addr).get("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz with the WebSocket share full: status %d", code)
	}
	if _, ws := s.conns.counts(); ws != 3 {
		t.Fatalf("%d WebSockets open, want 3", ws)
	}
}

// When every connection under the cap is in a request, a new one is closed
// at once, without an answer; once one finishes, the next is served.
func TestConnLimiterRefusesWhenAllBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newConnLimiter(ln, connCaps{max: 2, perAddr: 2}, slog.New(slog.DiscardHandler))
	addr, entered, release := serveBlocking(t, ln, l)

	busy := make(chan int, 2)
	for range 2 {
		h := dialHTTP(t, addr)
		go func() { busy <- h.get("/block") }()
		<-entered
	}
	refused := dialHTTP(t, addr)
	if !refused.closedByServer() {
		t.Fatal("a connection past the cap, all busy, was left open")
	}
	if got := l.refused.Load(); got != 1 {
		t.Fatalf("refused %d, want 1", got)
	}
	close(release)
	for range 2 {
		if code := <-busy; code != http.StatusOK {
			t.Fatalf("a busy request ended with %d", code)
		}
	}
	if code := dialHTTP(t, addr).get("/"); code != http.StatusOK {
		t.Fatalf("after the busy requests finished: status %d", code)
	}
}

// A request header not finished within -http-read-timeout and a keep-alive
// connection idle past -http-idle-timeout are closed; a lobby WebSocket
// opened before either lives on, since hijacking clears those deadlines.
func TestHTTPTimeoutsSpareWebSockets(t *testing.T) {
	s := startServer(t, "-http-read-timeout", "1s", "-http-write-timeout", "1s", "-http-idle-timeout", "1s")
	addr := s.Addrs().HTTP
	lobby := dialLobby(t, addr, "Ada")

	stalled := dialHTTP(t, addr)
	if _, err := io.WriteString(stalled.c, "GET /healthz HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	if !stalled.closedByServer() {
		t.Fatal("a stalled request header was left open")
	}
	idle := dialHTTP(t, addr)
	if code := idle.get("/healthz"); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if !idle.closedByServer() {
		t.Fatal("an idle keep-alive connection was left open")
	}

	// Opened before the stalled request, so past every HTTP timeout too.
	lobby.create("still here", 2, "")
}

// waitingLen counts connections without a request in progress.
func (l *connLimiter) waitingLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting.Len()
}

func TestFileBudget(t *testing.T) {
	for _, limit := range []uint64{0, 64, 256, 1024, 20000, 1 << 20, 1 << 40} {
		b := budgetFor(limit)
		n := uint64(unknownFileLimit)
		if limit > 0 {
			n = min(limit, 1<<30)
		}
		if b.httpConns < 1 || b.turnTCP < 1 || b.allocations < 1 || b.reserve < 1 {
			t.Errorf("limit %d: an empty share: %+v", limit, b)
		}
		if total := uint64(b.reserve + b.httpConns + b.turnTCP + b.allocations); total > n { //nolint:gosec // positive
			t.Errorf("limit %d: shares add up to %d: %+v", limit, total, b)
		}
		if limit >= 1024 && b.reserve < fileReserve {
			t.Errorf("limit %d: reserve %d under %d", limit, b.reserve, fileReserve)
		}
	}
	// At start the soft limit is raised to the hard one.
	soft, hard, err := raiseFileLimit()
	if err != nil || soft != hard {
		t.Fatalf("after raising: soft %d hard %d err %v", soft, hard, err)
	}
}

func TestConnLimitFlags(t *testing.T) {
	cfg, err := LoadConfig(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.MaxConns != Auto || cfg.TURN.MaxTCPConns != Auto || cfg.TURN.MaxTCPConnsPerIP != 64 ||
		cfg.TURN.TCPAllocateTimeout != 5*time.Second || cfg.HTTP.ReadTimeout != 30*time.Second ||
		cfg.HTTP.WriteTimeout != time.Minute || cfg.HTTP.IdleTimeout != time.Minute {
		t.Fatalf("defaults: %+v", cfg)
	}
	cfg, err = LoadConfig([]string{"-turn-tcp-conns-per-ip", "3"}, func(k string) string {
		return map[string]string{"HOSTRELAY_MAX_HTTP_CONNS": "2", "HOSTRELAY_TURN_TCP_MAX_CONNS": "1",
			"HOSTRELAY_TURN_TCP_CONNS_PER_IP": "9", "HOSTRELAY_TURN_TCP_ALLOCATE_TIMEOUT": "15m",
			"HOSTRELAY_HTTP_READ_TIMEOUT": "1s", "HOSTRELAY_HTTP_WRITE_TIMEOUT": "1h", "HOSTRELAY_HTTP_IDLE_TIMEOUT": "1s"}[k]
	}, io.Discard)
	if err != nil || cfg.HTTP.MaxConns != 2 || cfg.TURN.MaxTCPConns != 1 || cfg.TURN.MaxTCPConnsPerIP != 3 ||
		cfg.TURN.TCPAllocateTimeout != 15*time.Minute || cfg.HTTP.ReadTimeout != time.Second ||
		cfg.HTTP.WriteTimeout != time.Hour || cfg.HTTP.IdleTimeout != time.Second {
		t.Fatalf("environment and flags at the limits: %v %+v", err, cfg)
	}
	for _, bad := range [][]string{
		{"-max-http-conns", "1"},
		{"-max-http-conns", "-1"},
		{"-turn-tcp-max-conns", "-1"},
		{"-turn-tcp-conns-per-ip", "0"},
		{"-turn-tcp-allocate-timeout", "999ms"},
		{"-turn-tcp-allocate-timeout", "15m1s"},
		{"-http-read-timeout", "999ms"},
		{"-http-write-timeout", "61m"},
		{"-http-idle-timeout", "0"},
	} {
		_, err := LoadConfig(bad, noEnv, io.Discard)
		if err == nil {
			t.Errorf("%v accepted", bad)
		} else if !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: error does not name the flag: %v", bad, err)
		}
	}
}

// Issue 24, finding 4: one address may hold only a share of -max-http-conns.
// 300 idle connections from 127.0.0.1, reopened as fast as the server
// closes them, leave another address's /healthz answered at once: the
// flood's connections make room for its own, never for others'.
func TestHTTPConnShareUnderIdleFlood(t *testing.T) {
	s := startServer(t, "-max-http-conns", "100")
	addr := s.Addrs().HTTP
	floodIdle(t, addr, "127.0.0.1", 300)
	probeAll(t, 15, addr, "127.0.0.2", "test", "/healthz", http.StatusOK, 2*time.Second)
}

// One address may hold a share of -max-http-conns: a quarter (here 10 of
// 40), or -max-conns-per-ip and a page's connections if more. At its share
// every connection is served; past it, a new one takes the place of that
// address's longest-idle connection, not of another address's, even one
// idle longer. Trusted proxies, which carry many clients, are not held to
// it.
func TestHTTPConnShare(t *testing.T) {
	s := startServer(t, "-max-http-conns", "40", "-max-conns-per-ip", "1", "-trusted-proxies", "127.0.0.3/32")
	addr := s.Addrs().HTTP
	if share := s.conns.caps.perAddr; share != 10 {
		t.Fatalf("share %d, want 10", share)
	}
	idle := func(h *rawHTTP, n int) {
		t.Helper()
		if code := h.get("/healthz"); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		testwait.For(t, "the connection to be idle", func() bool { return s.conns.waitingLen() == n })
	}
	other := dialHTTPFrom(t, addr, "127.0.0.2")
	idle(other, 1) // the longest idle of all

	var conns []*rawHTTP
	for i := range 10 {
		h := dialHTTPFrom(t, addr, "127.0.0.1")
		idle(h, i+2)
		conns = append(conns, h)
	}
	if open, _ := s.conns.counts(); open != 11 || s.conns.evicted.Load() != 0 {
		t.Fatalf("at the share: %d open, %d evicted; want 11, 0", open, s.conns.evicted.Load())
	}

	past := dialHTTPFrom(t, addr, "127.0.0.1")
	if code := past.get("/healthz"); code != http.StatusOK {
		t.Fatalf("past the share: status %d", code)
	}
	if !conns[0].closedByServer() {
		t.Fatal("past its share, the address's longest-idle connection was not closed")
	}
	if code := other.get("/healthz"); code != http.StatusOK {
		t.Fatalf("another address's connection, idle longer: status %d", code)
	}
	if code := conns[1].get("/healthz"); code != http.StatusOK {
		t.Fatalf("the address's next connection: status %d", code)
	}
	if open, _ := s.conns.counts(); open != 11 || s.conns.evicted.Load() != 1 {
		t.Fatalf("past the share: %d open, %d evicted; want 11, 1", open, s.conns.evicted.Load())
	}

	for i := range 12 {
		idle(dialHTTPFrom(t, addr, "127.0.0.3"), 12+i)
	}
	if got := s.conns.evicted.Load(); got != 1 {
		t.Fatalf("a trusted proxy past the share: evicted %d, want still 1", got)
	}
}

// An address at its share whose connections are all in a request gets its
// new ones closed at once; another address is still served.
func TestConnShareRefusesWhenAllBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newConnLimiter(ln, connCaps{max: 10, perAddr: 2}, slog.New(slog.DiscardHandler))
	addr, entered, release := serveBlocking(t, ln, l)

	busy := make(chan int, 2)
	for range 2 {
		h := dialHTTPFrom(t, addr, "127.0.0.1")
		go func() { busy <- h.get("/block") }()
		<-entered
	}
	if !dialHTTPFrom(t, addr, "127.0.0.1").closedByServer() {
		t.Fatal("a connection past its address's share, all busy, was left open")
	}
	if got := l.refused.Load(); got != 1 {
		t.Fatalf("refused %d, want 1", got)
	}
	if code := dialHTTPFrom(t, addr, "127.0.0.2").get("/"); code != http.StatusOK {
		t.Fatalf("another address: status %d", code)
	}
	close(release)
	for range 2 {
		if code := <-busy; code != http.StatusOK {
			t.Fatalf("a busy request ended with %d", code)
		}
	}
}

// remoteConn is a connection from a made-up client address.
type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.remote }

// The share counts by client network as the lobby's limits do: an IPv6
// client by its /64, an IPv4-mapped address as the IPv4 one. An address
// with nothing open is forgotten.
func TestConnShareKeys(t *testing.T) {
	l := newConnLimiter(nil, connCaps{max: 100, perAddr: 2, exempt: []netip.Prefix{netip.MustParsePrefix("2001:db8:ff::/48")}},
		slog.New(slog.DiscardHandler))
	var all []*limitedConn
	from := func(ip string) *limitedConn {
		t.Helper()
		a, b := net.Pipe()
		t.Cleanup(func() { _ = b.Close() })
		lc := l.admit(remoteConn{Conn: a, remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}})
		if lc == nil {
			t.Fatalf("%s refused", ip)
		}
		l.connState(lc, http.StateNew) // accepted, no request yet
		all = append(all, lc)
		return lc
	}
	isClosed := func(lc *limitedConn) bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return lc.closed
	}

	first := from("2001:db8:1::1")
	from("2001:db8:1:0:ffff:ffff:ffff:2") // the same /64
	if isClosed(first) {
		t.Fatal("closed at the share")
	}
	from("2001:db8:1::3")
	if !isClosed(first) || l.evicted.Load() != 1 {
		t.Fatalf("a third connection from one /64 did not take the place of its first (evicted %d)", l.evicted.Load())
	}
	from("2001:db8:1:1::1") // the next /64 is another client
	v4 := from("192.0.2.1")
	from("::ffff:192.0.2.1")
	from("192.0.2.1")
	if !isClosed(v4) || l.evicted.Load() != 2 {
		t.Fatalf("IPv4 and IPv4-mapped were not counted as one address (evicted %d)", l.evicted.Load())
	}
	for range 5 {
		from("2001:db8:ff::1") // exempt
	}
	if l.evicted.Load() != 2 {
		t.Fatalf("an exempt address was held to the share (evicted %d)", l.evicted.Load())
	}

	for _, lc := range all {
		_ = lc.Close()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open != 0 || len(l.byAddr) != 0 || l.waiting.Len() != 0 {
		t.Fatalf("after closing all: %d open, %d addresses, %d waiting", l.open, len(l.byAddr), l.waiting.Len())
	}
}

// addrShare is a quarter of the cap, at least the floor, at most the cap.
func TestAddrShare(t *testing.T) {
	for _, c := range []struct{ capacity, floor, want int }{
		{100, 9, 25}, {100, 40, 40}, {4, 40, 4}, {256, 1, 64}, {2, 1, 1}, {16000, 40, 4000},
	} {
		if got := addrShare(c.capacity, c.floor); got != c.want {
			t.Errorf("addrShare(%d, %d) = %d, want %d", c.capacity, c.floor, got, c.want)
		}
	}
}

// serveBlocking serves HTTP on l (over ln) until the test ends: a request
// for /block signals entered and waits for release to close; any other is
// answered at once.
func serveBlocking(t *testing.T, ln net.Listener, l *connLimiter) (addr string, entered <-chan struct{}, release chan struct{}) {
	t.Helper()
	in, release := make(chan struct{}, 2), make(chan struct{})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				in <- struct{}{}
				<-release
			}
		}),
		ConnState:         l.connState,
		ReadHeaderTimeout: time.Minute,
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), in, release
}
