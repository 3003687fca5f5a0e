package turn

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Patch: TURN over TCP is split into frames here, not by pion.
//
// What pion does: TURN over TCP is a stream of STUN messages and ChannelData
// messages back to back (RFC 8656 §12.5). pion/turn v4.1.4 (and v5.1.0)
// splits it in STUNConn with 16-bit arithmetic: a STUN header declaring
// 0xFFEC bytes, or ChannelData declaring 0xFFFC (padded to 4), gives a frame
// size of 0, and its read loop then hands out empty frames forever without
// reading again. That pins a core per connection, and the connection can no
// longer be closed from outside (Close times out). Upstream: pion/turn#593
// (open). pion also tests for STUN first, by the magic cookie alone, so
// ChannelData whose data starts with the cookie is misread (see ambiguous).
//
// How: tcpFramer splits the stream itself and gives pion one whole, checked
// frame per Read (tcpConn.Read); pion's splitter then only ever holds
// exactly that frame, and computes the same size for it as we did.
//
// Canary: TestUpstreamCanary_TCPFrameLength fails once pion's STUNConn no
// longer hands out an empty frame for a length that wraps (#593 merged and
// released). Then delete this file and its test, and have tcpConn.Read read
// its connection directly. TestUpstreamCanary_TCPFrameCookie says
// whether pion still misreads ChannelData carrying the cookie; it does no
// harm beyond that client's own connection once #593 is fixed.

// maxTCPFrame is the largest frame tcpFramer passes on: anything larger pion
// would drop anyway, so no client can rely on it, and refusing it bounds what
// a connection buffers. Browsers send DTLS records of ~1,200 bytes.
const maxTCPFrame = inboundMTU - 1

const (
	stunHeaderLen        = 20
	channelDataHeaderLen = 4
	stunMagicCookie      = 0x2112A442
)

// tcpFramer reads whole TURN frames from a TCP stream.
type tcpFramer struct {
	r    *bufio.Reader
	left int // bytes of the current frame not returned yet
}

func newTCPFramer(r io.Reader) *tcpFramer {
	return &tcpFramer{r: bufio.NewReaderSize(r, inboundMTU)}
}

// read returns the next frame, or as much of it as fits p. Any frame pion
// could misread ends the stream with an error wrapping errTCPFrame.
func (f *tcpFramer) read(p []byte) (int, error) {
	if f.left == 0 {
		size, err := f.next()
		if err != nil {
			return 0, err
		}
		f.left = size
	}
	// next peeked the whole frame, so it is buffered: one Read returns it.
	n, err := f.r.Read(p[:min(len(p), f.left)])
	f.left -= n

	return n, err
}

// next waits for the whole frame at the head of the stream, checks it, and
// returns its size.
func (f *tcpFramer) next() (int, error) {
	hdr, err := f.r.Peek(channelDataHeaderLen)
	if err != nil {
		return 0, err
	}
	size, err := frameSize(hdr)
	if err != nil {
		return 0, err
	}
	if size > channelDataHeaderLen {
		// STUN: the rest of the header holds the magic cookie, which frameSize
		// checks; ChannelData: see ambiguous.
		if hdr, err = f.r.Peek(min(size, stunHeaderLen)); err != nil {
			return 0, err
		}
		if size, err = frameSize(hdr); err != nil {
			return 0, err
		}
	}
	if _, err := f.r.Peek(size); err != nil {
		return 0, err
	}

	return size, nil
}

// frameSize returns the size of the frame that starts with hdr (at least 4
// bytes; for STUN, the 20-byte header; for ChannelData, its first 8 bytes or
// the whole frame if shorter), or why it is refused. It never returns more
// than maxTCPFrame.
func frameSize(hdr []byte) (int, error) {
	first := binary.BigEndian.Uint16(hdr[0:2])
	length := int(binary.BigEndian.Uint16(hdr[2:4]))
	switch first >> 14 {
	case 0b01: // ChannelData, channel 0x4000..0x7FFF as pion accepts
		// Over TCP the data is padded to 4 bytes (RFC 8656 §12.5).
		size := channelDataHeaderLen + (length+3)&^3
		if size > maxTCPFrame {
			return 0, fmt.Errorf("%w: ChannelData length %d, largest %d", errTCPFrame, length, maxTCPFrame-channelDataHeaderLen)
		}
		if ambiguous(hdr) {
			return 0, fmt.Errorf("%w: ChannelData whose data starts with the STUN magic cookie", errTCPFrame)
		}

		return size, nil
	case 0b00: // STUN (RFC 8489 §5: the two top bits are zero)
		if len(hdr) >= stunHeaderLen && binary.BigEndian.Uint32(hdr[4:8]) != stunMagicCookie {
			return 0, fmt.Errorf("%w: STUN header without the magic cookie", errTCPFrame)
		}
		// Attributes are padded to 4 bytes, so the length always is.
		if length%4 != 0 {
			return 0, fmt.Errorf("%w: STUN length %d is not a multiple of 4", errTCPFrame, length)
		}
		if size := stunHeaderLen + length; size <= maxTCPFrame {
			return size, nil
		}

		return 0, fmt.Errorf("%w: STUN length %d, largest %d", errTCPFrame, length, maxTCPFrame-stunHeaderLen)
	default:
		return 0, fmt.Errorf("%w: first bytes %#04x are neither STUN nor ChannelData", errTCPFrame, first)
	}
}

// ambiguous reports whether ChannelData carries the STUN magic cookie where a
// STUN header has it. pion v4.1.4 tests for STUN first, by the cookie alone,
// so it would read such a frame as STUN with another size than ours and lose
// step with the stream, after which any bytes could reach it as a header.
// WebRTC never sends it: DTLS records start with a content type of 20..25.
func ambiguous(hdr []byte) bool {
	return len(hdr) >= 8 && binary.BigEndian.Uint32(hdr[4:8]) == stunMagicCookie
}
