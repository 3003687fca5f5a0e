package turn

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The bucket itself, on a simulated clock.
func TestBandwidthBucket(t *testing.T) {
	const sec = int64(time.Second)
	p := newBandwidthPolicy(1000, 2000)
	var l bandwidthLimit
	// A fresh allocation has its whole burst; then nothing until it refills.
	first, second := p.allow(&l, 1000, 0), p.allow(&l, 1000, 0) // each takes half the burst
	if !first || !second {
		t.Fatal("burst refused")
	}
	if p.allow(&l, 1, 0) {
		t.Fatal("a byte past the burst passed")
	}
	// Half a second refills 500 bytes, and refused packets are not charged.
	if p.allow(&l, 501, sec/2) || !p.allow(&l, 500, sec/2) || p.allow(&l, 10, sec/2) {
		t.Fatal("refill at 1000 B/s not exact")
	}
	// A long quiet spell refills the burst, no more.
	passed := 0
	for p.allow(&l, 100, 100*sec) {
		passed += 100
	}
	if passed != 2000 {
		t.Fatalf("after a quiet spell %d bytes passed, want the 2000-byte burst", passed)
	}
	// A packet bigger than anything relayed is charged at maxCharge, not at
	// a size that would overflow.
	big := newBandwidthPolicy(1, maxBandwidthBurst)
	var lb bandwidthLimit
	if !big.allow(&lb, 1<<40, 0) || lb.tat.Load() != maxCharge*sec {
		t.Fatalf("oversized packet charged %d ns, want %d", lb.tat.Load(), maxCharge*sec)
	}

	// Over 10 simulated seconds, a sender at 5x the rate gets the rate plus
	// the burst; one at half the rate gets everything.
	for _, tc := range []struct {
		name      string
		every     int64 // ns between 100-byte packets
		want, tol int
	}{
		{"5x the rate", sec / 50, 2000 + 10*1000, 100},
		{"half the rate", sec / 5, 50 * 100, 0},
	} {
		var l bandwidthLimit
		got := 0
		for now := int64(0); now < 10*sec; now += tc.every {
			if p.allow(&l, 100, now) {
				got += 100
			}
		}
		if got < tc.want-tc.tol || got > tc.want+tc.tol {
			t.Errorf("%s: %d bytes passed, want %d ± %d", tc.name, got, tc.want, tc.tol)
		}
	}
}

// NoBandwidthLimit turns the limit off; the default is on.
func TestBandwidthUnlimited(t *testing.T) {
	srv, _ := newServer(t, func(c *Config) { c.MaxBandwidth = NoBandwidthLimit })
	if srv.allocs.bw.limited {
		t.Fatal("NoBandwidthLimit still limits")
	}
	c := &relayConn{}
	for range 10_000 {
		if !srv.allocs.admit(c, packetCap) {
			t.Fatal("unlimited server dropped a packet")
		}
	}
	def, _ := newServer(t)
	if !def.allocs.bw.limited || def.allocs.bw.rate != DefaultMaxBandwidth {
		t.Fatalf("default limit %+v, want %d B/s", def.allocs.bw, DefaultMaxBandwidth)
	}
}

