package turn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// listenerRig is a TURN listener socket read through udpListener, as pion's
// read loop reads it, with the fast path between two real client sockets:
// relay a (client ca) and relay b (client cb) bound to each other on
// channels 0x4000 (a) and 0x4001 (b).
type listenerRig struct {
	allocs *allocations
	fs     *fakeSessions
	a, b   *relayConn
	ca, cb *net.UDPConn
	ln     *net.UDPConn
	tc     *udpListener
	buf    []byte
}

func newListenerRig(tb testing.TB, batch int, opts ...func(*Config)) *listenerRig {
	tb.Helper()
	allocs, fs, a, b := unitAllocations(tb, opts...)
	udp := func() *net.UDPConn {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = c.Close() })
		raiseBuffers(c)

		return c
	}
	r := &listenerRig{allocs: allocs, fs: fs, a: a, b: b, ca: udp(), cb: udp(), ln: udp(), buf: make([]byte, inboundMTU)}
	r.rekey(a, r.ca)
	r.rekey(b, r.cb)
	var c Config
	for _, o := range opts {
		o(&c)
	}
	r.tc = newUDPListener(r.ln, allocs, nil, allocs.stats.newListener(), batch, !c.DisableUDPGSO)

	return r
}

// rekey makes c the client socket of relay rc.
func (r *listenerRig) rekey(rc *relayConn, c *net.UDPConn) {
	r.allocs.mu.Lock()
	defer r.allocs.mu.Unlock()
	delete(r.allocs.clients, rc.client)
	rc.client = c.LocalAddr().(*net.UDPAddr).AddrPort() //nolint:forcetypeassert // a UDP socket
	r.allocs.clients[rc.client] = rc
}

// addr is the listener's address.
func (r *listenerRig) addr() netip.AddrPort {
	return r.ln.LocalAddr().(*net.UDPAddr).AddrPort() //nolint:forcetypeassert // a UDP socket
}

// send sends each packet from c to the listener, in order.
func (r *listenerRig) send(tb testing.TB, c *net.UDPConn, pkts ...[]byte) {
	tb.Helper()
	for _, p := range pkts {
		if _, err := c.WriteToUDPAddrPort(p, r.addr()); err != nil {
			tb.Fatal(err)
		}
	}
}

// stunLike is a datagram the fast path leaves to pion: ReadFrom returns it.
func stunLike(tag byte) []byte {
	return []byte{0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42, tag, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
}

// readUntil calls ReadFrom until it returns, failing the test after d.
func (r *listenerRig) readUntil(tb testing.TB, d time.Duration) []byte {
	tb.Helper()
	_ = r.ln.SetReadDeadline(time.Now().Add(d))
	defer func() { _ = r.ln.SetReadDeadline(time.Time{}) }()
	n, _, err := r.tc.ReadFrom(r.buf)
	if err != nil {
		tb.Fatalf("ReadFrom: %v", err)
	}

	return r.buf[:n]
}

// recvAll reads want datagrams from c, failing the test after d.
func recvAll(tb testing.TB, c *net.UDPConn, want int, d time.Duration) [][]byte {
	tb.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	out := make([][]byte, 0, want)
	buf := make([]byte, inboundMTU)
	for len(out) < want {
		n, _, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			tb.Fatalf("got %d of %d datagrams: %v", len(out), want, err)
		}
		out = append(out, append([]byte(nil), buf[:n]...))
	}

	return out
}

// nothingMore checks c receives nothing within d.
func nothingMore(tb testing.TB, c *net.UDPConn, d time.Duration) {
	tb.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	buf := make([]byte, inboundMTU)
	if n, _, err := c.ReadFromUDPAddrPort(buf); err == nil {
		tb.Fatalf("unexpected datagram %x", buf[:n])
	}
}

// BenchmarkListener is a TURN listener's read loop forwarding ChannelData
// on the fast path, per packet, with batched socket calls (batch=64) and
// one datagram per call (batch=1, the code before batching) side by side.
// burst is how many packets wait in the socket each time the loop wakes:
// 1 is a quiet server, 256 a saturated one. The sends to the receiving
// client are the server's (loopback delivery runs in the sender's context,
// as in make bench); the clients' own sends and reads are outside the timer.
// gso=true lets a batch's packets for one client go out as one segmented
// message (UDP GSO), as they do by default; every packet of a burst here
// goes to the same client, the best case for it.
// syscalls/pkt counts the loop's socket calls (not the netpoller's
// epoll_wait); cpu-ns/pkt is the process's CPU time (user and system)
// spent in the loop, steadier than ns/op on a shared machine. ns/op
// includes the timer's own stops and starts, which dominate at burst=1.
func BenchmarkListener(b *testing.B) {
	for _, payload := range []int{60, 150} {
		for _, burst := range []int{1, 16, 256} {
			for _, io := range []struct {
				batch int
				gso   bool
			}{{1, false}, {DefaultUDPBatch, false}, {DefaultUDPBatch, true}} {
				b.Run(fmt.Sprintf("payload=%d/burst=%d/batch=%d/gso=%v", payload, burst, io.batch, io.gso), func(b *testing.B) {
					benchListener(b, payload, burst, io.batch, io.gso)
				})
			}
		}
	}
}

