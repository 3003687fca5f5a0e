package turn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v4"
)

// relayOf returns the server side of a client's allocation.
func relayOf(t *testing.T, srv *Server, p net.PacketConn) *relayConn {
	t.Helper()
	srv.allocs.mu.RLock()
	defer srv.allocs.mu.RUnlock()
	rc := srv.allocs.relays[uint16(p.LocalAddr().(*net.UDPAddr).Port)] //nolint:gosec,forcetypeassert // a UDP test port
	if rc == nil {
		t.Fatal("relay not registered")
	}

	return rc
}

// boundTo reports whether the mirror shows rc with a channel to relay port peer.
func boundTo(srv *Server, rc *relayConn, peer net.PacketConn) bool {
	srv.allocs.mu.RLock()
	defer srv.allocs.mu.RUnlock()
	_, ok := rc.channelTo(uint16(peer.LocalAddr().(*net.UDPAddr).Port)) //nolint:gosec,forcetypeassert // a UDP test port

	return ok
}

// channelPair makes two same-room allocations whose pion clients have bound
// channels to each other, so their traffic takes the ChannelData fast path.
func channelPair(t *testing.T, srv *Server, fs *fakeSessions) (a, b net.PacketConn, ra, rb *relayConn) {
	t.Helper()
	fs.join("a", "r1")
	fs.join("b", "r1")
	clientA := newClient(t, srv, srv.Credentials("a", time.Now()))
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	a, b = allocate(t, clientA), allocate(t, clientB)
	permitFrom(t, clientA, b)
	permitFrom(t, clientB, a)
	ra, rb = relayOf(t, srv, a), relayOf(t, srv, b)
	// pion's client binds a channel in the background on its first WriteTo.
	if !deliver(a, b.LocalAddr(), b, "bind a->b", arrives) || !deliver(b, a.LocalAddr(), a, "bind b->a", arrives) {
		t.Fatal("no traffic between same-room relays")
	}
	if !eventually(arrives, func() bool { return boundTo(srv, ra, b) && boundTo(srv, rb, a) }) {
		t.Fatal("channel bindings not mirrored")
	}

	return a, b, ra, rb
}

// The fast path relays only what the policy allows: same room, both live,
// whether rooms are asked per packet or cached with change reports.
func TestFastPathPolicy(t *testing.T) {
	t.Run("RoomOf per packet", func(t *testing.T) { testFastPathPolicy(t) })
	t.Run("cached rooms", func(t *testing.T) { testFastPathPolicy(t, notifying) })
}

func testFastPathPolicy(t *testing.T, opts ...func(*Config)) {
	srv, fs := newServer(t, opts...)
	a, b, _, _ := channelPair(t, srv, fs)
	if !deliver(a, b.LocalAddr(), b, "fast a->b", arrives) || !deliver(b, a.LocalAddr(), a, "fast b->a", arrives) {
		t.Fatal("same-room ChannelData did not arrive")
	}

	before := srv.Stats().DroppedWrites
	fs.join("b", "r2")
	if !neverArrives(a, b.LocalAddr(), b, "a->b other room", silence) ||
		!neverArrives(b, a.LocalAddr(), a, "b->a other room", silence) {
		t.Fatal("ChannelData crossed rooms")
	}
	if srv.Stats().DroppedWrites <= before {
		t.Fatal("refused ChannelData not counted as dropped")
	}
	fs.join("b", "")
	if !neverArrives(a, b.LocalAddr(), b, "a->b no room", silence) {
		t.Fatal("ChannelData reached a session in no room")
	}
	fs.join("b", "r1")
	if !deliver(a, b.LocalAddr(), b, "a->b back", arrives) {
		t.Fatal("ChannelData did not resume once back in the room: the negatives prove nothing")
	}
	fs.end("b")
	if !neverArrives(a, b.LocalAddr(), b, "a->b ended", silence) {
		t.Fatal("ChannelData reached an ended session")
	}
}

