package signaling

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"sync"
)

// linkBuffer is the size of the read buffer Hijack hands over. The HTTP
// server's are 4 KiB each, kept for the connection's whole life by whoever
// reads through them, and an idle connection should not pay for them. 16
// bytes (bufio's least) hold any frame header: a frame then takes two
// reads, its header and start, then the rest straight from the socket.
// Issue 16 took it from 1 KiB to 16 B, and measured the lobby fan-out (a
// read per chat line, ten writes) with it.
const linkBuffer = 16

// writeBuffer is the size of the buffer coder/websocket writes through: a
// frame header fits. The frames themselves gather in the link's
// frameWriter, from a pool, only while the link's writer runs.
const writeBuffer = 16

// smallBuffers makes Hijack return small buffers for the hijacked
// connection; the rest of the ResponseWriter is w's. Once hijacked, out is
// the frameWriter under the write buffer and conn the metered connection
// under the read buffer.
type smallBuffers struct {
	http.ResponseWriter
	pool *sync.Pool // the hub's, for frameWriter

	out  *frameWriter
	conn *meteredConn
}

// Unwrap lets http.ResponseController and coder/websocket see w.
func (s *smallBuffers) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Hijack hijacks w. The connection it returns reads through the link's
// wire meter, which first hands on any bytes the HTTP server already read
// ahead, so that whatever buffer coder/websocket reads through, every frame
// of the client's passes the meter.
func (s *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	s.out = &frameWriter{conn: conn, pool: s.pool}
	s.conn = &meteredConn{Conn: conn}
	if n := brw.Reader.Buffered(); n > 0 {
		ahead, _ := brw.Reader.Peek(n)
		s.conn.ahead = bytes.Clone(ahead)
	}
	return s.conn, bufio.NewReadWriter(bufio.NewReaderSize(s.conn, linkBuffer), bufio.NewWriterSize(s.out, writeBuffer)), nil
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