func benchListener(b *testing.B, payload, burst, batch int, gso bool) {
	r := newListenerRig(b, batch, benchRate, func(c *Config) { c.DisableUDPGSO = !gso })
	send := newUDPIO(r.ca, DefaultUDPBatch, false, new(ioCounters))
	recv := newUDPIO(r.cb, DefaultUDPBatch, false, new(ioCounters))
	pkt := channelData(0x4000, string(make([]byte, payload)))
	out := make([]datagram, burst+1)
	for i := range burst {
		out[i] = datagram{buf: pkt, n: len(pkt), addr: r.addr()}
	}
	end := stunLike(0)
	last := datagram{buf: end, n: len(end), addr: r.addr()}
	in := make([]datagram, DefaultUDPBatch)
	for i := range in {
		in[i].buf = make([]byte, inboundMTU)
	}
	b.SetBytes(int64(payload))
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	b.StopTimer()
	for done := 0; done < b.N; done += burst {
		k := min(burst, b.N-done)
		out[k] = last
		for off := 0; off <= k; {
			n, err := send.write(out[off : k+1])
			if err != nil {
				b.Fatal(err)
			}
			off += n
		}
		out[k] = datagram{buf: pkt, n: len(pkt), addr: r.addr()}
		b.StartTimer()
		before := cpuTime()
		if p := r.readUntil(b, 5*time.Second); !bytes.Equal(p, end) {
			b.Fatalf("ReadFrom returned %x", p)
		}
		cpu += cpuTime() - before
		b.StopTimer()
		for got := 0; got < k; {
			n, err := recv.read(in)
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
	c := r.tc.calls
	calls := c.reads.Load() + c.writes.Load()
	b.ReportMetric(float64(calls)/float64(b.N), "syscalls/pkt")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/pkt")
	if sent := c.sentPkts.Load(); sent != uint64(b.N) { //nolint:gosec // b.N > 0
		b.Fatalf("sent %d of %d", sent, b.N)
	}
}

// Several allocations' packets in one batch each go to their own client,
// rewritten for its channel back, in the order they came.
func TestListenerBatchForSeveralAllocations(t *testing.T) {
	for _, batch := range []int{1, DefaultUDPBatch} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			r := newListenerRig(t, batch)
			var want [][]byte
			for i := range 10 {
				r.send(t, r.ca, channelData(0x4000, fmt.Sprintf("a%d", i)))
				r.send(t, r.cb, channelData(0x4001, fmt.Sprintf("b%d", i)))
				want = append(want, channelData(0x4001, fmt.Sprintf("a%d", i)))
			}
			r.send(t, r.ca, stunLike(1))
			if p := r.readUntil(t, arrives); !bytes.Equal(p, stunLike(1)) {
				t.Fatalf("ReadFrom returned %x, want the STUN message", p)
			}
			if got := recvAll(t, r.cb, 10, arrives); !equalPackets(got, want) {
				t.Fatalf("b's client got %q, want %q", got, want)
			}
			got := recvAll(t, r.ca, 10, arrives)
			for i, p := range got {
				if !bytes.Equal(p, channelData(0x4000, fmt.Sprintf("b%d", i))) {
					t.Fatalf("a's client got %q at %d", p, i)
				}
			}
			if batch > 1 && r.tc.calls.reads.Load() > 4 {
				t.Fatalf("%d reads for 21 datagrams waiting: not batched", r.tc.calls.reads.Load())
			}
		})
	}
}

func equalPackets(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}

	return true
}