// A closed allocation's relay and channels leave the mirror at once.
func TestFastPathForgetsClosedRelays(t *testing.T) {
	srv, fs := newServer(t)
	a, b, ra, rb := channelPair(t, srv, fs)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !eventually(arrives, func() bool {
		srv.allocs.mu.RLock()
		defer srv.allocs.mu.RUnlock()

		return srv.allocs.relays[rb.port] == nil && srv.allocs.clients[rb.client] == nil && rb.channels.len() == 0
	}) {
		t.Fatal("closed relay still mirrored")
	}
	if boundTo(srv, ra, b) {
		// a's own binding to b's port lives on in pion until it expires; it
		// must lead nowhere.
		if _, _, ok := srv.allocs.forward(channelData(0x4000, "x"), ra.client); ok {
			t.Fatal("fast path forwarded to a closed relay")
		}
	}
	_ = a
}

func channelData(number uint16, payload string) []byte {
	b := make([]byte, channelHeader+len(payload))
	binary.BigEndian.PutUint16(b[0:2], number)
	binary.BigEndian.PutUint16(b[2:4], uint16(len(payload))) //nolint:gosec // short
	copy(b[channelHeader:], payload)

	return b
}

// unitAllocations is an allocations with two hand-made relays a (port 1000, client
// 127.0.0.1:5000) and b (port 2000, client 127.0.0.1:6000) bound to each
// other on channels 0x4000 (a) and 0x4001 (b).
func unitAllocations(t testing.TB, opts ...func(*Config)) (*allocations, *fakeSessions, *relayConn, *relayConn) {
	t.Helper()
	fs := newFakeSessions()
	fs.join("a", "r1")
	fs.join("b", "r1")
	cfg := testConfig(fs)
	for _, o := range opts {
		o(&cfg)
	}
	cfg = cfg.prepared()
	allocs := newAllocations(cfg, testLogger())
	mk := func(port uint16, session string, client string) *relayConn {
		conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		c := &relayConn{
			conn: conn, allocs: allocs, port: port, session: session,
			public:    &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1).To4(), Port: int(port)},
			client:    netip.MustParseAddrPort(client),
			udpClient: true,
		}
		allocs.relays[port] = c
		allocs.clients[c.client] = c

		return c
	}
	a, b := mk(1000, "a", "127.0.0.1:5000"), mk(2000, "b", "127.0.0.1:6000")
	a.channels = newChannelTable(channelBinding{number: 0x4000, peer: 2000})
	b.channels = newChannelTable(channelBinding{number: 0x4001, peer: 1000})

	return allocs, fs, a, b
}

func TestForward(t *testing.T) {
	allocs, fs, a, b := unitAllocations(t)

	pkt := channelData(0x4000, "hello")
	to, n, ok := allocs.forward(pkt, a.client)
	if !ok || to != b.client || n != len(pkt) {
		t.Fatalf("forward = %v %d %v, want %v %d true", to, n, ok, b.client, len(pkt))
	}
	if got := binary.BigEndian.Uint16(pkt[0:2]); got != 0x4001 {
		t.Fatalf("channel rewritten to %#x, want b's 0x4001", got)
	}
	// Padding after the declared length is not sent on.
	padded := append(channelData(0x4000, "abc"), 0)
	if _, n, ok := allocs.forward(padded, a.client); !ok || n != channelHeader+3 {
		t.Fatalf("padded: n = %d ok = %v, want %d", n, ok, channelHeader+3)
	}
	// An IPv4-mapped source is the same client.
	mapped := netip.AddrPortFrom(netip.AddrFrom16(a.client.Addr().As16()), a.client.Port())
	if _, _, ok := allocs.forward(channelData(0x4000, "m"), mapped); !ok {
		t.Fatal("v4-mapped client source not recognised")
	}

	// Everything the fast path does not relay is left to pion (ok=false),
	// whose path applies the same policy and counts the drop.
	refused := map[string]func() (netip.AddrPort, []byte){
		"unknown client": func() (netip.AddrPort, []byte) {
			return netip.MustParseAddrPort("127.0.0.1:7000"), channelData(0x4000, "x")
		},
		"unknown channel": func() (netip.AddrPort, []byte) { return a.client, channelData(0x4005, "x") },
		"length beyond packet": func() (netip.AddrPort, []byte) {
			p := channelData(0x4000, "x")
			binary.BigEndian.PutUint16(p[2:4], 50)

			return a.client, p
		},
		"other room": func() (netip.AddrPort, []byte) {
			fs.join("b", "r2")

			return a.client, channelData(0x4000, "x")
		},
		"peer in no room": func() (netip.AddrPort, []byte) {
			fs.join("b", "")

			return a.client, channelData(0x4000, "x")
		},
		"peer ended": func() (netip.AddrPort, []byte) {
			fs.end("b")

			return a.client, channelData(0x4000, "x")
		},
		"sender ended": func() (netip.AddrPort, []byte) {
			fs.end("a")

			return a.client, channelData(0x4000, "x")
		},
		"peer closed": func() (netip.AddrPort, []byte) {
			allocs.removeRelay(b)

			return a.client, channelData(0x4000, "x")
		},
	}
	for _, name := range []string{"unknown client", "unknown channel", "length beyond packet", "other room",
		"peer in no room", "peer ended", "sender ended", "peer closed"} {
		t.Run(name, func(t *testing.T) {
			fs.join("a", "r1")
			fs.join("b", "r1")
			src, p := refused[name]()
			orig := append([]byte(nil), p...)
			if _, _, ok := allocs.forward(p, src); ok {
				t.Fatal("forwarded")
			}
			if !bytes.Equal(p, orig) {
				t.Fatal("refused packet was modified; pion must see it as sent")
			}
		})
	}
}

