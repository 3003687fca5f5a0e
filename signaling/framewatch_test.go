package signaling

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
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

// readersInRead counts goroutines parked in coder/websocket's Read.
func readersInRead() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Count(buf, []byte("github.com/coder/websocket.(*Conn).Read("))
}

// Issue 16: an idle link, one that said hello and answered its ping, keeps
// no goroutine parked in coder/websocket's Read (4 KiB of stack each), and
// still serves the next message it is sent. Before frameWatch and
// readiness, each of the three links below kept one there for good.
func TestIdleLinkParksNoReader(t *testing.T) {
	if !haveReadiness {
		t.Skip("no readiness on this platform: links park their reader in Read")
	}
	_, url := testHub(t, nil)
	var clients []*rawClient
	for range 3 {
		c := dialRaw(t, url)
		c.write(clientFrame(c.message(protocol.TypeHello, 1, &protocol.Hello{Version: protocol.Version, Name: "idle"})))
		c.expect(protocol.TypeWelcome, 1)
		c.pong() // hello nudges a ping
		clients = append(clients, c)
	}
	deadline := time.Now().Add(5 * time.Second)
	for readersInRead() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still parked in coder/websocket's Read after the pongs", readersInRead())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range clients {
		c.write(clientFrame(c.message(protocol.TypeWatchRooms, 2, &protocol.WatchRooms{})))
		c.expect(protocol.TypeRoomList, 2)
	}
}

// Control frames next to messages, in one write: nothing is lost, every
// ping is answered, the wake frame goes in only between messages, and an
// empty message from the client is the client's (refused as not msgpack),
// not taken for a wake frame. Over TLS the link parks its reader in
// coder/websocket's Read (no readiness), and skips the wake frames there.
func TestWakeFrameBetweenMessagesOnly(t *testing.T) {
	t.Run("plain", func(t *testing.T) { wakeFrameBetweenMessagesOnly(t, httptest.NewServer) })
	t.Run("tls", func(t *testing.T) { wakeFrameBetweenMessagesOnly(t, httptest.NewTLSServer) })
}

func wakeFrameBetweenMessagesOnly(t *testing.T, newServer func(http.Handler) *httptest.Server) {
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
	// answered and the message is whole (a wake frame inside it would have
	// been a protocol error closing the connection).
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

	// A ping alone: once its pong is back the server's read has asked for
	// more and been handed the wake frame. The next message is answered,
	// and nothing else is (a wake frame served as a message would be
	// refused with an Error).
	c.pingAlone("p3")
	c.write(clientFrame(c.message(protocol.TypeWatchRooms, 4, &protocol.WatchRooms{})))
	c.expect(protocol.TypeRoomList, 4)

	// An empty binary message after a wake frame is the client's: refused.
	c.pingAlone("p4")
	c.write(clientFrameOp(0x82, nil))
	for {
		env := c.nextMessage()
		var e protocol.Error
		if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeBadMessage {
			t.Fatalf("got %s %+v, want a bad_message Error for the empty message", env.Type, e)
		}
		return
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

// watchFrame is one frame of a fuzzed stream.
type watchFrame struct {
	b0      byte // FIN and opcode
	n       int  // payload length
	lenForm int  // 0: 7-bit length where it fits, 1: 16-bit, 2: 64-bit
}

func (f watchFrame) bytes() []byte {
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

// FuzzFrameWatch feeds frameWatch streams of well-formed frames (data
// frames, fragmented or not, with control frames anywhere) cut at arbitrary
// points, and checks after every cut that it would make a wake frame
// exactly where the bytes so far end with a control frame between
// messages; then arbitrary bytes, which it must survive with its header
// bounded.
func FuzzFrameWatch(f *testing.F) {
	f.Add([]byte{0x82, 3, 0x8a, 0, 0x02, 5, 0x89, 2, 0x80, 1}, []byte{1, 2, 3, 5, 8})
	f.Add([]byte{0x8a, 200, 0x82, 0}, []byte{7})
	f.Add([]byte{0x01, 130, 0x89, 0, 0x80, 0, 0x8a, 1}, []byte{0, 1, 0, 2})
	f.Fuzz(func(t *testing.T, spec, cuts []byte) {
		// Each pair of spec bytes is a frame: its first byte, and its
		// length (and length form).
		var stream []byte
		wakeAt := map[int]bool{0: false}
		fragmented := false
		for i := 0; i+1 < len(spec) && len(stream) < 1<<16; i += 2 {
			fr := watchFrame{b0: spec[i] & 0x8f, n: int(spec[i+1]), lenForm: int(spec[i+1] % 3)}
			if fr.b0&0x08 != 0 {
				fr.b0 |= 0x80 // control frames are final
				fr.n %= 126
			}
			if fr.n > 200 {
				fr.n *= 37 // past the 16-bit form's start
			}
			stream = append(stream, fr.bytes()...)
			control := fr.b0&0x08 != 0
			if !control {
				fragmented = fr.b0&0x80 == 0
			}
			wakeAt[len(stream)] = control && !fragmented
		}
		w := newFrameWatch(bytes.NewReader(stream))
		pos := 0
		for i := 0; pos < len(stream); i++ {
			size := len(stream) - pos
			if len(cuts) > 0 {
				size = min(size, int(cuts[i%len(cuts)])+1)
			}
			p := make([]byte, size)
			n, err := io.ReadFull(w, p)
			if err != nil || n != size {
				t.Fatalf("read %d at %d: %d, %v", size, pos, n, err)
			}
			if string(p[:min(n, len(wakeFrame))]) == wakeFrame && w.woke() {
				t.Fatalf("wake frame handed over at %d, inside the stream", pos)
			}
			pos += n
			want := wakeAt[pos]
			if got := w.meter.scan.afterControl && w.meter.scan.between(); got != want {
				t.Fatalf("at %d of %d: wake due %v, want %v", pos, len(stream), got, want)
			}
			if want {
				// Read the wake frame the way coder/websocket would.
				var wf [len(wakeFrame)]byte
				if _, err := io.ReadFull(w, wf[:1]); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(w, wf[1:]); err != nil {
					t.Fatal(err)
				}
				if string(wf[:]) != wakeFrame || !w.woke() || w.woke() {
					t.Fatalf("at %d: wake frame %x", pos, wf)
				}
			}
		}

		// Arbitrary bytes: no panic, a bounded header.
		w = newFrameWatch(bytes.NewReader(append(spec, cuts...)))
		buf := make([]byte, 7)
		for {
			n, err := w.Read(buf)
			if w.meter.scan.have > maxFrameHeader || w.meter.scan.need > maxFrameHeader {
				t.Fatalf("header %d of %d", w.meter.scan.have, w.meter.scan.need)
			}
			if n == 0 && err != nil {
				break
			}
		}
	})
}

// A client that answers the server's close frame with the start of a large
// message and then nothing: coder/websocket's close handshake skips a data
// frame's payload with no timeout of its own, and with no reader holding
// the connection (an idle link waits for its socket) it would wait for
// those bytes forever, and the hub's Close with it. The link bounds the
// handshake's reads.
func TestCloseHandshakeBoundedAgainstAStalledFrame(t *testing.T) {
	hub, url := testHub(t, nil)
	c := dialRaw(t, url)
	c.write(clientFrame(c.message(protocol.TypeHello, 1, &protocol.Hello{Version: protocol.Version, Name: "stall"})))
	c.expect(protocol.TypeWelcome, 1)
	c.pong()
	time.Sleep(50 * time.Millisecond) // the pong read, the link waits for its socket

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