// A batch shorter than UDPBatch is forwarded at once: the loop never waits
// for more packets before sending what it has.
func TestListenerShortBatchNotHeldBack(t *testing.T) {
	r := newListenerRig(t, DefaultUDPBatch)
	done := make(chan error, 1)
	go func() {
		_, _, err := r.tc.ReadFrom(r.buf) // only returns at the Close below
		done <- err
	}()
	for round := range 3 {
		r.send(t, r.ca, channelData(0x4000, "x1"), channelData(0x4000, "x2"), channelData(0x4000, "x3"))
		got := recvAll(t, r.cb, 3, arrives)
		if !bytes.Equal(got[2], channelData(0x4001, "x3")) {
			t.Fatalf("round %d: got %q", round, got)
		}
	}
	_ = r.ln.Close()
	if err := <-done; err == nil {
		t.Fatal("ReadFrom on a closed socket returned a packet")
	}
}

// A packet the fast path leaves to pion in the middle of a batch goes to
// pion whole, after the packets before it have been sent; those after it
// follow on the next read, with no new datagram needed.
func TestListenerMalformedMidBatch(t *testing.T) {
	for _, batch := range []int{1, DefaultUDPBatch} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			r := newListenerRig(t, batch)
			bad := channelData(0x4000, "x")
			binary.BigEndian.PutUint16(bad[2:4], 50) // longer than the packet
			short := []byte{0x40, 0x00}
			r.send(t, r.ca, channelData(0x4000, "before"), bad, short, channelData(0x4000, "after"), stunLike(2))
			if p := r.readUntil(t, arrives); !bytes.Equal(p, bad) {
				t.Fatalf("ReadFrom returned %x, want the malformed ChannelData %x", p, bad)
			}
			if got := recvAll(t, r.cb, 1, arrives); !bytes.Equal(got[0], channelData(0x4001, "before")) {
				t.Fatalf("got %q before pion's packet was handed over", got[0])
			}
			if p := r.readUntil(t, arrives); !bytes.Equal(p, short) {
				t.Fatalf("ReadFrom returned %x, want the short datagram", p)
			}
			if p := r.readUntil(t, arrives); !bytes.Equal(p, stunLike(2)) {
				t.Fatalf("ReadFrom returned %x, want the STUN message", p)
			}
			if got := recvAll(t, r.cb, 1, arrives); !bytes.Equal(got[0], channelData(0x4001, "after")) {
				t.Fatalf("got %q after", got[0])
			}
			nothingMore(t, r.cb, 50*time.Millisecond)
		})
	}
}

// A datagram too long for pion's buffer reaches pion cut at inboundMTU, as
// a single read cuts it, so pion drops it as truncated; the fast path does
// not forward it whatever its declared length says.
func TestListenerOversizedDatagram(t *testing.T) {
	for _, batch := range []int{1, DefaultUDPBatch} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			r := newListenerRig(t, batch)
			big := make([]byte, 2000)
			copy(big, stunLike(3))
			r.send(t, r.ca, big)
			if p := r.readUntil(t, arrives); len(p) != inboundMTU || !bytes.Equal(p, big[:inboundMTU]) {
				t.Fatalf("ReadFrom returned %d bytes, want the first %d", len(p), inboundMTU)
			}
		})
	}
}

// fakeIO hands a udpListener scripted batches and records what it sends: the
// kernel sending only part of a batch, or refusing one datagram in it.
type fakeIO struct {
	batches [][]datagram
	// writes scripts each write call: how many it sends, and whether the
	// next one is then refused.
	writes []fakeWrite
	sent   []string
	calls  []int // datagrams offered to each write
}

// useIO makes the rig's listener read and send through io, with 64 read
// slots whatever the platform gave it.
func (r *listenerRig) useIO(io udpIO) {
	r.tc.io = io
	if len(r.tc.in) < DefaultUDPBatch {
		r.tc.in = make([]datagram, DefaultUDPBatch)
		for i := range r.tc.in {
			r.tc.in[i].buf = make([]byte, inboundMTU)
		}
	}
}

type fakeWrite struct {
	n      int
	refuse bool
}

func (f *fakeIO) read(ds []datagram) (int, error) {
	if len(f.batches) == 0 {
		return 0, net.ErrClosed
	}
	b := f.batches[0]
	f.batches = f.batches[1:]
	for i, d := range b {
		ds[i].n = copy(ds[i].buf, d.buf[:d.n])
		ds[i].addr = d.addr
	}

	return len(b), nil
}

func (f *fakeIO) write(ds []datagram) (int, error) {
	w := fakeWrite{n: len(ds)}
	if len(f.writes) > 0 {
		w = f.writes[0]
		f.writes = f.writes[1:]
	}
	f.calls = append(f.calls, len(ds))
	n := min(w.n, len(ds))
	for _, d := range ds[:n] {
		f.sent = append(f.sent, fmt.Sprintf("%s %s", d.addr, d.buf[channelHeader:d.n]))
	}
	if w.refuse && n < len(ds) {
		return n, errFakeRefused
	}

	return n, nil
}

