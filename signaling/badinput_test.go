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

	// The slow client never reads again. The host keeps up to 8 signals in
	// flight (with request ids, reading every reply) so that only the slow
	// client falls behind; socket buffers absorb some megabytes first.
	sdp := strings.Repeat("s", protocol.MaxSDP)
	host.readTimeout = time.Minute
	outstanding, sent := 0, 0
	for {
		for outstanding < 8 {
			host.request(protocol.TypeSignal, &protocol.Signal{To: sj.You, Kind: protocol.SignalOffer, SDP: sdp})
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
		if env.Type == protocol.TypePlayerLeft {
			var pl protocol.PlayerLeft
			if err := protocol.DecodeBody(env, &pl); err != nil {
				t.Fatal(err)
			}
			if pl.ID != sj.You || pl.Reason != protocol.ReasonDisconnect {
				t.Fatalf("PlayerLeft %+v", pl)
			}
			break
		}
		if sent > 100_000 {
			t.Fatal("slow client never dropped")
		}
	}
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

func TestHubCloseSaysGoingAway(t *testing.T) {
	hub, url := testHub(t, nil)
	c := connect(t, url, "A")
	go hub.Close(t.Context())
	if code := c.expectClose(); code != websocket.StatusGoingAway {
		t.Fatalf("close %v, want going away", code)
	}
}
