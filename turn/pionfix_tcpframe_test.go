package turn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"testing/iotest"
	"time"

	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// wrappingFrames are the two 20-byte headers whose frame size pion/turn
// v4.1.4's STUNConn computes in 16 bits as 0: a STUN header declaring 0xFFEC
// bytes (0xFFEC+20 = 0x10000) and ChannelData declaring 0xFFFC (padded to
// 0xFFFC, +4 = 0x10000).
func wrappingFrames() map[string][]byte {
	stun := make([]byte, 20)
	binary.BigEndian.PutUint16(stun[0:], 0x0001) // Binding request
	binary.BigEndian.PutUint16(stun[2:], 0xFFEC)
	binary.BigEndian.PutUint32(stun[4:], 0x2112A442)
	channel := make([]byte, 20)
	binary.BigEndian.PutUint16(channel[0:], 0x4000)
	binary.BigEndian.PutUint16(channel[2:], 0xFFFC)

	return map[string][]byte{"STUN length 0xFFEC": stun, "ChannelData length 0xFFFC": channel}
}

// closedByServer reports whether the server closed c: a read ends in EOF
// (or a reset) rather than the deadline.
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(testwait.Within))
	_, err := io.Copy(io.Discard, c)
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		return false
	}

	return true
}

// TestTCPWrappingFrameClosesConnection: each frame whose size wraps in pion's
// framer closes its connection, the server stops reading it (no connection
// left open, so no read loop spinning on empty frames), keeps serving TCP
// clients, and closes cleanly.
func TestTCPWrappingFrameClosesConnection(t *testing.T) {
	for name, frame := range wrappingFrames() {
		t.Run(name, func(t *testing.T) {
			srv, fs := newServer(t)
			c, err := net.Dial("tcp", srv.TCPAddr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(frame); err != nil {
				t.Fatal(err)
			}
			if !closedByServer(t, c) {
				t.Fatal("the server kept the connection open")
			}
			testwait.For(t, "the server to forget the connection", func() bool { return srv.tcp.open() == 0 })

			fs.join("honest", "room")
			allocate(t, newTCPClient(t, srv, srv.Credentials("honest", time.Now())))
			if err := srv.Close(); err != nil {
				t.Fatalf("Close after the frame: %v", err)
			}
		})
	}
}

// stunFrame is a STUN header declaring length, followed by length bytes.
func stunFrame(length int) []byte {
	b := make([]byte, stunHeaderLen+length)
	binary.BigEndian.PutUint16(b[0:], 0x0001)
	binary.BigEndian.PutUint16(b[2:], uint16(length)) //nolint:gosec // test lengths fit
	binary.BigEndian.PutUint32(b[4:], stunMagicCookie)

	return b
}

// channelFrame is ChannelData on channel 0x4000 carrying length bytes,
// padded to 4 as over TCP.
func channelFrame(length int) []byte {
	b := make([]byte, channelDataHeaderLen+(length+3)&^3)
	binary.BigEndian.PutUint16(b[0:], 0x4000)
	binary.BigEndian.PutUint16(b[2:], uint16(length)) //nolint:gosec // test lengths fit
	for i := range length {
		b[channelDataHeaderLen+i] = byte('a' + i%26)
	}

	return b
}

// The limits, at and past: the largest frame pion reads whole is 1599 bytes,
// so STUN may declare up to 1576 (the next multiple of 4 is 1600) and
// ChannelData up to 1592 (1593 pads to 1600).
func TestFrameSize(t *testing.T) {
	cookieData := channelFrame(8)
	binary.BigEndian.PutUint32(cookieData[4:], stunMagicCookie)
	noCookie := stunFrame(0)
	noCookie[4] = 0
	for _, c := range []struct {
		name  string
		frame []byte
		want  int // 0: refused
	}{
		{"STUN, no attributes", stunFrame(0), 20},
		{"STUN at the limit", stunFrame(1576), 1596},
		{"STUN past the limit", stunFrame(1580), 0},
		{"STUN 0xFFEC, wraps in pion", wrappingFrames()["STUN length 0xFFEC"], 0},
		{"STUN 0xFFFC", stunFrame(0xFFFC), 0},
		{"STUN length not a multiple of 4", stunFrame(5)[:24], 0},
		{"STUN without the cookie", noCookie, 0},
		{"ChannelData, empty", channelFrame(0), 4},
		{"ChannelData of 1 byte, padded", channelFrame(1), 8},
		{"ChannelData of 5 bytes, padded", channelFrame(5), 12},
		{"ChannelData at the limit", channelFrame(1592), 1596},
		{"ChannelData past the limit", channelFrame(1593), 0},
		{"ChannelData 0xFFFC, wraps in pion", wrappingFrames()["ChannelData length 0xFFFC"], 0},
		{"ChannelData 0xFFFF", append([]byte{0x7F, 0xFF, 0xFF, 0xFF}, make([]byte, 16)...), 0},
		{"ChannelData whose data starts with the cookie", cookieData, 0},
		{"neither: 0x80", append([]byte{0x80, 0x00, 0x00, 0x00}, make([]byte, 16)...), 0},
		{"neither: TLS", append([]byte{0x16, 0x03, 0x01, 0x00, 0x05}, make([]byte, 15)...), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newTCPFramer(bytes.NewReader(c.frame))
			buf := make([]byte, inboundMTU)
			n, err := f.read(buf)
			switch {
			case c.want == 0 && !errors.Is(err, errTCPFrame):
				t.Fatalf("read %d bytes, err %v; want refused", n, err)
			case c.want != 0 && (err != nil || n != c.want):
				t.Fatalf("read %d bytes, err %v; want %d", n, err, c.want)
			case c.want != 0 && !bytes.Equal(buf[:n], c.frame[:n]):
				t.Fatal("frame bytes changed")
			}
		})
	}
}