var errFakeRefused = fmt.Errorf("turn test: refused")

// A write batch the kernel sends in part is finished in further calls, and
// a datagram it refuses is dropped without losing those after it.
func TestListenerPartialWrite(t *testing.T) {
	r := newListenerRig(t, DefaultUDPBatch)
	f := &fakeIO{writes: []fakeWrite{{n: 2}, {n: 1, refuse: true}, {n: 0, refuse: true}, {n: 1}}}
	var batch []datagram
	var want []string
	for i := range 8 {
		p := channelData(0x4000, fmt.Sprintf("p%d", i))
		batch = append(batch, datagram{buf: p, n: len(p), addr: r.a.client})
		if i != 3 && i != 4 { // refused by the script: the 4th and 5th
			want = append(want, fmt.Sprintf("%s p%d", r.b.client, i))
		}
	}
	f.batches = [][]datagram{batch}
	r.useIO(f)
	if _, _, err := r.tc.ReadFrom(r.buf); err == nil {
		t.Fatal("ReadFrom returned a packet")
	}
	if fmt.Sprint(f.sent) != fmt.Sprint(want) {
		t.Fatalf("sent %q\nwant %q", f.sent, want)
	}
	if st := r.allocs.stats.fast(); st.Packets != 8 {
		t.Fatalf("fast path counted %d packets, want the 8 it forwarded", st.Packets)
	}
}

// A full batch of forwards goes out in groups of sendGroup, so the first
// packet read does not wait for all the others to be looked up; the order
// holds across groups, and a packet for pion still sends what came before.
func TestListenerSendsInGroups(t *testing.T) {
	r := newListenerRig(t, DefaultUDPBatch)
	f := &fakeIO{}
	var batch []datagram
	var want []string
	for i := range 2*sendGroup + 8 {
		p := channelData(0x4000, fmt.Sprintf("p%d", i))
		batch = append(batch, datagram{buf: p, n: len(p), addr: r.a.client})
		want = append(want, fmt.Sprintf("%s p%d", r.b.client, i))
	}
	f.batches = [][]datagram{batch}
	r.useIO(f)
	if _, _, err := r.tc.ReadFrom(r.buf); err == nil {
		t.Fatal("ReadFrom returned a packet")
	}
	if fmt.Sprint(f.calls) != fmt.Sprint([]int{sendGroup, sendGroup, 8}) {
		t.Fatalf("writes of %v datagrams, want %v", f.calls, []int{sendGroup, sendGroup, 8})
	}
	if fmt.Sprint(f.sent) != fmt.Sprint(want) {
		t.Fatalf("sent %q\nwant %q", f.sent, want)
	}
}

// With UDPBatch 1, or where the platform has no batch calls, a listener
// reads and sends one datagram per call; a server relays all the same.
func TestListenerSingleFallback(t *testing.T) {
	r := newListenerRig(t, 1)
	if _, ok := r.tc.io.(singleIO); !ok || len(r.tc.in) != 1 {
		t.Fatalf("UDPBatch 1: io %T with %d slots, want singleIO with 1", r.tc.io, len(r.tc.in))
	}
	r.send(t, r.ca, channelData(0x4000, "one"), channelData(0x4000, "two"), stunLike(4))
	if p := r.readUntil(t, arrives); !bytes.Equal(p, stunLike(4)) {
		t.Fatalf("ReadFrom returned %x", p)
	}
	if c := r.tc.calls; c.reads.Load() != 3 || c.writes.Load() != 2 {
		t.Fatalf("%d reads and %d writes for 3 datagrams, 2 forwarded; want one call each", c.reads.Load(), c.writes.Load())
	}
	recvAll(t, r.cb, 2, arrives)

	srv, fs := newServer(t, func(c *Config) { c.UDPBatch = 1 })
	a, b, _, _ := channelPair(t, srv, fs)
	if !deliver(a, b.LocalAddr(), b, "single a->b", arrives) || !deliver(b, a.LocalAddr(), a, "single b->a", arrives) {
		t.Fatal("ChannelData did not arrive with UDPBatch 1")
	}
	if srv.Stats().RelayedFast.Packets == 0 {
		t.Fatal("nothing went the fast path")
	}
}