// Every path a relayed packet can take charges the sending allocation: the
// fast path to the peer's client, the fast path to the peer's inbox, pion's
// relay WriteTo and a relay socket's kernel read. At 1000 B/s with a
// 2000-byte burst, ten 1000-byte packets sent at once pass two (three if the
// machine stalls a whole second); the rest are dropped, counted, and logged
// once.
func TestBandwidthChargedOnEveryPath(t *testing.T) {
	payload := string(make([]byte, 1000))
	paths := map[string]func(t *testing.T, allocs *allocations, a, b *relayConn) (passed int){
		"fast path": func(t *testing.T, allocs *allocations, a, _ *relayConn) int {
			n := 0
			for range 10 {
				pkt := channelData(0x4000, payload)
				orig := append([]byte(nil), pkt...)
				_, m, ok := allocs.forward(pkt, a.client)
				if !ok {
					t.Fatal("left to pion: it would charge the packet again")
				}
				if m > 0 {
					n++
				} else if !bytes.Equal(pkt, orig) {
					t.Fatal("dropped packet was rewritten")
				}
			}

			return n
		},
		"fast path to inbox": func(t *testing.T, allocs *allocations, a, b *relayConn) int {
			b.channels.reset()
			for range 10 {
				if _, _, ok := allocs.forward(channelData(0x4000, payload), a.client); !ok {
					t.Fatal("left to pion")
				}
			}

			return drain(b)
		},
		"relay WriteTo": func(t *testing.T, _ *allocations, a, b *relayConn) int {
			for range 10 {
				if n, err := a.WriteTo([]byte(payload), b.public); n != len(payload) || err != nil {
					t.Fatalf("WriteTo = %d, %v: a drop must look like a send", n, err)
				}
			}

			return drain(b)
		},
		"kernel read": func(t *testing.T, allocs *allocations, a, b *relayConn) int {
			// Register a under its real port, so its socket's packets are
			// recognised as coming from one of our relays.
			real := uint16(a.conn.LocalAddr().(*net.UDPAddr).Port) //nolint:gosec,forcetypeassert // test socket
			allocs.mu.Lock()
			allocs.relays[real] = a
			allocs.mu.Unlock()
			for range 10 {
				if _, err := a.conn.WriteTo([]byte(payload), b.conn.LocalAddr()); err != nil {
					t.Fatal(err)
				}
			}
			_ = b.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			buf := make([]byte, packetCap)
			n := 0
			for {
				if _, _, err := b.ReadFrom(buf); err != nil {
					return n
				}
				n++
			}
		},
	}
	for name, send := range paths {
		t.Run(name, func(t *testing.T) {
			allocs, _, a, b := unitAllocations(t)
			var logs logBuffer
			allocs.log = slog.New(slog.NewTextHandler(&logs, nil))
			allocs.bw = newBandwidthPolicy(1000, 2000)
			passed := send(t, allocs, a, b)
			if passed < 2 || passed > 3 {
				t.Fatalf("%d of 10 packets passed, want the 2 of the burst", passed)
			}
			if d := allocs.droppedBandwidth.Load(); d != uint64(10-passed) || a.bw.droppedPackets.Load() != d ||
				allocs.droppedBandwidthBytes.Load() != d*1000 {
				t.Fatalf("dropped %d packets (%d bytes), allocation %d; want %d", d,
					allocs.droppedBandwidthBytes.Load(), a.bw.droppedPackets.Load(), 10-passed)
			}
			if b.bw.droppedPackets.Load() != 0 {
				t.Fatal("the receiving allocation was charged")
			}
			if n := strings.Count(logs.String(), "relay bandwidth limit reached"); n != 1 ||
				!strings.Contains(logs.String(), "session=a") {
				t.Fatalf("%d limit lines, want 1 naming the session:\n%s", n, logs.String())
			}
		})
	}
}

// drain counts the packets waiting in c's inbox.
func drain(c *relayConn) int {
	buf := make([]byte, packetCap)
	n := 0
	for {
		if _, _, ok := c.in.take(buf); !ok {
			return n
		}
		n++
	}
}

// Through the real server and real pion clients: a sender well under the
// limit loses nothing; one at several times the limit gets about the limit
// through, the rest counted as dropped; another allocation sending at the
// same time is untouched. Run over the ChannelData fast path (UDP clients
// with channels bound both ways) and over pion's path (a TCP sender).
func TestBandwidthLimitThroughServer(t *testing.T) {
	t.Run("fast path", func(t *testing.T) { testBandwidthThroughServer(t, false) })
	t.Run("pion path", func(t *testing.T) { testBandwidthThroughServer(t, true) })
}