// A stream arriving a byte at a time, read with a buffer smaller than some
// frames, comes out as the same bytes with frame boundaries where they were.
func TestFramerSplitsStream(t *testing.T) {
	frames := [][]byte{stunFrame(8), channelFrame(1), channelFrame(0), channelFrame(1592), stunFrame(1576), channelFrame(7)}
	var stream []byte
	for _, f := range frames {
		stream = append(stream, f...)
	}
	for _, size := range []int{inboundMTU, 100} {
		fr := newTCPFramer(iotest.OneByteReader(bytes.NewReader(stream)))
		buf := make([]byte, size)
		for i, want := range frames {
			var got []byte
			for len(got) < len(want) {
				n, err := fr.read(buf)
				if err != nil {
					t.Fatalf("buffer %d, frame %d: %v", size, i, err)
				}
				if n > len(want)-len(got) {
					t.Fatalf("buffer %d, frame %d: read crossed into the next frame", size, i)
				}
				got = append(got, buf[:n]...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("buffer %d, frame %d differs", size, i)
			}
		}
		if _, err := fr.read(buf); !errors.Is(err, io.EOF) {
			t.Fatalf("after the last frame: %v, want EOF", err)
		}
	}
}

// frameConn hands a tcpFramer's reads to pion's STUNConn, as tcpConn does.
type frameConn struct {
	net.Conn // nil: only Read and RemoteAddr are called
	fr       *tcpFramer
}

func (c frameConn) Read(p []byte) (int, error) { return c.fr.read(p) }
func (c frameConn) RemoteAddr() net.Addr       { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9} }

