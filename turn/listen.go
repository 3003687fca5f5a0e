package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// samePortAttempts bounds retries when the TCP port matching a fresh UDP port
// is already taken by someone else.
const samePortAttempts = 5

// tcpIdleTimeout closes TURN-over-TCP connections that stay silent this long.
// pion never times them out, so each silent connection would hold a goroutine
// and a descriptor forever. Live WebRTC sessions send ICE consent checks
// every few seconds, and an allocation not refreshed for 10 minutes (the
// default lifetime) is gone anyway.
const tcpIdleTimeout = 15 * time.Minute

// listen opens the TURN listeners named in cfg: udpN UDP sockets sharing
// one port (SO_REUSEPORT, one pion read loop each) and a TCP listener;
// either kind may be absent if its address is empty.
func listen(ctx context.Context, cfg Config) ([]*net.UDPConn, *tcpListener, error) {
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
			return udp, newTCPListener(ln, cfg), nil
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

// tcpListener frames what accepted connections send (tcpFramer). It also
// tracks them because pion's Server.Close closes only the listener: accepted
// connections, and the goroutine reading each, would outlive the server.
type tcpListener struct {
	net.Listener
	log *slog.Logger

	badFrames atomic.Uint64 // closed for a frame tcpFramer refused

	mu     sync.Mutex
	closed bool
	conns  map[*tcpConn]struct{} // accepted and not yet closed by pion
}

func newTCPListener(ln net.Listener, cfg Config) *tcpListener {
	return &tcpListener{Listener: ln, log: cfg.Logger.With("component", "turn"), conns: make(map[*tcpConn]struct{})}
}

// Accept returns the next connection, tracked.
func (l *tcpListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &tcpConn{Conn: c, l: l, fr: newTCPFramer(c)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.Close()

		return nil, net.ErrClosed
	}
	l.conns[tc] = struct{}{}

	return tc, nil
}

// closeConns closes every accepted connection, which ends pion's goroutine
// for it; that goroutine then calls tcpConn.Close, which untracks it.
func (l *tcpListener) closeConns() {
	l.mu.Lock()
	l.closed = true
	conns := make([]*tcpConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Conn.Close()
	}
}

// open counts connections pion has not closed yet.
func (l *tcpListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()

	return len(l.conns)
}

// tcpConn is an accepted TURN-over-TCP connection, framed, with an idle timeout.
type tcpConn struct {
	net.Conn
	l    *tcpListener
	fr   *tcpFramer // read only by pion's read loop for this conn
	once sync.Once
}

// Read extends the idle deadline and returns the next whole frame (see
// tcpFramer). pion calls it from the connection's one read loop, and ends
// that loop on any error.
func (c *tcpConn) Read(p []byte) (int, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(tcpIdleTimeout))
	n, err := c.fr.read(p)
	if errors.Is(err, errTCPFrame) {
		c.l.badFrames.Add(1)
		c.l.log.Debug("TURN TCP connection closed: bad frame", "client", c.RemoteAddr().String(), "err", err)
	}

	return n, err
}

// Close untracks and closes the connection; pion calls it when its read loop ends.
func (c *tcpConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})

	return c.Conn.Close()
}
