package signaling

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
)

// linkBuffer is the size of a connection's read and write buffers. coder/
// websocket keeps the buffers the HTTP server hands over on hijack (4 KiB
// each) for the connection's whole life; lobby frames are small, and an idle
// connection should not pay 8 KiB for them. A frame that fits (header and
// body: a chat line, a player update, a ping) still takes one read or one
// write; a larger one (an SDP offer, a room list) takes two, the second
// straight to or from the socket. Issue 16 took them from 1 KiB to 256 B.
const linkBuffer = 256

// smallBuffers makes Hijack return linkBuffer-sized buffers for the
// hijacked connection; the rest of the ResponseWriter is w's.
type smallBuffers struct{ http.ResponseWriter }

// Unwrap lets http.ResponseController and coder/websocket see w.
func (s smallBuffers) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Hijack hijacks w and moves any bytes the HTTP server already read ahead
// into the new reader's buffer, where coder/websocket looks for them.
func (s smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	n := brw.Reader.Buffered()
	if n == 0 {
		// The usual case: nothing read ahead, no reader to chain.
		return conn, bufio.NewReadWriter(bufio.NewReaderSize(conn, linkBuffer), bufio.NewWriterSize(conn, linkBuffer)), nil
	}
	ahead, _ := brw.Reader.Peek(n)
	ahead = bytes.Clone(ahead)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(ahead), conn), max(linkBuffer, n))
	if _, err := r.Peek(n); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	return conn, bufio.NewReadWriter(r, bufio.NewWriterSize(conn, linkBuffer)), nil
}