// FuzzTCPFramer feeds any byte stream, in chunks of any size, through
// tcpFramer into pion/turn v4.1.4's own STUNConn, as the server does. pion
// must never produce an empty frame (its read loop would spin), and must split
// the stream exactly where the framer did: otherwise it has lost step with
// the framer and reads unchecked bytes as headers.
func FuzzTCPFramer(f *testing.F) {
	for _, frame := range wrappingFrames() {
		f.Add(uint8(0), frame)
		f.Add(uint8(3), append(stunFrame(4), frame...))
	}
	f.Add(uint8(0), append(append(channelFrame(1), stunFrame(8)...), channelFrame(1592)...))
	f.Add(uint8(1), append(append(channelFrame(0), channelFrame(0)...), channelFrame(9)...))
	// The wrapping frames whole, then a frame after them.
	f.Add(uint8(0), append(stunFrame(0xFFEC), channelFrame(4)...))
	f.Add(uint8(6), append(channelFrame(0xFFFC), stunFrame(0)...))
	// ChannelData whose data begins with the cookie, then a STUN message.
	f.Add(uint8(0), append([]byte{0x40, 0x00, 0x00, 0x04, 0x21, 0x12, 0xA4, 0x42}, stunFrame(8)...))
	f.Add(uint8(2), append(append(channelFrame(16), stunFrame(0)...), channelFrame(3)...))
	f.Add(uint8(5), []byte{0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5})

	f.Fuzz(func(t *testing.T, chunk uint8, stream []byte) {
		// What the framer splits off on its own.
		var want [][]byte
		ours := newTCPFramer(bytes.NewReader(stream))
		buf := make([]byte, inboundMTU)
		for {
			n, err := ours.read(buf)
			if err != nil {
				break
			}
			if n == 0 || n > maxTCPFrame {
				t.Fatalf("framer returned a %d-byte frame", n)
			}
			want = append(want, append([]byte(nil), buf[:n]...))
		}

		// What pion makes of the framer's output, the stream arriving in chunks.
		in := io.Reader(bytes.NewReader(stream))
		if chunk%8 != 0 {
			in = &chunkReader{r: in, size: int(chunk % 8)}
		}
		pion := pionturn.NewSTUNConn(frameConn{fr: newTCPFramer(in)})
		var got [][]byte
		for range len(stream) + 1 {
			n, _, err := pion.ReadFrom(buf)
			if err != nil {
				break
			}
			if n == 0 {
				t.Fatal("pion read an empty frame: its read loop would spin")
			}
			got = append(got, append([]byte(nil), buf[:n]...))
		}

		// pion holds frames under 9 bytes until more arrives, so at the end
		// of the stream it may not have returned the last few.
		if len(got) > len(want) {
			t.Fatalf("pion read %d frames, the framer %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("frame %d: pion read %x, the framer %x", i, got[i], want[i])
			}
		}
		held := 0
		for _, w := range want[len(got):] {
			held += len(w)
		}
		if held >= 9 {
			t.Fatalf("pion did not return %d bytes of whole frames", held)
		}
	})
}

// chunkReader returns at most size bytes per Read.
type chunkReader struct {
	r    io.Reader
	size int
}

func (c *chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.size)]) }

// bindingRequest is a STUN Binding request of exactly size bytes (a multiple
// of 4, at least 24), filled out with an unknown optional attribute that a
// server ignores.
func bindingRequest(t *testing.T, size int) []byte {
	t.Helper()
	m, err := stun.Build(stun.TransactionID, stun.BindingRequest,
		stun.RawAttribute{Type: 0x80FF, Value: make([]byte, size-stunHeaderLen-4)})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Raw) != size {
		t.Fatalf("built %d bytes, want %d", len(m.Raw), size)
	}

	return m.Raw
}

// answersBinding sends a Binding request over c and reports whether a
// Binding success came back.
func answersBinding(t *testing.T, c net.Conn) bool {
	t.Helper()
	if _, err := c.Write(bindingRequest(t, 24)); err != nil {
		return false
	}
	_ = c.SetReadDeadline(time.Now().Add(testwait.Within))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	buf := make([]byte, inboundMTU)
	n, _, err := pionturn.NewSTUNConn(c).ReadFrom(buf)
	if err != nil {
		return false
	}
	m := &stun.Message{Raw: buf[:n]}

	return m.Decode() == nil && m.Type == stun.BindingSuccess
}

// Frames of up to 1599 bytes are served, and the connection stays open;
// 1600 bytes (which pion v4.1.4 would drop anyway) close it.
func TestTCPFrameLimitLive(t *testing.T) {
	srv, _ := newServer(t)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", srv.TCPAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })

		return c
	}

	c := dial()
	if _, err := c.Write(bindingRequest(t, maxTCPFrame-3)); err != nil { // 1596 bytes
		t.Fatal(err)
	}
	if _, err := c.Write(channelFrame(1592)); err != nil { // 1596 bytes, an unbound channel: ignored
		t.Fatal(err)
	}
	if !answersBinding(t, c) {
		t.Fatal("the connection is not served after frames at the limit")
	}

	for name, frame := range map[string][]byte{
		"STUN":        bindingRequest(t, maxTCPFrame+1),
		"ChannelData": channelFrame(1593),
	} {
		c := dial()
		if !answersBinding(t, c) {
			t.Fatalf("%s: no answer before the frame", name)
		}
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		if !closedByServer(t, c) {
			t.Fatalf("%s: a %d-byte frame left the connection open", name, len(frame))
		}
	}
	testwait.For(t, "the server to close both", func() bool { return srv.Stats().TCPConns == 1 })
	if n := srv.Stats().TCPBadFrames; n != 2 {
		t.Fatalf("TCPBadFrames %d, want 2", n)
	}
}