// Without a channel back to the sender (or with a TCP client), B's packet
// goes to its inbox and pion's read loop for B sends it on.
func TestForwardWithoutChannelBackUsesInbox(t *testing.T) {
	allocs, _, a, b := unitAllocations(t)
	b.channels.reset()
	if _, n, ok := allocs.forward(channelData(0x4000, "via inbox"), a.client); !ok || n != 0 {
		t.Fatalf("forward: n = %d ok = %v, want handed over (0, true)", n, ok)
	}
	buf := make([]byte, 100)
	n, from, err := b.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "via inbox" || from.String() != a.public.String() {
		t.Fatalf("ReadFrom = %q from %v (%v), want %q from %v", buf[:n], from, err, "via inbox", a.public)
	}
	b.channels = newChannelTable(channelBinding{number: 0x4001, peer: 1000})
	b.udpClient = false
	if _, n, ok := allocs.forward(channelData(0x4000, "tcp peer"), a.client); !ok || n != 0 {
		t.Fatalf("TCP peer: n = %d ok = %v, want handed over", n, ok)
	}
	if n, _, _ := b.ReadFrom(buf); string(buf[:n]) != "tcp peer" {
		t.Fatalf("TCP peer got %q", buf[:n])
	}
}

func TestFastPathDoesNotAllocate(t *testing.T) {
	allocs, _, a, b := unitAllocations(t)
	pkt := channelData(0x4000, string(make([]byte, 150)))
	buf := make([]byte, packetCap)
	for name, f := range map[string]func(){
		"forward": func() {
			binary.BigEndian.PutUint16(pkt[0:2], 0x4000)
			allocs.forward(pkt, a.client)
		},
		"hand over and read": func() {
			b.deliver(pkt[channelHeader:], a.public)
			_, _, _ = b.ReadFrom(buf)
		},
	} {
		// The pool may allocate once when it is empty.
		f()
		if n := testing.AllocsPerRun(1000, f); n > 0.01 {
			t.Errorf("%s: %.2f allocations per packet", name, n)
		}
	}
}

