package server

import (
	"container/list"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostrelay/hostrelay/internal/netkey"
)

// connLimiter caps the open HTTP connections, WebSockets included, so a
// flood of them cannot use up the process's file descriptors. When the cap
// is reached, a new connection takes the place of the one that has waited
// longest without a request in progress (accepted but no complete request
// header yet, or idle between keep-alive requests): under a flood of idle
// connections the flood's oldest make room, and a client that sends its
// request at once, as /healthz probes and browsers do, is served. Only when
// every connection is busy (in a request, or a WebSocket) is the new one
// closed at once.
//
// One client network (netkey.Of: an IPv4 address, an IPv6 /64) may hold
// only perAddr of the connections: past it, a new connection from it takes
// the place of its own longest-waiting one, never another client's, or is
// closed at once if all of its own are busy. Without this, one address
// reopening its connections as fast as they were evicted pushed everyone
// else's out before their request arrived (issue 24, findings 3 and 4).
type connLimiter struct {
	net.Listener
	caps connCaps
	// maxWebSockets keeps some connections for plain requests: the lobby
	// refuses new WebSockets past it, so /healthz and page loads still fit.
	maxWebSockets int
	log           *slog.Logger

	evicted     atomic.Uint64
	refused     atomic.Uint64
	lastLog     atomic.Int64 // unix nanoseconds of the last log line about the cap
	lastAddrLog atomic.Int64 // and about an address's share

	// done is closed with the listener: http.Server.Shutdown closes it
	// before it waits for requests, so past done no connection is new.
	done      chan struct{}
	closeOnce sync.Once

	mu         sync.Mutex
	open       int
	webSockets int
	waiting    list.List // *limitedConn without a request in progress, longest waiting first
	byAddr     map[netip.Addr]*addrConns
}

// connCaps are a listener's limits.
type connCaps struct {
	listener string // which listener, for the log: "http" or "redirect"
	max      int    // open connections
	perAddr  int    // of those, from one client network
	// exempt are addresses not held to perAddr: trusted proxies, which
	// carry many clients each.
	exempt []netip.Prefix
	// refuse, if set, is asked about each new connection's address (not an
	// exempt one's, whose clients' addresses only its requests carry): true
	// closes the connection at once, with a reset, before any HTTP. The
	// lobby's hold on a network that flooded (Hub.RefuseAtAccept).
	refuse func(ip netip.Addr) bool
}

// addrShare is the per-address share of a cap of capacity: a quarter, so
// one address leaves three quarters to everyone else, but at least floor
// and at most the whole cap.
func addrShare(capacity, floor int) int {
	return min(capacity, max(capacity/4, floor))
}

// addrConns are one client network's connections.
type addrConns struct {
	key     netip.Addr
	open    int
	waiting list.List // as connLimiter.waiting, this network's only
}

// capLogEvery spaces the log lines about evicted and refused connections.
const capLogEvery = 10 * time.Second

func newConnLimiter(ln net.Listener, caps connCaps, log *slog.Logger) *connLimiter {
	return &connLimiter{Listener: ln, caps: caps, maxWebSockets: caps.max - max(1, caps.max/8), log: log,
		done: make(chan struct{}), byAddr: make(map[netip.Addr]*addrConns)}
}

// Accept returns the next connection, having made room for it under the cap.
// http.Server calls it from one goroutine.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err // http.Server retries temporary errors (EMFILE) with a backoff
		}
		if l.refusedAtAccept(c) {
			continue
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
	}
}

