package signaling

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"sync"
)

// linkBuffer is the size of a connection's read buffer. coder/websocket
// keeps the buffers the HTTP server hands over on hijack (4 KiB each) for
// the connection's whole life, and an idle connection should not pay for
// them. 16 bytes (bufio's least) hold any frame header: a frame then takes
// two reads, its header and start, then the rest straight from the socket
// into coder/websocket's own buffer. Issue 16 took it from 1 KiB to 16 B,
// and measured the lobby fan-out (a read per chat line, ten writes) with it.
const linkBuffer = 16

// writeBuffer is the size of the buffer coder/websocket writes through: a
// frame header fits. The frames themselves gather in the link's
// frameWriter, from a pool, only while the link's writer runs.
const writeBuffer = 16

// smallBuffers makes Hijack return small buffers for the hijacked
// connection; the rest of the ResponseWriter is w's. out is the frameWriter
// under the write buffer, once hijacked.
type smallBuffers struct {
	http.ResponseWriter
	pool *sync.Pool // the hub's, for frameWriter

	// Once hijacked: the frameWriter under the write buffer, the read
	// buffer, the frameWatch under it, and the socket's readiness (nil
	// where a link cannot wait for it).
	out   *frameWriter
	in    *bufio.Reader
	watch *frameWatch
	ready *readiness
}

// Unwrap lets http.ResponseController and coder/websocket see w.
func (s *smallBuffers) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Hijack hijacks w. The connection it returns reads through a frameWatch,
// which first hands on any bytes the HTTP server already read ahead;
// coder/websocket puts its read buffer straight on it. The buffer must be
// empty on return: coder/websocket moves what it holds into a reader of its
// own, where a link waiting for its socket would not see it.
func (s *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	s.out = &frameWriter{conn: conn, pool: s.pool}
	s.ready = newReadiness(conn)
	s.watch = newFrameWatch(conn)
	if n := brw.Reader.Buffered(); n > 0 {
		ahead, _ := brw.Reader.Peek(n)
		s.watch.ahead = bytes.Clone(ahead)
	}
	watched := &watchedConn{Conn: conn, watch: s.watch}
	s.in = bufio.NewReaderSize(watched, linkBuffer)
	return watched, bufio.NewReadWriter(s.in, bufio.NewWriterSize(s.out, writeBuffer)), nil
}

// watchedConn is a hijacked connection whose reads pass through a
// frameWatch.
type watchedConn struct {
	net.Conn
	watch *frameWatch
}

func (c *watchedConn) Read(p []byte) (int, error) { return c.watch.Read(p) }

// frameWriter is what coder/websocket's write buffer flushes to. While the
// link's writer holds it, writes gather in a pooled buffer and go out in one
// write at release: a frame bigger than the write buffer still costs one
// syscall, several queued frames cost one between them, and an idle link
// holds no buffer at all. Otherwise (a close frame, a ping, a pong) writes
// go straight to the connection. Frames stay in order: coder/websocket
// writes one frame at a time, and hold and release take the same lock.
type frameWriter struct {
	conn net.Conn
	pool *sync.Pool // of *[]byte, the hub's (newFramePool)
	mu   sync.Mutex
	held *[]byte // from pool while held; nil otherwise
}

// newFramePool makes a hub's pool of frameWriter buffers.
func newFramePool() sync.Pool {
	return sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}
}

// Buffers that grew past maxPooledFrame are dropped rather than pooled.
const maxPooledFrame = 64 << 10

func (w *frameWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		return w.conn.Write(p)
	}
	*w.held = append(*w.held, p...)
	return len(p), nil
}

// hold starts gathering writes.
func (w *frameWriter) hold() {
	w.mu.Lock()
	if w.held == nil {
		w.held = w.pool.Get().(*[]byte) //nolint:forcetypeassert // the pool's only type
	}
	w.mu.Unlock()
}

// heldBytes is how much is gathered so far.
func (w *frameWriter) heldBytes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		return 0
	}
	return len(*w.held)
}

// release writes what was gathered and goes back to writing through.
func (w *frameWriter) release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.held
	if b == nil {
		return nil
	}
	w.held = nil
	var err error
	if len(*b) > 0 {
		_, err = w.conn.Write(*b)
	}
	if cap(*b) <= maxPooledFrame {
		*b = (*b)[:0]
		w.pool.Put(b)
	}
	return err
}