// Honest TURN-over-TCP clients (pion's own) allocate, bind channels and
// exchange ChannelData of every length up to the limit, odd lengths padded,
// both ways; the framer refuses none of it.
func TestTCPHonestClients(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("a", "room")
	fs.join("b", "room")
	clientA := newTCPClient(t, srv, srv.Credentials("a", time.Now()))
	clientB := newTCPClient(t, srv, srv.Credentials("b", time.Now()))
	a, b := allocate(t, clientA), allocate(t, clientB)
	permitFrom(t, clientA, b)
	permitFrom(t, clientB, a)
	// pion's client binds a channel in the background on its first WriteTo.
	if !deliver(a, b.LocalAddr(), b, "bind a->b", arrives) || !deliver(b, a.LocalAddr(), a, "bind b->a", arrives) {
		t.Fatal("no traffic between TCP clients")
	}
	ra, rb := relayOf(t, srv, a), relayOf(t, srv, b)
	if !eventually(arrives, func() bool { return boundTo(srv, ra, b) && boundTo(srv, rb, a) }) {
		t.Fatal("channels not bound: ChannelData would not be tested")
	}

	for _, n := range []int{1, 2, 3, 5, 6, 7, 9, 13, 1001, 1203, 1591, 1592} {
		for _, dir := range []struct {
			from, to net.PacketConn
		}{{a, b}, {b, a}} {
			msg := channelFrame(n)[channelDataHeaderLen:][:n] // n distinct-ish bytes
			msg[0] = byte(n)
			if !deliverBig(dir.from, dir.to.LocalAddr(), dir.to, msg) {
				t.Fatalf("%d bytes did not arrive", n)
			}
		}
	}
	st := srv.Stats()
	if st.TCPBadFrames != 0 || st.TCPConns != 2 {
		t.Fatalf("TCPBadFrames %d, TCPConns %d; want 0, 2", st.TCPBadFrames, st.TCPConns)
	}
}

// deliverBig is deliver for payloads of any size.
func deliverBig(from net.PacketConn, to net.Addr, rx net.PacketConn, msg []byte) bool {
	got := make(chan bool, 1)
	_ = rx.SetReadDeadline(time.Now().Add(arrives))
	go func() {
		buf := make([]byte, inboundMTU)
		for {
			n, _, err := rx.ReadFrom(buf)
			if err != nil {
				got <- false

				return
			}
			if bytes.Equal(buf[:n], msg) {
				got <- true

				return
			}
		}
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		_, _ = from.WriteTo(msg, to)
		select {
		case ok := <-got:
			return ok
		case <-tick.C:
		}
	}
}

// readerConn is a net.Conn whose reads come from r, for pion's STUNConn
// (which calls only Read and RemoteAddr).
type readerConn struct {
	net.Conn // nil
	r        io.Reader
}

func (c readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c readerConn) RemoteAddr() net.Addr       { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9} }

// TestUpstreamCanary_TCPFrameLength: pion/turn's own STUNConn, which its
// server reads every TCP connection through, still hands out an empty frame,
// again and again without reading, for each header whose frame size wraps in
// 16 bits (pion/turn#593; pionfix_tcpframe.go splits the stream instead).
func TestUpstreamCanary_TCPFrameLength(t *testing.T) {
	for name, frame := range wrappingFrames() {
		t.Run(name, func(t *testing.T) {
			sc := pionturn.NewSTUNConn(readerConn{r: bytes.NewReader(frame)})
			buf := make([]byte, inboundMTU)
			for range 2 {
				if n, _, err := sc.ReadFrom(buf); n != 0 || err != nil {
					upstreamGone(t, "pionfix_tcpframe.go",
						fmt.Sprintf("STUNConn reads %d bytes, error %v, for %s (pion/turn#593 fixed?)", n, err, name))
				}
			}
		})
	}
}

// TestUpstreamCanary_TCPFrameCookie: pion/turn's STUNConn still reads
// ChannelData whose data starts with the STUN magic cookie as STUN, of
// another size (pionfix_tcpframe.go refuses such frames: see ambiguous).
func TestUpstreamCanary_TCPFrameCookie(t *testing.T) {
	frame := channelFrame(16) // 20 bytes, a STUN header's size
	binary.BigEndian.PutUint32(frame[4:], stunMagicCookie)
	sc := pionturn.NewSTUNConn(readerConn{r: bytes.NewReader(frame)})
	if n, _, err := sc.ReadFrom(make([]byte, inboundMTU)); err == nil && n == len(frame) {
		upstreamGone(t, "pionfix_tcpframe.go", "STUNConn reads ChannelData carrying the STUN cookie as ChannelData")
	}
}
