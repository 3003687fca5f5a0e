package signaling

import (
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

	// meter follows the client's frames (not the wake frames) and charges
	// them to the link's budget; its scanner tells where the stream is.
	meter    wireMeter
	wakeLeft int // bytes of a wake frame still to hand over
	woken    atomic.Bool
}

// wakeFrame is a final binary frame with no payload, masked (with a zero
// key) as frames from a client must be.
const wakeFrame = "\x82\x80\x00\x00\x00\x00"

func newFrameWatch(src io.Reader) *frameWatch { return &frameWatch{src: src} }

// Read hands over a wake frame if one is due, else reads src and follows
// what it read.
func (w *frameWatch) Read(p []byte) (int, error) {
	if w.wakeLeft == 0 && w.meter.scan.afterControl && w.meter.scan.between() {
		w.meter.scan.afterControl = false
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
		if w.ahead = w.ahead[n:]; len(w.ahead) == 0 {
			w.ahead = nil
		}
		if err := w.meter.observe(p[:n]); err != nil {
			return 0, err
		}
		return n, nil
	}
	n, err := w.src.Read(p)
	if merr := w.meter.observe(p[:n]); merr != nil {
		return 0, merr
	}
	return n, err
}

// holds reports whether the watch has bytes to hand over that the socket
// will not signal.
func (w *frameWatch) holds() bool { return w.wakeLeft > 0 || len(w.ahead) > 0 }

// woke reports, once, whether the message coder/websocket just returned was
// a wake frame rather than the client's.
func (w *frameWatch) woke() bool { return w.woken.Swap(false) }
