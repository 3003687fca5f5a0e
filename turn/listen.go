package turn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostrelay/hostrelay/internal/netkey"
)

// samePortAttempts bounds retries when the TCP port matching a fresh UDP port
// is already taken by someone else. The UDP port comes from the ephemeral
// range, which a busy host's outgoing TCP connections also use: with 11,000
// of them in TIME_WAIT here (a third of the range), five attempts all
// collided about once in a hundred, enough to fail a test run that starts
// dozens of servers. Each attempt costs two binds.
const samePortAttempts = 32

// tcpIdleTimeout closes TURN-over-TCP connections that stay silent this long
// once they have made an allocation (before, Config.TCPAllocateTimeout).
// pion never times them out, so each silent connection would hold a goroutine
// and a descriptor forever. Live WebRTC sessions send ICE consent checks
// every few seconds, and an allocation not refreshed for 10 minutes (the
// default lifetime) is gone anyway.
const tcpIdleTimeout = 15 * time.Minute

// tcpWriteTimeout closes a TURN-over-TCP connection when a write to it makes
// no progress for this long: its client stopped reading. pion v4.1.4 sets no
// write deadline, so such a client would block, forever, pion's goroutine
// relaying to it and its read loop's next response (which may hold pion's
// locks). Honest clients read as data arrives, and the kernel's send buffer
// absorbs a short stall before a write blocks at all.
const tcpWriteTimeout = 5 * time.Second

// listeners are the sockets New opens; any may be absent (nil) if its
// address is empty.
type listeners struct {
	udp []*net.UDPConn // SO_REUSEPORT group on one port, one pion read loop each
	tcp *tcpListener
	tls *tcpListener // TURN over TLS: a tcpListener whose connections are TLS servers
}

// listen opens the TURN listeners named in cfg: udpN UDP sockets sharing
// one port (SO_REUSEPORT, one pion read loop each), a TCP listener and a TLS
// listener whose connections each get a rewriter from rewriters. The TCP and
// TLS listeners share one set of connection caps.
func listen(ctx context.Context, cfg Config, rewriters func() *requestRewriter) (listeners, error) {
	caps := newTCPCaps(cfg)
	udp, tcp, err := listenUDPTCP(ctx, cfg, caps, rewriters)
	if err != nil {
		return listeners{}, err
	}
	ls := listeners{udp: udp, tcp: tcp}
	if cfg.TLSAddr == "" {
		return ls, nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.TLSAddr)
	if err != nil {
		ls.close()

		return listeners{}, fmt.Errorf("turn: listen tls %s: %w", cfg.TLSAddr, err)
	}
	ls.tls = newTCPListener(ln, cfg, caps, rewriters)
	ls.tls.tls, ls.tls.name = cfg.TLS, "TLS"

	return ls, nil
}

// close closes the listening sockets (not the connections accepted).
func (ls listeners) close() {
	closeAll(ls.udp)
	for _, l := range []*tcpListener{ls.tcp, ls.tls} {
		if l != nil {
			_ = l.Close()
		}
	}
}

// listenUDPTCP opens the UDP sockets and the TCP listener.
func listenUDPTCP(ctx context.Context, cfg Config, caps *tcpCaps, rewriters func() *requestRewriter) ([]*net.UDPConn, *tcpListener, error) {
	udpPort, _ := listenPort(cfg.UDPAddr)
	tcpPort, _ := listenPort(cfg.TCPAddr)
	samePort := cfg.UDPAddr != "" && cfg.TCPAddr != "" && udpPort == 0 && tcpPort == 0

	attempts := 1
	if samePort {
		attempts = samePortAttempts
	}
	var lastErr error
	for range attempts {
		var udp []*net.UDPConn
		if cfg.UDPAddr != "" {
			var err error
			if udp, err = listenUDP(ctx, cfg.UDPAddr, cfg.UDPListeners); err != nil {
				return nil, nil, err
			}
		}
		if cfg.TCPAddr == "" {
			return udp, nil, nil
		}
		tcpAddr := cfg.TCPAddr
		if samePort {
			host, _, _ := net.SplitHostPort(cfg.TCPAddr)
			tcpAddr = net.JoinHostPort(host, strconv.Itoa(udp[0].LocalAddr().(*net.UDPAddr).Port)) //nolint:forcetypeassert // a UDP socket
		}
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", tcpAddr)
		if err == nil {
			return udp, newTCPListener(ln, cfg, caps, rewriters), nil
		}
		closeAll(udp)
		lastErr = fmt.Errorf("turn: listen tcp %s: %w", tcpAddr, err)
		if !samePort {
			return nil, nil, lastErr
		}
	}

	return nil, nil, fmt.Errorf("%w: %w", errSamePortExhausted, lastErr)
}

