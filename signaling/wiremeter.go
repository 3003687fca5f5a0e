package signaling

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
)

// MaxFramesPerMessage is how many WebSocket frames one client message may
// take. Browsers and coder/websocket's Write send a message as one frame; a
// streaming writer with a 4 KiB buffer needs 5 for the largest (16 KiB)
// message. Past it the connection closes with 1008: otherwise one endless
// message of empty continuation frames (1.06 M frames a second were sent)
// costs the server a core and never reaches a handler, so no message limit
// sees it.
const MaxFramesPerMessage = 32

// errWireFlood ends a link's reads once its client has sent more frames than
// its budget allows (see wireMeter). The link closes with 1008.
var errWireFlood = errors.New("signaling: too many frames")

// meteredConn is a hijacked connection whose bytes pass a wireMeter on their
// way to coder/websocket, which reads them as it would the socket's: the
// meter only counts, and ends the reads once the client floods.
type meteredConn struct {
	net.Conn
	// ahead is what the HTTP server read past the upgrade request (the
	// Hijack's buffered bytes, which net/http documents): the client's
	// first frames, passed first.
	ahead []byte
	meter wireMeter
}

func (c *meteredConn) Read(p []byte) (int, error) {
	if len(c.ahead) > 0 {
		n := copy(p, c.ahead)
		if c.ahead = c.ahead[n:]; len(c.ahead) == 0 {
			c.ahead = nil
		}
		if err := c.meter.observe(p[:n]); err != nil {
			return 0, err
		}
		return n, nil
	}
	n, err := c.Conn.Read(p)
	if merr := c.meter.observe(p[:n]); merr != nil {
		return 0, merr
	}
	return n, err
}

// frameScanner follows the WebSocket frames (RFC 6455 §5.2) in a client's
// byte stream as the bytes pass, without changing them: whatever the bytes,
// it holds at most one frame header and a few counters. coder/websocket
// checks the frames themselves (masking, opcodes, lengths) and closes the
// connection on a bad one; the scanner only needs to find where each header
// is.
type frameScanner struct {
	hdr        [maxFrameHeader]byte // the header being read: hdr[:have] of need
	have, need int
	left       uint64 // payload bytes of the current frame still to come
	control    bool   // the current frame is a control frame
	fragmented bool   // inside a data message whose final frame has not come
}

// maxFrameHeader is the longest WebSocket frame header: 2 bytes, a 64-bit
// length, a 4-byte mask.
const maxFrameHeader = 14

// opPong is a pong frame's opcode (RFC 6455 §5.5.3).
const opPong = 0xa

// frameHead is what a scanned frame header says.
type frameHead struct {
	opcode byte
	fin    bool
}

func (h frameHead) isControl() bool      { return h.opcode&0x8 != 0 }
func (h frameHead) isContinuation() bool { return h.opcode == 0 }

// between reports whether the bytes passed so far end between messages: no
// frame header or payload half read, no fragmented message open.
func (s *frameScanner) between() bool { return s.have == 0 && s.left == 0 && !s.fragmented }

// scan follows the frames in p, the next bytes of the stream, and calls
// onHead for each header as it completes.
func (s *frameScanner) scan(p []byte, onHead func(frameHead)) {
	for len(p) > 0 {
		if s.left > 0 {
			k := min(uint64(len(p)), s.left)
			s.left -= k
			p = p[k:]
			continue
		}
		if s.have == 0 {
			s.need = 2
		}
		s.hdr[s.have] = p[0]
		s.have++
		p = p[1:]
		if s.have == 2 {
			s.need = headerLength(s.hdr[1])
		}
		if s.have == s.need {
			onHead(s.headerDone())
		}
	}
}

// headerLength is the length of a frame header whose second byte is b.
func headerLength(b byte) int {
	n := 2
	switch b & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b&0x80 != 0 {
		n += 4
	}
	return n
}

// headerDone takes in a complete header.
func (s *frameScanner) headerDone() frameHead {
	h := frameHead{opcode: s.hdr[0] & 0x0f, fin: s.hdr[0]&0x80 != 0}
	switch n := s.hdr[1] & 0x7f; n {
	case 126:
		s.left = uint64(binary.BigEndian.Uint16(s.hdr[2:4]))
	case 127:
		s.left = binary.BigEndian.Uint64(s.hdr[2:10])
	default:
		s.left = uint64(n)
	}
	s.have, s.need = 0, 0
	s.control = h.isControl()
	if !s.control {
		s.fragmented = !h.fin
	}
	return h
}

// wireMeter charges every frame a client sends to its budget, including the
// frames that never reach a handler: control frames (an unsolicited pong
// costs as much to take in as a message, and 211k a second kept a core
// busy), continuation frames and the empty ones. A message's first frame is
// charged as the message when it is handled; each further frame of it, and
// each control frame but the pong a ping of ours is waiting for, costs one
// token of the session's message rate. A
// message of more than MaxFramesPerMessage frames, MaxRefusedInARow frames
// in a row past the budget, or more than MessageBurst such frames before
// hello end the link's reads with errWireFlood, and the link closes with
// 1008 as a message flood does.
//
// Its methods run under coder/websocket's read lock, one at a time.
type wireMeter struct {
	scan frameScanner
	// link is the link whose budget is charged; set by newLink, before the
	// first read.
	link *link
	// frames is how many frames the message being read has taken so far.
	frames int
	// over is how many frames in a row found the budget empty; before
	// hello, how many frames hello's absence left uncharged.
	over    int
	flooded atomic.Bool
	// why is the rule that flooded, for the close reason and the log.
	why string
}

// observe follows p, the client's next bytes, and reports errWireFlood once
// the client went past its budget.
func (m *wireMeter) observe(p []byte) error {
	if m.flooded.Load() {
		return errWireFlood
	}
	m.scan.scan(p, m.frame)
	if m.flooded.Load() {
		return errWireFlood
	}
	return nil
}

// frame charges one frame header.
func (m *wireMeter) frame(h frameHead) {
	if m.link == nil || m.flooded.Load() {
		return // no link yet: nothing to charge (the fuzz test's scan)
	}
	switch {
	case h.opcode == opPong && m.link.pongDue.CompareAndSwap(true, false):
		return // the answer to our ping
	case h.isControl():
	case h.isContinuation():
		m.frames++
		if m.frames > MaxFramesPerMessage {
			m.flood(limitFramesPerMessage, fmt.Sprintf("a message of more than %d frames", MaxFramesPerMessage))
			return
		}
	default:
		m.frames = 1
		return // the message is charged when it is handled
	}
	if s := m.link.metered.Load(); s != nil {
		if s.allowMessage() {
			m.over = 0
			return
		}
		if m.over++; m.over >= m.link.hub.cfg.MaxRefusedInARow {
			m.flood(limitMessagesPerSession, "too many frames")
		}
		return
	}
	if m.over++; m.over > m.link.hub.cfg.MessageBurst {
		m.flood(limitFramesBeforeHello, "too many frames before hello")
	}
}

func (m *wireMeter) flood(limit rateLimit, why string) {
	m.why = why
	m.flooded.Store(true)
	m.link.hub.counters.limited(limit)
}