// A reader parked in the kernel socket is woken by a packet handed over in
// memory; the caller's own read deadline still holds; Close wakes it.
func TestInboxReader(t *testing.T) {
	_, _, a, b := unitAllocations(t)
	buf := make([]byte, 100)
	got := make(chan string, 1)
	go func() {
		n, _, err := b.ReadFrom(buf)
		if err != nil {
			got <- err.Error()

			return
		}
		got <- string(buf[:n])
	}()
	if !eventually(time.Second, b.parked.Load) {
		t.Fatal("reader never parked in the kernel read")
	}
	b.deliver([]byte("wake up"), a.public)
	select {
	case s := <-got:
		if s != "wake up" {
			t.Fatalf("read %q", s)
		}
	case <-time.After(arrives):
		t.Fatal("parked reader not woken by a handed-over packet")
	}

	// A kick leaves the caller's deadline in force.
	if err := b.SetReadDeadline(time.Now().Add(150 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b.deliver([]byte("one"), a.public)
	if n, _, err := b.ReadFrom(buf); err != nil || string(buf[:n]) != "one" {
		t.Fatalf("ReadFrom = %q, %v", buf[:n], err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		b.deliver([]byte("two"), a.public) // kicks the parked reader
	}()
	if n, _, err := b.ReadFrom(buf); err != nil || string(buf[:n]) != "two" {
		t.Fatalf("ReadFrom = %q, %v", buf[:n], err)
	}
	if _, _, err := b.ReadFrom(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadFrom after the deadline: %v, want deadline exceeded", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Fatalf("deadline hit after %v, before it was due", waited)
	}
	_ = b.SetReadDeadline(time.Time{})

	done := make(chan error, 1)
	go func() { _, _, err := b.ReadFrom(buf); done <- err }()
	if !eventually(time.Second, b.parked.Load) {
		t.Fatal("reader never parked")
	}
	_ = b.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("ReadFrom on a closed relay returned a packet")
		}
	case <-time.After(arrives):
		t.Fatal("Close did not wake the reader")
	}
	if d := b.deliver([]byte("late"), a.public); d != dropGone {
		t.Fatalf("deliver to a closed relay = %d, want dropGone", d)
	}
}

// A packet handed to a relay that closed after the sender looked it up (the
// window between the lookup and the hand-over) is counted as a policy drop,
// not as an overflow: no queue was full. A full inbox still counts as one.
func TestHandOverCountsByCause(t *testing.T) {
	allocs, _, a, b := unitAllocations(t)
	for range inboxMax {
		allocs.handOver(b, []byte("x"), a)
	}
	allocs.handOver(b, []byte("x"), a)
	if got := allocs.droppedFull.Load(); got != 1 {
		t.Fatalf("a full inbox: overflow = %d, want 1", got)
	}
	_ = b.Close()
	allocs.handOver(b, []byte("late"), a)
	if full, gone := allocs.droppedFull.Load(), allocs.droppedWrites.Load(); full != 1 || gone != 1 {
		t.Fatalf("a closed relay: overflow = %d (want 1), policy = %d (want 1)", full, gone)
	}
}

// The inbox holds at most inboxMax packets; the rest are dropped.
func TestInboxBound(t *testing.T) {
	_, _, a, b := unitAllocations(t)
	for range inboxMax {
		if b.deliver([]byte("x"), a.public) != delivered {
			t.Fatal("dropped below the bound")
		}
	}
	if b.deliver([]byte("x"), a.public) != dropFull {
		t.Fatal("inbox grew past its bound")
	}
	if b.deliver(make([]byte, packetCap+1), a.public) == delivered {
		t.Fatal("oversized packet accepted")
	}
}

// Many writers and one reader, for the race detector.
func TestInboxConcurrent(t *testing.T) {
	_, _, a, b := unitAllocations(t)
	const writers, each = 4, 500
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				for b.deliver([]byte("p"), a.public) != delivered {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	buf := make([]byte, 10)
	for range writers * each {
		if _, _, err := b.ReadFrom(buf); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

// Several listeners share the port; clients spread over them still relay.
func TestReusePortListeners(t *testing.T) {
	if !reusePortSupported {
		t.Skip("no SO_REUSEPORT here")
	}
	srv, fs := newServer(t, func(c *Config) { c.UDPListeners = 4 })
	if len(srv.udp) != 4 {
		t.Fatalf("%d UDP listeners, want 4", len(srv.udp))
	}
	const n = 6
	relays := make([]net.PacketConn, n)
	clients := make([]*pionturn.Client, n)
	for i := range n {
		s := string(rune('a' + i))
		fs.join(s, "room")
		clients[i] = newClient(t, srv, srv.Credentials(s, time.Now()))
		relays[i] = allocate(t, clients[i])
	}
	for i := range n {
		permitFrom(t, clients[i], relays[(i+n-1)%n])
	}
	for i := range n {
		j := (i + 1) % n
		if !deliver(relays[i], relays[j].LocalAddr(), relays[j], "ring", arrives) {
			t.Fatalf("relay %d -> %d failed", i, j)
		}
	}
}