// listenUDP opens n sockets on addr; after the first, on the port it got.
func listenUDP(ctx context.Context, addr string, n int) ([]*net.UDPConn, error) {
	var lc net.ListenConfig
	if n > 1 {
		lc.Control = reusePort
	}
	socks := make([]*net.UDPConn, 0, n)
	for i := range n {
		pc, err := lc.ListenPacket(ctx, "udp", addr)
		if err != nil {
			closeAll(socks)

			return nil, fmt.Errorf("turn: listen udp %s: %w", addr, err)
		}
		udp := pc.(*net.UDPConn) //nolint:forcetypeassert // "udp" yields *net.UDPConn
		socks = append(socks, udp)
		if i == 0 {
			addr = udp.LocalAddr().String()
		}
	}

	return socks, nil
}

func closeAll(socks []*net.UDPConn) {
	for _, s := range socks {
		_ = s.Close()
	}
}

// tcpListener admits TURN-over-TCP connections within the caps, frames what
// they send (tcpFramer), rewrites their requests (requestRewriter), and closes those
// that make no allocation in time or stop reading what they are sent.
// It also tracks them because pion's Server.Close closes only the listener:
// accepted connections, and the goroutine reading each, would outlive the
// server. With tls set it serves TURN over TLS the same way: the caps count
// a connection before its handshake, and the framer, rewriter and timeouts
// apply to what the TLS layer decrypts.
type tcpListener struct {
	net.Listener
	log             *slog.Logger
	name            string // "TCP" or "TLS", for log lines
	caps            *tcpCaps
	tls             *tls.Config // nil: plain TCP
	allocateTimeout time.Duration
	writeTimeout    time.Duration
	rewriters       func() *requestRewriter // one per connection; nil: none

	refused       atomic.Uint64 // closed at accept: over a cap
	badFrames     atomic.Uint64 // closed for a frame tcpFramer refused
	allocTimeouts atomic.Uint64 // closed for making no allocation in time
	writeTimeouts atomic.Uint64 // closed for not reading what it was sent
	handshakes    atomic.Uint64 // TLS only: closed for a failed handshake
	lastRefusal   atomic.Int64  // unix nanoseconds of the last refusal logged
	lastAcceptErr atomic.Int64  // unix nanoseconds of the last accept error logged

	mu     sync.Mutex
	closed bool
	conns  map[netip.AddrPort]*tcpConn // by client address; accepted and not yet closed
}

// tcpCaps counts the open connections of the TCP and TLS listeners
// together: each holds a descriptor whichever it came through, and a browser
// offered both opens one of each per peer connection.
type tcpCaps struct {
	maxConns int
	maxPerIP int

	mu    sync.Mutex
	open  int
	perIP map[netip.Addr]int // open connections by netkey.Of
}

func newTCPCaps(cfg Config) *tcpCaps {
	return &tcpCaps{maxConns: cfg.MaxTCPConns, maxPerIP: cfg.MaxTCPConnsPerIP, perIP: make(map[netip.Addr]int)}
}

// take counts a connection from ip, or returns which cap it is over
// ("server" or "ip") and counts nothing.
func (c *tcpCaps) take(ip netip.Addr) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.open >= c.maxConns:
		return "server"
	case c.perIP[ip] >= c.maxPerIP:
		return "ip"
	}
	c.open++
	c.perIP[ip]++

	return ""
}

func (c *tcpCaps) release(ip netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open--
	if c.perIP[ip] <= 1 {
		delete(c.perIP, ip)
	} else {
		c.perIP[ip]--
	}
}

// refusalLogEvery spaces the log lines about refused connections and failed
// accepts: a flood would otherwise write one per connection.
const refusalLogEvery = 10 * time.Second

// Accept retry delays after an accept error, doubling up to the maximum as
// net/http does.
const (
	acceptRetryMin = 5 * time.Millisecond
	acceptRetryMax = time.Second
)

func newTCPListener(ln net.Listener, cfg Config, caps *tcpCaps, rewriters func() *requestRewriter) *tcpListener {
	return &tcpListener{
		Listener:        ln,
		log:             cfg.Logger.With("component", "turn"),
		name:            "TCP",
		caps:            caps,
		allocateTimeout: cfg.TCPAllocateTimeout,
		writeTimeout:    cfg.tcpWriteTimeout,
		rewriters:       rewriters,
		conns:           make(map[netip.AddrPort]*tcpConn),
	}
}

