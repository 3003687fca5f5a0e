package signaling

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// A client that sends its first frame in the same packet as the upgrade
// request: the HTTP server has read the frame ahead by the time the
// connection is hijacked, and the small buffers must hand it on.
func TestFrameReadAheadOfUpgrade(t *testing.T) {
	_, url := testHub(t, nil)
	addr := strings.TrimPrefix(url, "ws://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))

	hello, err := protocol.Encode(protocol.TypeHello, 1, &protocol.Hello{Version: protocol.Version, Name: "eager"})
	if err != nil {
		t.Fatal(err)
	}
	br := upgrade(t, conn, addr, clientFrame(hello))
	env, err := protocol.Decode(serverFrame(t, br, 0x2))
	if err != nil {
		t.Fatal(err)
	}
	if env.Type != protocol.TypeWelcome || env.ID != 1 {
		t.Fatalf("got %s (id %d), want the Welcome to the read-ahead Hello", env.Type, env.ID)
	}
}

// clientFrame is a masked, final, binary WebSocket frame.
func clientFrame(payload []byte) []byte { return clientFrameOp(0x82, payload) }

// clientFrameOp is a masked frame whose first byte (FIN, opcode) is b0.
func clientFrameOp(b0 byte, payload []byte) []byte {
	f := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	default:
		f = append(f, 0x80|126, byte(n>>8), byte(n))
	}
	mask := []byte{1, 2, 3, 4}
	f = append(f, mask...)
	for i, b := range payload {
		f = append(f, b^mask[i%4])
	}
	return f
}

// serverFrame returns the payload of the next unmasked frame with opcode op,
// skipping others (a ping may come first).
func serverFrame(t *testing.T, r io.Reader, op byte) []byte {
	t.Helper()
	for {
		h, p := readFrame(t, r)
		if h&0x0f == op {
			return p
		}
	}
}

func readFrame(t *testing.T, r io.Reader) (byte, []byte) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Fatal(err)
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			t.Fatal(err)
		}
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			t.Fatal(err)
		}
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatal(err)
	}
	return h[0], p
}

// writeCounter is a net.Conn that records each write.
type writeCounter struct {
	net.Conn
	writes [][]byte
}

func (c *writeCounter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

// Issue 16: frames written while the link's writer holds its frameWriter go
// out in one write, in order, whatever the size of the 16-byte buffer above
// it; otherwise (a ping, a close frame) writes go straight through, and an
// idle frameWriter holds no buffer.
func TestFrameWriterGathersABurst(t *testing.T) {
	conn := &writeCounter{}
	pool := newFramePool()
	fw := &frameWriter{conn: conn, pool: &pool}
	bw := bufio.NewWriterSize(fw, writeBuffer)
	frame := func(b byte, n int) {
		if _, err := bw.Write([]byte(strings.Repeat(string(rune(b)), n))); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	frame('p', 3) // not held: straight through
	fw.hold()
	frame('a', 300) // bigger than the buffer: one write at release all the same
	frame('b', 5)
	if len(conn.writes) != 1 || fw.heldBytes() != 305 {
		t.Fatalf("while held: %d writes, %d bytes held", len(conn.writes), fw.heldBytes())
	}
	if err := fw.release(); err != nil {
		t.Fatal(err)
	}
	if fw.held != nil {
		t.Fatal("a released frameWriter keeps its buffer")
	}
	frame('c', 2)
	want := []string{"ppp", strings.Repeat("a", 300) + "bbbbb", "cc"}
	if len(conn.writes) != len(want) {
		t.Fatalf("%d writes, want %d", len(conn.writes), len(want))
	}
	for i, w := range want {
		if string(conn.writes[i]) != w {
			t.Fatalf("write %d: %q, want %q", i, conn.writes[i], w)
		}
	}
}
