package signaling

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// rawClient is a lobby client written frame by frame, to send what
// coder/websocket's own client does not (a pong and a message in one write,
// a ping inside a fragmented message) and to answer pings by hand.
type rawClient struct {
	t        *testing.T
	conn     net.Conn
	br       *bufio.Reader
	answered int // pings answered
}

func dialRaw(t *testing.T, url string) *rawClient {
	t.Helper()
	var conn net.Conn
	var err error
	addr, secure := strings.CutPrefix(url, "wss://")
	if !secure {
		addr = strings.TrimPrefix(url, "ws://")
	}
	if secure {
		// httptest's certificate: the test trusts its own server.
		conn, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // see above
	} else {
		conn, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawClient{t: t, conn: conn, br: upgrade(t, conn, addr, nil)}
}

// upgrade sends a WebSocket upgrade request for addr on conn, with ahead
// (frames, or nil) in the same write, and reads the 101.
func upgrade(t *testing.T, conn net.Conn, addr string, ahead []byte) *bufio.Reader {
	t.Helper()
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	req := "GET / HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key) + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := conn.Write(append([]byte(req), ahead...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", res.StatusCode)
	}
	return br
}

func (c *rawClient) write(frames ...[]byte) {
	c.t.Helper()
	if _, err := c.conn.Write(bytes.Join(frames, nil)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) message(typ string, id uint32, body any) []byte {
	c.t.Helper()
	b, err := protocol.Encode(typ, id, body)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// expect reads frames until a message of type typ with request id id,
// answering pings and failing on an Error, and reports whether a pong came
// on the way.
func (c *rawClient) expect(typ string, id uint32) (ponged bool) {
	c.t.Helper()
	for {
		h, p := readFrame(c.t, c.br)
		switch h & 0x0f {
		case 0x9:
			c.write(clientFrameOp(0x8a, p))
			c.answered++
		case 0xa:
			ponged = true
		case 0x2:
			env, err := protocol.Decode(p)
			if err != nil {
				c.t.Fatal(err)
			}
			if env.Type == protocol.TypeError {
				var e protocol.Error
				_ = protocol.DecodeBody(env, &e)
				c.t.Fatalf("error %+v (id %d), want %s %d", e, env.ID, typ, id)
			}
			if env.Type == typ && env.ID == id {
				return ponged
			}
		}
	}
}

// pong makes sure a ping of the server's was answered, reading until one
// comes if none has.
func (c *rawClient) pong() {
	c.t.Helper()
	for c.answered == 0 {
		h, p := readFrame(c.t, c.br)
		if h&0x0f == 0x9 {
			c.write(clientFrameOp(0x8a, p))
			c.answered++
		}
	}
}

// Control frames next to messages, in one write: nothing is lost, every
// ping is answered (inside a fragmented message too), and an empty message
// from the client is refused as not msgpack. Over plain HTTP and TLS alike.
func TestControlFramesBetweenMessages(t *testing.T) {
	t.Run("plain", func(t *testing.T) { controlFramesBetweenMessages(t, httptest.NewServer) })
	t.Run("tls", func(t *testing.T) { controlFramesBetweenMessages(t, httptest.NewTLSServer) })
}

func controlFramesBetweenMessages(t *testing.T, newServer func(http.Handler) *httptest.Server) {
	_, url := testHubOn(t, nil, newServer)
	c := dialRaw(t, url)
	hello := c.message(protocol.TypeHello, 1, &protocol.Hello{Version: protocol.Version, Name: "mixed"})
	// An unsolicited pong, then hello, in one write.
	c.write(clientFrameOp(0x8a, []byte("early")), clientFrame(hello))
	c.expect(protocol.TypeWelcome, 1)

	// A ping and a message in one write: a pong and the reply.
	c.write(clientFrameOp(0x89, []byte("p1")), clientFrame(c.message(protocol.TypeWatchRooms, 2, &protocol.WatchRooms{})))
	if !c.expect(protocol.TypeRoomList, 2) {
		t.Fatal("no pong before the reply")
	}

	// A message in two fragments with a ping between them: the ping is
	// answered and the message is whole.
	msg := c.message(protocol.TypeUnwatchRooms, 3, &protocol.UnwatchRooms{})
	half := len(msg) / 2
	c.write(clientFrameOp(0x02, msg[:half]), clientFrameOp(0x89, []byte("p2")))
	h, p := readFrame(t, c.br)
	for h&0x0f != 0xa {
		h, p = readFrame(t, c.br)
	}
	if string(p) != "p2" {
		t.Fatalf("pong %q", p)
	}
	c.write(clientFrameOp(0x80, msg[half:]))
	c.expect(protocol.TypeOK, 3)

	// A ping alone, then a message: the message is answered, and nothing
	// else is.
	c.pingAlone("p3")
	c.write(clientFrame(c.message(protocol.TypeWatchRooms, 4, &protocol.WatchRooms{})))
	c.expect(protocol.TypeRoomList, 4)

	// An empty binary message is the client's: refused.
	c.pingAlone("p4")
	c.write(clientFrameOp(0x82, nil))
	env := c.nextMessage()
	var e protocol.Error
	if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeBadMessage {
		t.Fatalf("got %s %+v, want a bad_message Error for the empty message", env.Type, e)
	}
}

// pingAlone sends a ping in a write of its own and reads until its pong,
// failing on any message on the way.
func (c *rawClient) pingAlone(payload string) {
	c.t.Helper()
	c.write(clientFrameOp(0x89, []byte(payload)))
	for {
		h, p := readFrame(c.t, c.br)
		switch h & 0x0f {
		case 0x9:
			c.write(clientFrameOp(0x8a, p))
		case 0xa:
			if string(p) == payload {
				return
			}
		default:
			c.t.Fatalf("frame %x %q before the pong", h, p)
		}
	}
}

// scanFrame is one frame of a fuzzed stream.
type scanFrame struct {
	b0      byte // FIN and opcode
	n       int  // payload length
	lenForm int  // 0: 7-bit length where it fits, 1: 16-bit, 2: 64-bit
}

func (f scanFrame) bytes() []byte {
	b := []byte{f.b0}
	switch {
	case f.lenForm == 0 && f.n < 126:
		b = append(b, 0x80|byte(f.n))
	case f.lenForm <= 1 && f.n < 1<<16:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(f.n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(f.n))
	}
	b = append(b, 9, 8, 7, 6)
	return append(b, make([]byte, f.n)...)
}

// FuzzFrameScanner feeds the wire meter's scanner streams of well-formed
// frames (data frames, fragmented or not, with control frames anywhere) cut
// at arbitrary points: it must report exactly the frames' headers, in order,
// and be between messages exactly where a message (and no fragment) ends.
// Then arbitrary bytes, which it must survive with its header bounded.
func FuzzFrameScanner(f *testing.F) {
	f.Add([]byte{0x82, 3, 0x8a, 0, 0x02, 5, 0x89, 2, 0x80, 1}, []byte{1, 2, 3, 5, 8})
	f.Add([]byte{0x8a, 200, 0x82, 0}, []byte{7})
	f.Add([]byte{0x01, 130, 0x89, 0, 0x80, 0, 0x8a, 1}, []byte{0, 1, 0, 2})
	f.Fuzz(func(t *testing.T, spec, cuts []byte) {
		// Each pair of spec bytes is a frame: its first byte, and its
		// length (and length form).
		var stream []byte
		var want []frameHead
		betweenAt := map[int]bool{0: true}
		fragmented := false
		for i := 0; i+1 < len(spec) && len(stream) < 1<<16; i += 2 {
			fr := scanFrame{b0: spec[i] & 0x8f, n: int(spec[i+1]), lenForm: int(spec[i+1] % 3)}
			if fr.b0&0x08 != 0 {
				fr.b0 |= 0x80 // control frames are final
				fr.n %= 126
			}
			if fr.n > 200 {
				fr.n *= 37 // past the 16-bit form's start
			}
			stream = append(stream, fr.bytes()...)
			want = append(want, frameHead{opcode: fr.b0 & 0x0f, fin: fr.b0&0x80 != 0})
			if fr.b0&0x08 == 0 {
				fragmented = fr.b0&0x80 == 0
			}
			betweenAt[len(stream)] = !fragmented
		}
		var s frameScanner
		var got []frameHead
		onHead := func(h frameHead) { got = append(got, h) }
		for i, pos := 0, 0; pos < len(stream); i++ {
			size := len(stream) - pos
			if len(cuts) > 0 {
				size = min(size, int(cuts[i%len(cuts)])+1)
			}
			s.scan(stream[pos:pos+size], onHead)
			pos += size
			if b, ok := betweenAt[pos]; ok && s.between() != b {
				t.Fatalf("at %d of %d: between %v, want %v", pos, len(stream), s.between(), b)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d headers, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("header %d: %+v, want %+v", i, got[i], want[i])
			}
		}

		// Arbitrary bytes: no panic, a bounded header.
		s = frameScanner{}
		junk := append(spec, cuts...)
		for len(junk) > 0 {
			n := min(len(junk), 7)
			s.scan(junk[:n], func(frameHead) {})
			junk = junk[n:]
			if s.have > maxFrameHeader || s.need > maxFrameHeader {
				t.Fatalf("header %d of %d", s.have, s.need)
			}
		}
	})
}

// A client that answers the server's close frame with the start of a large
// message and then nothing: coder/websocket's close handshake skips a data
// frame's payload with no timeout of its own, and would wait for those
// bytes forever, and the hub's Close with it. The link bounds the
// handshake's reads.
func TestCloseHandshakeBoundedAgainstAStalledFrame(t *testing.T) {
	hub, url := testHub(t, nil)
	c := dialRaw(t, url)
	c.write(clientFrame(c.message(protocol.TypeHello, 1, &protocol.Hello{Version: protocol.Version, Name: "stall"})))
	c.expect(protocol.TypeWelcome, 1)
	c.pong()

	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		closed <- hub.Close(ctx)
	}()
	_ = c.conn.SetDeadline(time.Now().Add(20 * time.Second))
	for {
		h, _ := readFrame(t, c.br)
		if h&0x0f == 0x8 {
			break
		}
	}
	// A 1,000-byte binary frame's header and mask, one byte of it, then
	// silence.
	c.write([]byte{0x82, 0x80 | 126, 0x03, 0xe8, 1, 2, 3, 4, 0})
	if err := <-closed; err != nil {
		t.Fatalf("hub close: %v", err)
	}
}