func testBandwidthThroughServer(t *testing.T, tcpSender bool) {
	const (
		limit  = 40_000 // B/s
		burst  = 8_000  // B
		window = 2 * time.Second
	)
	srv, fs := newServer(t, func(c *Config) { c.MaxBandwidth, c.BandwidthBurst = limit, burst })
	for _, s := range []string{"a", "b", "c", "d"} {
		fs.join(s, "room")
	}
	clientA := newClient(t, srv, srv.Credentials("a", time.Now()))
	if tcpSender {
		clientA = newTCPClient(t, srv, srv.Credentials("a", time.Now()))
	}
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	clientC := newClient(t, srv, srv.Credentials("c", time.Now()))
	clientD := newClient(t, srv, srv.Credentials("d", time.Now()))
	a, b, c, d := allocate(t, clientA), allocate(t, clientB), allocate(t, clientC), allocate(t, clientD)
	permitFrom(t, clientA, b)
	permitFrom(t, clientB, a)
	permitFrom(t, clientC, d)
	permitFrom(t, clientD, c)
	// Warm up both ways, which also binds channels.
	for _, p := range [][2]net.PacketConn{{a, b}, {b, a}, {c, d}, {d, c}} {
		if !deliver(p[0], p[1].LocalAddr(), p[1], "warm up", arrives) {
			t.Fatal("no traffic before the test")
		}
	}
	ra, rb, rc := relayOf(t, srv, a), relayOf(t, srv, b), relayOf(t, srv, c)
	if !tcpSender && !eventually(arrives, func() bool { return boundTo(srv, ra, b) && boundTo(srv, rb, a) }) {
		t.Fatal("channels not bound: the fast path would not be tested")
	}
	atB, atD := countTagged(b), countTagged(d)

	// Well under the limit: 100 packets of 200 B at 20 KB/s. All arrive.
	sent, _ := pace(a, b.LocalAddr(), 'U', 200, 10*time.Millisecond, 100, 0)
	if sent != 100*200 {
		t.Fatalf("sent %d bytes", sent)
	}
	if !eventually(arrives, func() bool { return atB.bytes('U') == sent }) {
		t.Fatalf("under the limit: %d of %d bytes arrived", atB.bytes('U'), sent)
	}
	if n := ra.bw.droppedPackets.Load(); n != 0 {
		t.Fatalf("under the limit: %d packets dropped", n)
	}

	// a floods at several times the limit while c sends under it.
	quiet := make(chan int, 1)
	go func() {
		n, _ := pace(c, d.LocalAddr(), 'Q', 200, 10*time.Millisecond, 0, window)
		quiet <- n
	}()
	start := time.Now()
	offered, _ := pace(a, b.LocalAddr(), 'F', 1000, 5*time.Millisecond, 0, window)
	elapsed := time.Since(start) // the bucket can only have passed packets within this
	quietSent := <-quiet
	if float64(offered) < 3*limit*elapsed.Seconds() {
		t.Fatalf("the flood offered only %d bytes in %v: not several times the limit", offered, elapsed)
	}
	settled := func(tc *tagCounter, tag byte) int {
		last := -1
		for tc.bytes(tag) != last {
			last = tc.bytes(tag)
			time.Sleep(300 * time.Millisecond)
		}

		return last
	}
	got := settled(atB, 'F')
	most := burst + limit*elapsed.Seconds() + 1000 // + one packet for rounding
	least := 0.5 * limit * elapsed.Seconds()
	t.Logf("flood: offered %d B in %v (%.0f B/s), %d B through (%.0f B/s), limit %d B/s",
		offered, elapsed.Round(time.Millisecond), float64(offered)/elapsed.Seconds(),
		got, float64(got)/elapsed.Seconds(), limit)
	if float64(got) > most || float64(got) < least {
		t.Fatalf("flood: %d bytes through, want between %.0f and %.0f", got, least, most)
	}
	dropped := srv.Stats().DroppedBandwidthBytes
	if dropped == 0 || ra.bw.droppedBytes.Load() != dropped {
		t.Fatalf("dropped bytes: server %d, sender's allocation %d", dropped, ra.bw.droppedBytes.Load())
	}
	if total := int(dropped) + got; total > offered || float64(total) < 0.9*float64(offered) {
		t.Fatalf("%d dropped + %d through does not account for %d offered", dropped, got, offered)
	}
	// The bystander lost nothing and was charged nothing over.
	if n := settled(atD, 'Q'); n != quietSent {
		t.Fatalf("bystander: %d of %d bytes arrived", n, quietSent)
	}
	if n := rc.bw.droppedPackets.Load(); n != 0 {
		t.Fatalf("bystander: %d packets dropped", n)
	}
	atB.stop()
	atD.stop()
}

// pace sends packets of size bytes tagged tag from conn to `to`, one every
// `every`, until count were sent or, with count 0, for d. It returns the
// bytes sent and how long it took. Sleeps may overshoot under -race; callers
// check the rate they actually got.
func pace(conn net.PacketConn, to net.Addr, tag byte, size int, every time.Duration, count int,
	d time.Duration,
) (sent int, took time.Duration) {
	p := bytes.Repeat([]byte{tag}, size)
	start := time.Now()
	next := start
	for i := 0; count == 0 || i < count; i++ {
		if count == 0 && time.Since(start) >= d {
			break
		}
		// Count the payload, not WriteTo's n: pion's client returns the
		// whole Send indication's length (payload + 44 B of STUN) for a
		// packet it sends while its ChannelBind is still in flight.
		if _, err := conn.WriteTo(p, to); err == nil {
			sent += size
		}
		// Keep to the schedule rather than sleeping a fixed time, so a slow
		// iteration is caught up and the rate is what was asked for.
		next = next.Add(every)
		time.Sleep(time.Until(next))
	}

	return sent, time.Since(start)
}

// tagCounter counts the bytes rx receives by their first byte.
type tagCounter struct {
	rx   net.PacketConn
	by   [256]atomic.Int64
	done chan struct{}
}

func countTagged(rx net.PacketConn) *tagCounter {
	tc := &tagCounter{rx: rx, done: make(chan struct{})}
	_ = rx.SetReadDeadline(time.Time{})
	go func() {
		defer close(tc.done)
		buf := make([]byte, 1600)
		for {
			n, _, err := rx.ReadFrom(buf)
			if err != nil {
				return
			}
			if n > 0 {
				tc.by[buf[0]].Add(int64(n))
			}
		}
	}()

	return tc
}

func (tc *tagCounter) bytes(tag byte) int { return int(tc.by[tag].Load()) }

// stop ends the reader.
func (tc *tagCounter) stop() {
	_ = tc.rx.SetReadDeadline(time.Now())
	<-tc.done
}