// Accept returns the next connection within the caps, tracked. Connections
// over a cap are closed here and never reach pion.
func (l *tcpListener) Accept() (net.Conn, error) {
	var retry time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			// pion/turn v4.1.4's accept loop ends on any error, so one EMFILE
			// in a flood would end TURN over TCP for good: wait and retry.
			retry = min(max(2*retry, acceptRetryMin), acceptRetryMax)
			if l.logDue(&l.lastAcceptErr, time.Now()) {
				l.log.Warn("TURN "+l.name+" accept failed; retrying", "err", err, "retry_in", retry)
			}
			time.Sleep(retry)

			continue
		}
		retry = 0
		tc, err := l.admit(c)
		if err != nil {
			return nil, err
		}
		if tc != nil {
			return tc, nil
		}
	}
}

// admit tracks c, or closes it if it is over a cap (nil, nil) or the
// listener is closed.
func (l *tcpListener) admit(c net.Conn) (*tcpConn, error) {
	client := netip.AddrPort{}
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		client = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ip := netkey.Of(client.Addr())
	tc := &tcpConn{Conn: c, raw: c, l: l, client: client, ip: ip, allocateBy: time.Now().Add(l.allocateTimeout)}

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = c.Close()

		return nil, net.ErrClosed
	}
	over := l.caps.take(ip)
	if over == "" {
		l.conns[client] = tc
	}
	l.mu.Unlock()
	if over == "" {
		// Not before: refused connections need no handshake, buffer or rewriter.
		if l.tls != nil {
			// The handshake runs inside pion's first Read, so under the
			// allocate deadline (armReadDeadline), never in this accept
			// loop; its writes get the same deadline here.
			tc.Conn = tls.Server(c, l.tls)
			_ = c.SetWriteDeadline(tc.allocateBy)
		}
		tc.fr = newTCPFramer(tc.Conn)
		if l.rewriters != nil {
			tc.rewriter = l.rewriters()
		}

		return tc, nil
	}

	// Counted before the close: the client sees the close at once, and a
	// reader of Stats after it must find the refusal counted.
	total := l.refused.Add(1)
	_ = c.Close()
	if l.logDue(&l.lastRefusal, time.Now()) {
		limit := l.caps.maxConns
		if over == "ip" {
			limit = l.caps.maxPerIP
		}
		l.log.Warn("TURN "+l.name+" connection refused: cap reached", "cap", over, "limit", limit,
			"client", client.String(), "refused_total", total)
	}

	return nil, nil
}

// logDue reports whether refusalLogEvery has passed since *last, and if so
// claims the log line.
func (l *tcpListener) logDue(last *atomic.Int64, now time.Time) bool {
	prev := last.Load()

	return now.UnixNano()-prev >= int64(refusalLogEvery) && last.CompareAndSwap(prev, now.UnixNano())
}

// allocated tells the connection from client that it made an allocation:
// from now on only silence closes it.
func (l *tcpListener) allocated(client net.Addr) {
	key, ok := clientKey(client)
	if !ok || !key.tcp {
		return
	}
	l.mu.Lock()
	c := l.conns[key.client]
	l.mu.Unlock()
	if c != nil && !c.allocatedOnce.Swap(true) {
		_ = c.Conn.SetReadDeadline(time.Now().Add(tcpIdleTimeout))
	}
}

// tracking counts the clients whose connection is one of this listener's.
func (l *tcpListener) tracking(clients []netip.AddrPort) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range clients {
		if _, ok := l.conns[c]; ok {
			n++
		}
	}

	return n
}

// closeConns closes every accepted connection, which ends pion's goroutine
// for it; that goroutine then calls tcpConn.Close, which untracks it.
func (l *tcpListener) closeConns() {
	l.mu.Lock()
	l.closed = true
	conns := make([]*tcpConn, 0, len(l.conns))
	for _, c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		// The raw socket: closing a TLS connection would first try to
		// send close_notify to a client that may not be reading.
		_ = c.raw.Close()
	}
}

// open counts connections pion has not closed yet.
func (l *tcpListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()

	return len(l.conns)
}

// untrack forgets c and frees its place under the caps; it runs once per
// admitted connection.
func (l *tcpListener) untrack(c *tcpConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A newer connection from the same client address may have taken c's
	// entry (the client reused its port after the server's close): keep it.
	if l.conns[c.client] == c {
		delete(l.conns, c.client)
	}
	l.caps.release(c.ip)
}

