package signaling

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// TestAllocationBombs sends the msgpack frames that make msgpack/v5 allocate
// gigabytes (DESIGN.md) to a live session: each must get an Error, the
// session must stay usable, and the process must neither keep nor even
// briefly allocate more than a little memory.
func TestAllocationBombs(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.MessageBurst = 1000; c.MaxRefusedInARow = 1000 })
	c := connect(t, url, "Mallory")
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	bombs := [][]byte{
		{0xdd, 0xff, 0xff, 0xff, 0xff},
		{0xdf, 0xff, 0xff, 0xff, 0xff},
		// A well-formed envelope whose body hides the bomb.
		{0x82, 0xa1, 't', 0xaa, 'c', 'r', 'e', 'a', 't', 'e', 'R', 'o', 'o', 'm', 0xa1, 'b', 0xdd, 0xff, 0xff, 0xff, 0xff},
		// Nesting as deep as a frame allows.
		append(bytes.Repeat([]byte{0x91}, protocol.MaxFrame-1), 0xc0),
		// Wrong types.
		{0x81, 0xa1, 't', 0x05},
		{0xa5, 'h', 'e', 'l', 'l', 'o'},
	}
	for i := 0; i < 50; i++ {
		for _, b := range bombs {
			c.writeRaw(b)
			c.expectError(protocol.CodeBadMessage)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// TotalAlloc counts every byte allocated while the bombs were handled,
	// freed or not, so a decoder that briefly made a multi-gigabyte slice
	// and dropped it fails here even though the heap below looks flat. Both
	// ends of the connection live in this process, so this counts the
	// client too: the whole exchange measures about 5 MiB under -race, 3
	// without (300 frames, a sixth of them 16 KiB of nesting). 64 MiB is
	// over ten times that, yet far below what one bomb decoded naively
	// asks for (4 billion elements: gigabytes).
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("handling the bombs allocated %d KiB", allocated>>10)
	if allocated > 64<<20 {
		t.Fatalf("handling the bombs allocated %d MiB", allocated>>20)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
		t.Fatalf("heap grew by %d bytes", grew)
	}
	// Still a working session.
	c.create("still here", 2, "")
}

func TestOversizedAndDeepFramesClose(t *testing.T) {
	hub, url := testHub(t, nil)
	c := connect(t, url, "Mallory")
	// 100,000 levels of nesting is past MaxFrame: the read limit closes it.
	deep := append(bytes.Repeat([]byte{0x91}, 100_000), 0xc0)
	c.writeRaw(deep)
	if code := c.expectClose(); code != websocket.StatusMessageTooBig {
		t.Fatalf("close %v, want %v", code, websocket.StatusMessageTooBig)
	}
	waitFor(t, "session gone", func() bool { return hub.Stats().Sessions == 0 })

	// At the limit a frame is read (and answered), one byte more is not.
	c = connect(t, url, "Mallory")
	c.frameLimitIs(protocol.MaxFrame)
}

func TestTextFrameRefused(t *testing.T) {
	_, url := testHub(t, nil)
	c := connect(t, url, "A")
	if err := c.conn.Write(t.Context(), websocket.MessageText, []byte(`{"t":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	c.expectError(protocol.CodeBadMessage)
}

func TestFloodIsRateLimitedThenClosed(t *testing.T) {
	hub, url := testHub(t, func(c *Config) {
		c.MessageBurst = 10
		c.MessagesPerSecond = 0.001
		c.MaxRefusedInARow = 5
	})
	c := connect(t, url, "Flood") // hello spends one token
	for i := 0; i < 9; i++ {      // the rest of the burst is served
		c.request("noop", nil)
		c.expectError(protocol.CodeUnknownType)
	}
	go func() {
		for i := 0; i < 100; i++ {
			frame, _ := protocol.Encode("noop", 1, nil)
			if c.conn.Write(t.Context(), websocket.MessageBinary, frame) != nil {
				return
			}
		}
	}()
	sawLimited := false
	for {
		env, err := c.read()
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Fatalf("closed with %v, want policy violation", err)
			}
			break
		}
		var e protocol.Error
		_ = protocol.DecodeBody(env, &e)
		if e.Code == protocol.CodeRateLimited {
			sawLimited = true
			if env.ID != 1 { // the caller learns which request was refused
				t.Fatalf("rate_limited answers request %d, want 1", env.ID)
			}
		}
	}
	if !sawLimited {
		t.Fatal("no rate_limited error before the close")
	}
	waitFor(t, "session gone", func() bool { return hub.Stats().Sessions == 0 })
}

// TestSlowConsumerDropped: a client that stops reading is disconnected when
// its queue fills, and the sender is never blocked by it.
func TestSlowConsumerDropped(t *testing.T) {
	_, url := testHub(t, func(c *Config) {
		c.QueueSize = 16
		c.SignalBurst = 1 << 20
		c.SignalsPerSecond = 1e6
		c.MessageBurst = 1 << 20
		c.MessagesPerSecond = 1e6
	})
	host := connect(t, url, "Host")
	rj := host.create("r", 2, "")
	slow := connect(t, url, "Slow")
	sj := slow.join(rj.Room.Code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)

	// The slow client never reads again.
	floodSignals(t, host, sj.You, func(env protocol.Envelope) bool {
		if env.Type != protocol.TypePlayerLeft {
			return false
		}
		var pl protocol.PlayerLeft
		if err := protocol.DecodeBody(env, &pl); err != nil {
			t.Fatal(err)
		}
		if pl.ID != sj.You || pl.Reason != protocol.ReasonDisconnect {
			t.Fatalf("PlayerLeft %+v", pl)
		}
		return true
	})
	// The host is unaffected.
	host.request(protocol.TypeSignal, &protocol.Signal{To: sj.You, Kind: protocol.SignalOffer, SDP: "v=0"})
	for {
		env, err := host.read()
		if err != nil {
			t.Fatal(err)
		}
		var e protocol.Error
		if env.Type == protocol.TypeError && protocol.DecodeBody(env, &e) == nil && e.Code == protocol.CodePeerNotFound {
			break
		}
	}
}

// floodSignals has host send the largest offers to player to, as fast as
// the server takes them, until done accepts an event the host got. The host
// keeps up to 8 signals in flight (with request ids, reading every reply) so
// that only a client that does not read falls behind; socket buffers absorb
// some megabytes first.
func floodSignals(t *testing.T, host *client, to string, done func(protocol.Envelope) bool) {
	t.Helper()
	sdp := strings.Repeat("s", protocol.MaxSDP)
	host.readTimeout = time.Minute
	outstanding, sent := 0, 0
	for {
		for outstanding < 8 {
			host.request(protocol.TypeSignal, &protocol.Signal{To: to, Kind: protocol.SignalOffer, SDP: sdp})
			outstanding++
			sent++
		}
		env, err := host.read()
		if err != nil {
			t.Fatalf("host after %d signals: %v", sent, err)
		}
		if env.Type == protocol.TypeOK || env.Type == protocol.TypeError {
			outstanding--
			continue
		}
		if done(env) {
			return
		}
		if sent > 100_000 {
			t.Fatal("slow client never dropped")
		}
	}
}

func TestHubCloseSaysGoingAway(t *testing.T) {
	hub, url := testHub(t, nil)
	c := connect(t, url, "A")
	go hub.Close(t.Context())
	if code := c.expectClose(); code != websocket.StatusGoingAway {
		t.Fatalf("close %v, want going away", code)
	}
}

// TestHandshakeDeadlineCoversEveryFrameBeforeHello: a connection that keeps
// sending frames other than hello is closed when the handshake deadline,
// counted from the upgrade, passes; each frame is answered hello_required
// until then. A connection that said hello in time is not touched by it.
func TestHandshakeDeadlineCoversEveryFrameBeforeHello(t *testing.T) {
	const timeout = time.Second
	hub, url := testHub(t, func(c *Config) { c.HandshakeTimeout = timeout })
	honest := dial(t, url, nil)
	honest.request(protocol.TypeWatchRooms, nil) // a frame before hello is forgiven...
	honest.expectError(protocol.CodeHelloRequired)
	honest.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada"})
	honest.expect(protocol.TypeWelcome, &protocol.Welcome{})

	stall := dial(t, url, nil)
	// Fewer frames than FramesBeforeHello fit before the deadline, so it is
	// the deadline that ends the connection, not the frame budget.
	tick := time.NewTicker(timeout / 4)
	defer tick.Stop()
	giveUp := time.Now().Add(10 * timeout)
	answered := 0
	for {
		if time.Now().After(giveUp) {
			t.Fatalf("still open %v after the upgrade (deadline %v), %d frames answered", 10*timeout, timeout, answered)
		}
		frame, _ := protocol.Encode(protocol.TypeWatchRooms, 1, nil)
		if stall.conn.Write(t.Context(), websocket.MessageBinary, frame) != nil {
			break
		}
		env, err := stall.read()
		if err != nil {
			if st := websocket.CloseStatus(err); st != -1 {
				t.Fatalf("closed with %v; want the connection cut at the deadline", st)
			}
			break
		}
		var e protocol.Error
		if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeHelloRequired {
			t.Fatalf("frame %d answered %s %+v, want hello_required", answered+1, env.Type, e)
		}
		answered++
		<-tick.C
	}
	if answered == 0 || answered >= FramesBeforeHello {
		t.Fatalf("%d frames answered before the close; want some, and fewer than the budget %d", answered, FramesBeforeHello)
	}
	waitFor(t, "the stalled connection's slot freed", func() bool {
		hub.mu.RLock()
		defer hub.mu.RUnlock()
		return len(hub.links) == 1
	})
	// ...and after hello the deadline is gone: honest, dialled first, is
	// past it and still served.
	honest.request(protocol.TypeWatchRooms, nil)
	honest.expect(protocol.TypeRoomList, &protocol.RoomList{})
}

// TestFramesBeforeHelloLimited: a connection may send FramesBeforeHello
// frames before its hello succeeds (a hello as the last of them is
// welcomed); past that the next frame is answered rate_limited and the
// connection closed with 1008, however fast a flood comes.
func TestFramesBeforeHelloLimited(t *testing.T) {
	_, url := testHub(t, nil)
	// At the limit: failed attempts, then a hello that works.
	c := dial(t, url, nil)
	for range FramesBeforeHello - 2 {
		c.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 2})
		c.expectError(protocol.CodeHelloRequired)
	}
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Resume: "rt_unknown", Received: 1})
	c.expectError(protocol.CodeResumeFailed)
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada"})
	c.expect(protocol.TypeWelcome, &protocol.Welcome{})
	c.create("still works", 2, "")

	// Past the limit: a flood is answered FramesBeforeHello times, then
	// refused once, then closed.
	f := dial(t, url, nil)
	flooded := make(chan int)
	go func() {
		n := 0
		for ; n < 20_000; n++ {
			frame, _ := protocol.Encode(protocol.TypeWatchRooms, uint32(n+1), nil)
			if f.conn.Write(t.Context(), websocket.MessageBinary, frame) != nil {
				break
			}
		}
		flooded <- n
	}()
	for i := 1; i <= FramesBeforeHello; i++ {
		var e protocol.Error
		if env := f.expect(protocol.TypeError, &e); env.ID != uint32(i) || e.Code != protocol.CodeHelloRequired {
			t.Fatalf("answer %d: %q for request %d, want hello_required for %d", i, e.Code, env.ID, i)
		}
	}
	e := f.expectError(protocol.CodeRateLimited)
	if !strings.Contains(e.Message, "before hello") {
		t.Fatalf("message %q", e.Message)
	}
	if code := f.expectClose(); code != websocket.StatusPolicyViolation {
		t.Fatalf("close %v, want %v", code, websocket.StatusPolicyViolation)
	}
	if n := <-flooded; n == 20_000 {
		t.Fatal("the flood was written to the end: the connection stayed open")
	}
}
