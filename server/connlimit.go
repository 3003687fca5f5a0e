package server

import (
	"container/list"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
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
type connLimiter struct {
	net.Listener
	max int
	// maxWebSockets keeps some connections for plain requests: the lobby
	// refuses new WebSockets past it, so /healthz and page loads still fit.
	maxWebSockets int
	log           *slog.Logger

	evicted atomic.Uint64
	refused atomic.Uint64
	lastLog atomic.Int64 // unix nanoseconds of the last log line

	mu         sync.Mutex
	open       int
	webSockets int
	waiting    list.List // *limitedConn without a request in progress, longest waiting first
}

// capLogEvery spaces the log lines about evicted and refused connections.
const capLogEvery = 10 * time.Second

func newConnLimiter(ln net.Listener, maxConns int, log *slog.Logger) *connLimiter {
	return &connLimiter{Listener: ln, max: maxConns, maxWebSockets: maxConns - max(1, maxConns/8), log: log}
}

// Accept returns the next connection, having made room for it under the cap.
// http.Server calls it from one goroutine.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err // http.Server retries temporary errors (EMFILE) with a backoff
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
	}
}

func (l *connLimiter) admit(c net.Conn) *limitedConn {
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			return &limitedConn{Conn: c, l: l}
		}
		var victim *limitedConn
		if e := l.waiting.Front(); e != nil {
			victim = e.Value.(*limitedConn) //nolint:forcetypeassert // only *limitedConn is queued
			l.waiting.Remove(e)
			victim.elem = nil
		}
		l.mu.Unlock()

		// Counted before the close, so whoever sees the connection closed
		// (the client, a test) sees it counted.
		if victim == nil {
			l.note(l.refused.Add(1), l.evicted.Load())
			_ = c.Close()
			return nil
		}
		// Its Close frees its place; go round again rather than assume it,
		// since the loop re-checks under the lock.
		l.note(l.refused.Load(), l.evicted.Add(1))
		_ = victim.Close()
	}
}

// note logs the cap being reached, at most once per capLogEvery.
func (l *connLimiter) note(refused, evicted uint64) {
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if now-last < int64(capLogEvery) || !l.lastLog.CompareAndSwap(last, now) {
		return
	}
	l.log.Warn("HTTP connection cap reached: closing the longest-waiting idle connections, refusing when all are busy",
		"component", "server", "limit", l.max, "evicted_total", evicted, "refused_total", refused)
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
	if lc.elem != nil {
		l.waiting.Remove(lc.elem)
		lc.elem = nil
	}
	switch state {
	case http.StateNew, http.StateIdle:
		lc.elem = l.waiting.PushBack(lc)
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

	// Guarded by l.mu.
	elem      *list.Element // in l.waiting, or nil
	webSocket bool
	closed    bool
}

func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	if !c.closed {
		c.closed = true
		c.l.open--
		if c.elem != nil {
			c.l.waiting.Remove(c.elem)
			c.elem = nil
		}
		if c.webSocket {
			c.l.webSockets--
		}
	}
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// SyscallConn is the socket's, so that an idle WebSocket can wait for it to
// be readable with no goroutine parked in a read (signaling's readiness):
// limitedConn reads straight from the socket, buffering nothing.
func (c *limitedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("not a socket")
	}
	return sc.SyscallConn()
}