// The read loop allocates nothing per packet, batched or not: reading a
// batch, forwarding it and sending it.
func TestListenerDoesNotAllocate(t *testing.T) {
	for _, batch := range []int{1, DefaultUDPBatch} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			r := newListenerRig(t, batch, benchRate) // 200 rounds would pass the default's burst
			recv := make([]byte, inboundMTU)
			pkts := make([][]byte, 0, 17)
			for range 16 {
				pkts = append(pkts, channelData(0x4000, string(make([]byte, 150))))
			}
			pkts = append(pkts, stunLike(5))
			round := func() {
				for _, p := range pkts[:16] {
					binary.BigEndian.PutUint16(p[0:2], 0x4000)
				}
				r.send(t, r.ca, pkts...)
				n, _, err := r.tc.ReadFrom(r.buf)
				if err != nil || n != len(pkts[16]) {
					t.Fatalf("ReadFrom: %d, %v", n, err)
				}
				for range 16 {
					if _, _, err := r.cb.ReadFromUDPAddrPort(recv); err != nil {
						t.Fatal(err)
					}
				}
			}
			round()
			// ReadFrom hands pion a *net.UDPAddr and its IP for the STUN
			// message it returns, as before: two allocations per round,
			// none per forwarded packet.
			if n := testing.AllocsPerRun(200, round); n > 2.01 {
				t.Errorf("%.2f allocations per round of 16 forwarded packets and one for pion", n)
			}
		})
	}
}

// FuzzListenerBatch feeds a listener's read loop batches of untrusted
// datagrams from a's client, b's client and a stranger, in any mix: the
// loop must hand pion exactly the datagrams the fast path leaves, unmodified
// and in order, and send exactly what forward decides for the others, in
// order, whatever is around them in the batch.
func FuzzListenerBatch(f *testing.F) {
	r := newListenerRig(f, DefaultUDPBatch, benchRate)
	stranger := netip.MustParseAddrPort("127.0.0.1:9")
	// A datagram is encoded as its source (0: a, 1: b, else the stranger),
	// its length and its bytes.
	enc := func(src byte, p []byte) []byte { return append([]byte{src, byte(len(p))}, p...) }
	bad := channelData(0x4000, "x")
	binary.BigEndian.PutUint16(bad[2:4], 50)
	f.Add(slices.Concat(enc(0, channelData(0x4000, "hi")), enc(1, channelData(0x4001, "yo")), enc(2, channelData(0x4000, "no"))))
	f.Add(slices.Concat(enc(0, channelData(0x4000, "a")), enc(0, bad), enc(0, stunLike(1)), enc(0, []byte{0x40}), enc(0, nil)))
	f.Add(slices.Concat(enc(1, channelData(0x4005, "unbound")), enc(0, channelData(0x4000, "ok"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		var batch []datagram
		for len(data) >= 2 && len(batch) < DefaultUDPBatch {
			src, n := data[0], min(int(data[1]), len(data)-2)
			p := append([]byte(nil), data[2:2+n]...)
			data = data[2+n:]
			from := stranger
			switch src {
			case 0:
				from = r.a.client
			case 1:
				from = r.b.client
			}
			batch = append(batch, datagram{buf: p, n: len(p), addr: from})
		}
		if len(batch) == 0 {
			return
		}
		// The oracle: forward on a copy of each datagram, in order.
		var wantPion, wantSent []string
		for _, d := range batch {
			p := append([]byte(nil), d.buf[:d.n]...)
			if len(p) >= channelHeader && p[0]&0xC0 == 0x40 {
				if to, m, ok := r.allocs.forward(p, d.addr); ok {
					if m > 0 {
						wantSent = append(wantSent, fmt.Sprintf("%s %s", to, p[channelHeader:m]))
					}

					continue
				}
			}
			wantPion = append(wantPion, fmt.Sprintf("%s %x", d.addr, p))
		}
		fk := &fakeIO{batches: [][]datagram{batch}}
		r.useIO(fk)
		var gotPion []string
		for {
			n, from, err := r.tc.ReadFrom(r.buf)
			if err != nil {
				break
			}
			gotPion = append(gotPion, fmt.Sprintf("%s %x", from.(*net.UDPAddr).AddrPort(), r.buf[:n])) //nolint:forcetypeassert // ours
		}
		if fmt.Sprint(gotPion) != fmt.Sprint(wantPion) {
			t.Fatalf("pion got %q\nwant %q", gotPion, wantPion)
		}
		if fmt.Sprint(fk.sent) != fmt.Sprint(wantSent) {
			t.Fatalf("sent %q\nwant %q", fk.sent, wantSent)
		}
	})
}