// tcpConn is an accepted TURN-over-TCP (or TLS) connection: framed, its
// requests passed through a requestRewriter, with a deadline to allocate, then an idle timeout, and a write
// timeout.
type tcpConn struct {
	net.Conn            // the TLS server connection over raw, or raw itself
	raw        net.Conn // the accepted TCP connection, for closing it without a word
	l          *tcpListener
	client     netip.AddrPort
	ip         netip.Addr
	fr         *tcpFramer       // read only by pion's read loop for this conn
	rewriter   *requestRewriter // this connection's; nil if the listener has none
	allocateBy time.Time
	// allocatedOnce is set, and the deadline moved to the idle timeout, at
	// the first allocation.
	allocatedOnce atomic.Bool
	writeTimedOut atomic.Bool
	once          sync.Once
}

// Read returns the next whole frame (see tcpFramer) that the rewriter does
// not answer itself. pion calls it from the connection's one read loop,
// which handles each request to completion before it reads again, as a
// UDP listener's does: so one rewriter per connection sees its requests as
// one per listener does over UDP.
func (c *tcpConn) Read(p []byte) (int, error) {
	for {
		c.armReadDeadline()
		fresh := c.fr.left == 0
		n, err := c.fr.read(p)
		if err != nil {
			c.noteReadError(err)

			return n, err
		}
		// Only STUN is rewritten, and only a frame read whole (always, with
		// pion's 1,600-byte buffer): a rewrite must replace all of it.
		if c.rewriter == nil || !fresh || c.fr.left != 0 || p[0]&0xC0 != 0 {
			return n, nil
		}
		m, reply := c.rewriter.request(p, n, allocKey{tcp: true, client: c.client})
		if reply == nil {
			return m, nil
		}
		if _, err := c.write(reply); err != nil {
			return 0, err
		}
	}
}

// armReadDeadline sets the deadline for the next frame: the allocate
// deadline until the first allocation, then the idle timeout.
func (c *tcpConn) armReadDeadline() {
	if c.allocatedOnce.Load() {
		_ = c.Conn.SetReadDeadline(time.Now().Add(tcpIdleTimeout))

		return
	}
	_ = c.Conn.SetReadDeadline(c.allocateBy)
	// allocated may have run between the check and the deadline: it sets
	// the flag before its own deadline, so one of the two is the last.
	if c.allocatedOnce.Load() {
		_ = c.Conn.SetReadDeadline(time.Now().Add(tcpIdleTimeout))
	}
}

// noteReadError counts and logs why the server is about to close the
// connection (pion ends its read loop on any read error).
func (c *tcpConn) noteReadError(err error) {
	switch {
	case errors.Is(err, errTCPFrame):
		c.l.badFrames.Add(1)
		c.l.log.Debug("TURN "+c.l.name+" connection closed: bad frame", "client", c.client.String(), "err", err)
	case errors.Is(err, os.ErrDeadlineExceeded) && !c.allocatedOnce.Load():
		c.l.allocTimeouts.Add(1)
		c.l.log.Debug("TURN "+c.l.name+" connection closed: no allocation in time", "client", c.client.String(),
			"timeout", c.l.allocateTimeout)
	case c.handshaking():
		c.l.handshakes.Add(1)
		c.l.log.Debug("TURN TLS connection closed: handshake failed", "client", c.client.String(), "err", err)
	}
}

// handshaking reports whether c is a TLS connection whose handshake has not
// completed.
func (c *tcpConn) handshaking() bool {
	tc, ok := c.Conn.(*tls.Conn)

	return ok && !tc.ConnectionState().HandshakeComplete
}

// Write sends what pion writes (STUNConn.WriteTo): responses from the read
// loop, and relayed data from the allocation's goroutine. A response the
// rewriter replaces (pionfix_unauthorized.go) goes out replaced.
func (c *tcpConn) Write(p []byte) (int, error) {
	if c.rewriter != nil {
		if b := c.rewriter.response(p); b != nil {
			if _, err := c.write(b); err != nil {
				return 0, err
			}

			return len(p), nil
		}
	}

	return c.write(p)
}

// write sends p, closing the connection if that makes no progress within
// the write timeout; pion's read loop then ends and deletes the allocation.
func (c *tcpConn) write(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.l.writeTimeout))
	n, err := c.Conn.Write(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		// Counted before the close: the close ends pion's read loop, which
		// untracks the connection, and whoever sees it gone must see why.
		if !c.writeTimedOut.Swap(true) {
			c.l.writeTimeouts.Add(1)
			c.l.log.Debug("TURN "+c.l.name+" connection closed: client not reading", "client", c.client.String(),
				"timeout", c.l.writeTimeout)
		}
		_ = c.raw.Close()
	}

	return n, err
}

// Close untracks and closes the connection; pion calls it when its read loop ends.
func (c *tcpConn) Close() error {
	c.once.Do(func() { c.l.untrack(c) })

	return c.Conn.Close()
}
