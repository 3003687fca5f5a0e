package signaling

import (
	"encoding/binary"
	"io"
	"sync/atomic"
)

// frameWatch sits between a link's socket and coder/websocket's read buffer
// and follows the client's frames as their bytes pass, so that an idle link
// keeps no goroutine parked in coder/websocket's Read.
//
// A link waits for its socket to become readable on a goroutine that stays
// shallow (2 KiB of stack; see readiness), and only then reads a message on
// a goroutine of its own. coder/websocket handles control frames inside
// Read and reads on for the next data frame: a pong, which every ping
// brings, would leave that read parked 2 KiB deep until the client's next
// message, which for an idle player may be never. So when Read asks for more
// bytes right after a control frame, between messages, frameWatch hands it
// an empty binary frame of its own instead (the wake frame). Read returns
// it, the link claims it with woke and goes back to waiting for the socket.
//
// frameWatch only counts: coder/websocket checks the frames (masking,
// opcodes, lengths against the read limit) and closes the connection on a
// bad one. Whatever the bytes, frameWatch holds at most one frame header and
// a few counters, and it never makes a wake frame inside a message or a
// frame. Its Read is called under coder/websocket's read lock; only woken is
// shared.
type frameWatch struct {
	src   io.Reader
	ahead []byte // read ahead of the upgrade by the HTTP server: read first

	hdr        [maxFrameHeader]byte // the header being read: hdr[:have] of need
	have, need int
	left       uint64 // payload bytes of the current frame still to come
	control    bool   // the current frame is a control frame
	fragmented bool   // inside a data message whose final frame has not come
	// afterControl: the bytes passed so far end with a whole control frame.
	afterControl bool
	wakeLeft     int // bytes of a wake frame still to hand over
	woken        atomic.Bool
}

// maxFrameHeader is the longest WebSocket frame header: 2 bytes, a 64-bit
// length, a 4-byte mask.
const maxFrameHeader = 14

// wakeFrame is a final binary frame with no payload, masked (with a zero
// key) as frames from a client must be.
const wakeFrame = "\x82\x80\x00\x00\x00\x00"

func newFrameWatch(src io.Reader) *frameWatch { return &frameWatch{src: src} }

// Read hands over a wake frame if one is due, else reads src and follows
// what it read.
func (w *frameWatch) Read(p []byte) (int, error) {
	if w.wakeLeft == 0 && w.afterControl && w.between() {
		w.afterControl = false
		w.wakeLeft = len(wakeFrame)
		w.woken.Store(true)
	}
	if w.wakeLeft > 0 {
		n := copy(p, wakeFrame[len(wakeFrame)-w.wakeLeft:])
		w.wakeLeft -= n
		return n, nil
	}
	if len(w.ahead) > 0 {
		n := copy(p, w.ahead)
		w.observe(p[:n])
		if w.ahead = w.ahead[n:]; len(w.ahead) == 0 {
			w.ahead = nil
		}
		return n, nil
	}
	n, err := w.src.Read(p)
	w.observe(p[:n])
	return n, err
}

// holds reports whether the watch has bytes to hand over that the socket
// will not signal.
func (w *frameWatch) holds() bool { return w.wakeLeft > 0 || len(w.ahead) > 0 }

// between reports whether the bytes passed so far end between messages: no
// frame header or payload half read, no fragmented message open.
func (w *frameWatch) between() bool { return w.have == 0 && w.left == 0 && !w.fragmented }

// woke reports, once, whether the message coder/websocket just returned was
// a wake frame rather than the client's.
func (w *frameWatch) woke() bool { return w.woken.Swap(false) }

// observe follows the frames in p, the next bytes of the stream.
func (w *frameWatch) observe(p []byte) {
	for len(p) > 0 {
		if w.left > 0 {
			k := min(uint64(len(p)), w.left)
			w.left -= k
			p = p[k:]
			if w.left == 0 {
				w.frameDone()
			}
			continue
		}
		w.afterControl = false
		if w.have == 0 {
			w.need = 2
		}
		w.hdr[w.have] = p[0]
		w.have++
		p = p[1:]
		if w.have == 2 {
			w.need = headerLength(w.hdr[1])
		}
		if w.have == w.need {
			w.headerDone()
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
func (w *frameWatch) headerDone() {
	fin, opcode := w.hdr[0]&0x80 != 0, w.hdr[0]&0x0f
	switch n := w.hdr[1] & 0x7f; n {
	case 126:
		w.left = uint64(binary.BigEndian.Uint16(w.hdr[2:4]))
	case 127:
		w.left = binary.BigEndian.Uint64(w.hdr[2:10])
	default:
		w.left = uint64(n)
	}
	w.have, w.need = 0, 0
	w.control = opcode&0x8 != 0
	if !w.control {
		w.fragmented = !fin
	}
	if w.left == 0 {
		w.frameDone()
	}
}

// frameDone ends a frame whose payload has all passed.
func (w *frameWatch) frameDone() { w.afterControl = w.control }