// refusedAtAccept closes c if caps.refuse says so. A reset rather than a
// FIN: the client learns at once, and the closed socket does not wait in
// TIME_WAIT on the server (a flooder reconnecting 80 times a second would
// keep thousands there).
func (l *connLimiter) refusedAtAccept(c net.Conn) bool {
	if l.caps.refuse == nil {
		return false
	}
	ta, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := ta.AddrPort().Addr().Unmap()
	if l.exempt(ip) || !l.caps.refuse(ip) {
		return false
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
	return true
}

// exempt reports whether ip is a trusted proxy's.
func (l *connLimiter) exempt(ip netip.Addr) bool {
	return slices.ContainsFunc(l.caps.exempt, func(p netip.Prefix) bool { return p.Contains(ip) })
}

// Close closes the listener and done.
func (l *connLimiter) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// addrOf is the client network c counts against, and false if c is not
// held to a share (a trusted proxy, or not TCP).
func (l *connLimiter) addrOf(c net.Conn) (netip.Addr, bool) {
	ta, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	ip := ta.AddrPort().Addr().Unmap()
	if l.exempt(ip) {
		return netip.Addr{}, false
	}
	return netkey.Of(ip), true
}

func (l *connLimiter) admit(c net.Conn) *limitedConn {
	key, shared := l.addrOf(c)
	for {
		l.mu.Lock()
		a := l.byAddr[key] // nil if !shared, or the address has none open
		full := a != nil && a.open >= l.caps.perAddr
		if !full && l.open < l.caps.max {
			l.open++
			if shared {
				if a == nil {
					a = &addrConns{key: key}
					l.byAddr[key] = a
				}
				a.open++
			}
			l.mu.Unlock()
			return &limitedConn{Conn: c, l: l, addr: a}
		}
		// At its share, an address makes room among its own connections.
		waiting := &l.waiting
		if full {
			waiting = &a.waiting
		}
		var victim *limitedConn
		if e := waiting.Front(); e != nil {
			victim = e.Value.(*limitedConn) //nolint:forcetypeassert // only *limitedConn is queued
			victim.unqueueLocked()
		}
		l.mu.Unlock()

		// Counted before the close, so whoever sees the connection closed
		// (the client, a test) sees it counted.
		if victim == nil {
			l.note(full, key, l.refused.Add(1), l.evicted.Load())
			_ = c.Close()
			return nil
		}
		// Its Close frees its place; go round again rather than assume it,
		// since the loop re-checks under the lock.
		l.note(full, key, l.refused.Load(), l.evicted.Add(1))
		_ = victim.Close()
	}
}

// note logs the cap, or an address's share of it (full), being reached, each
// at most once per capLogEvery.
func (l *connLimiter) note(full bool, addr netip.Addr, refused, evicted uint64) {
	lastLog := &l.lastLog
	if full {
		lastLog = &l.lastAddrLog
	}
	now := time.Now().UnixNano()
	last := lastLog.Load()
	if now-last < int64(capLogEvery) || !lastLog.CompareAndSwap(last, now) {
		return
	}
	if full {
		l.log.Warn("HTTP connections per address reached: closing that address's longest-waiting idle connections, refusing its new ones when all are busy",
			"component", "server", "listener", l.caps.listener, "addr", addr, "limit", l.caps.perAddr,
			"evicted_total", evicted, "refused_total", refused)
		return
	}
	l.log.Warn("HTTP connection cap reached: closing the longest-waiting idle connections, refusing when all are busy",
		"component", "server", "listener", l.caps.listener, "limit", l.caps.max,
		"evicted_total", evicted, "refused_total", refused)
}

// connState is the http.Server ConnState hook: it keeps the waiting list and
// the WebSocket count in step with each connection's state.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	// Over HTTPS the server sees the TLS connection wrapped around ours.
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.closed {
		return
	}
	lc.unqueueLocked()
	switch state {
	case http.StateNew, http.StateIdle:
		lc.elem = l.waiting.PushBack(lc)
		if lc.addr != nil {
			lc.addrElem = lc.addr.waiting.PushBack(lc)
		}
	case http.StateHijacked:
		lc.webSocket = true
		l.webSockets++
	case http.StateActive, http.StateClosed:
	}
}

// webSocketsFull reports whether the lobby should refuse another WebSocket.
// Upgrades racing each other can overshoot by a few; the cap itself holds.
func (l *connLimiter) webSocketsFull() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.webSockets >= l.maxWebSockets
}

// counts returns the open connections and how many of them are WebSockets.
func (l *connLimiter) counts() (open, webSockets int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.webSockets
}

// limitedConn is an HTTP connection counted by a connLimiter until closed,
// whether the HTTP server or, after a hijack, the WebSocket closes it.
type limitedConn struct {
	net.Conn
	l *connLimiter

	addr *addrConns // its client network's, nil if not held to a share

	// Guarded by l.mu.
	elem      *list.Element // in l.waiting, or nil
	addrElem  *list.Element // in addr.waiting, or nil
	webSocket bool
	closed    bool
}

// unqueueLocked takes c off the waiting lists; l.mu is held.
func (c *limitedConn) unqueueLocked() {
	if c.elem != nil {
		c.l.waiting.Remove(c.elem)
		c.elem = nil
	}
	if c.addrElem != nil {
		c.addr.waiting.Remove(c.addrElem)
		c.addrElem = nil
	}
}

func (c *limitedConn) Close() error {
	l := c.l
	l.mu.Lock()
	if !c.closed {
		c.closed = true
		l.open--
		c.unqueueLocked()
		if c.webSocket {
			l.webSockets--
		}
		if c.addr != nil {
			// An address with nothing open is forgotten, so addresses
			// sprayed at the listener do not grow the map.
			if c.addr.open--; c.addr.open == 0 {
				delete(l.byAddr, c.addr.key)
			}
		}
	}
	l.mu.Unlock()
	return c.Conn.Close()
}
