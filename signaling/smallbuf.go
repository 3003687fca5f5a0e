package signaling

import (
	"bufio"
	"bytes"
	"io"
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
	out  *frameWriter
}

// Unwrap lets http.ResponseController and coder/websocket see w.
func (s *smallBuffers) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Hijack hijacks w and moves any bytes the HTTP server already read ahead
// into the new reader's buffer, where coder/websocket looks for them.
func (s *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	s.out = &frameWriter{conn: conn, pool: s.pool}
	w := bufio.NewWriterSize(s.out, writeBuffer)
	n := brw.Reader.Buffered()
	if n == 0 {
		// The usual case: nothing read ahead, no reader to chain.
		return conn, bufio.NewReadWriter(bufio.NewReaderSize(conn, linkBuffer), w), nil
	}
	ahead, _ := brw.Reader.Peek(n)
	ahead = bytes.Clone(ahead)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(ahead), conn), max(linkBuffer, n))
	if _, err := r.Peek(n); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	return conn, bufio.NewReadWriter(r, w), nil
}

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
