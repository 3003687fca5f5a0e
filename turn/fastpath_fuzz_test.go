package turn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// FuzzForward feeds untrusted datagrams to the ChannelData fast path, from
// known clients, unknown ones and look-alikes, in an allocations built through
// the same allocation and channel events pion raises, and compares every
// verdict with an oracle written from the rules, not from the code. A
// forwarded packet must go to the client pion would send it to, rewritten for
// that client's channel back; anything the policy refuses is left to pion
// untouched.
func FuzzForward(f *testing.F) {
	worlds := []*fuzzWorld{
		newFuzzWorld(f, false, NoBandwidthLimit),
		// The cached-room path, invalidated by room changes as the hub reports them.
		newFuzzWorld(f, true, NoBandwidthLimit),
		// A limit low enough that the fuzzer runs into it: dropping over the
		// sender's budget must not change what is forwarded when within it.
		newFuzzWorld(f, false, 64<<10),
	}

	cd := func(number, length uint16, payload string) []byte {
		b := make([]byte, channelHeader+len(payload))
		binary.BigEndian.PutUint16(b[0:2], number)
		binary.BigEndian.PutUint16(b[2:4], length)
		copy(b[channelHeader:], payload)

		return b
	}
	stun := []byte{0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	for _, s := range []struct {
		src, state uint8
		pkt        []byte
	}{
		{srcA, 0, cd(0x4000, 5, "hello")},                         // a -> b, b has a channel back
		{srcB, 0, cd(0x4001, 4, "back")},                          // b -> a
		{srcA, 0, cd(0x4000, 3, "abc\x00")},                       // padded to 4 bytes
		{srcA, 0, cd(0x4000, 0, "")},                              // length 0
		{srcA, 0, cd(0x4000, 50, "x")},                            // length beyond the packet
		{srcA, 0, cd(0x4000, 0xFFFF, string(make([]byte, 1400)))}, // huge declared length
		{srcA, 0, []byte{0x40}},                                   // short
		{srcA, 0, []byte{0x40, 0x00, 0x00}},                       // short
		{srcA, 0, cd(0x4009, 1, "x")},                             // unknown channel
		{srcA, 0, cd(0x4004, 1, "x")},                             // bound to a port with no relay
		{srcA, 0, cd(0x4006, 1, "x")},                             // a rebinding pion would refuse
		{srcA, 0, cd(0x4003, 1, "x")},                             // peer in another room
		{srcA, 0, cd(0x4002, 2, "in")},                            // peer without a channel back: inbox
		{srcA, 0, cd(0x4005, 3, "tcp")},                           // TCP peer: inbox
		{srcA2, 0, cd(0x4000, 2, "a2")},                           // b has no channel back to a's second relay
		{srcB, 0, cd(0x7FFF, 1, "c")},                             // highest channel number
		{srcUnknown, 0, cd(0x4000, 1, "x")},                       // unknown source
		{srcTCPAsUDP, 0, cd(0x4000, 1, "x")},                      // a TCP client's address over UDP
		{srcMappedA, 0, cd(0x4000, 1, "m")},                       // v4-mapped a
		{srcOtherIP, 0, cd(0x4000, 1, "x")},                       // a's port on another IP
		{srcA, 0, stun},                                           // STUN-looking bytes
		{srcA, stateBOtherRoom, cd(0x4000, 1, "x")},
		{srcA, stateBEnded, cd(0x4000, 1, "x")},
		{srcA, stateANoRoom, cd(0x4000, 1, "x")},
		{srcA, stateAEnded, cd(0x4000, 1, "x")},
		{srcA, 1 << 6, cd(0x4000, 5, "hello")}, // the cached-room allocations
		{srcA, 2 << 6, cd(0x4000, 5, "hello")}, // the bandwidth-limited allocations
	} {
		f.Add(s.src, s.state, s.pkt)
	}

	f.Fuzz(func(t *testing.T, src, state uint8, pkt []byte) {
		// ReadFrom hands forward only datagrams of at least a header. It
		// also requires the ChannelData bits, but forward must cope with
		// any number, so that part of the guard is not applied here.
		if len(pkt) < channelHeader {
			return
		}
		w := worlds[int(state>>6)%len(worlds)]
		w.check(t, fuzzSources[int(src)%len(fuzzSources)], state&stateMask, pkt)
	})
}

// Sources the fuzzer picks from; the src byte indexes fuzzSources.
const (
	srcA uint8 = iota
	srcB
	srcC
	srcD
	srcA2
	srcTCPAsUDP
	srcUnknown
	srcMappedA
	srcOtherIP
	srcV6
)

var fuzzSources = []netip.AddrPort{
	srcA:        netip.MustParseAddrPort("127.0.0.1:5000"),
	srcB:        netip.MustParseAddrPort("127.0.0.1:6000"),
	srcC:        netip.MustParseAddrPort("127.0.0.1:7000"),
	srcD:        netip.MustParseAddrPort("127.0.0.1:8000"),
	srcA2:       netip.MustParseAddrPort("127.0.0.1:5001"),
	srcTCPAsUDP: netip.MustParseAddrPort("127.0.0.1:7500"),
	srcUnknown:  netip.MustParseAddrPort("127.0.0.1:9999"),
	srcMappedA:  netip.MustParseAddrPort("[::ffff:127.0.0.1]:5000"),
	srcOtherIP:  netip.MustParseAddrPort("127.0.0.2:5000"),
	srcV6:       netip.MustParseAddrPort("[::1]:5000"),
}

// Session states the fuzzer sets before a packet; the state byte's low bits.
const (
	stateBOtherRoom uint8 = 1 << iota
	stateBEnded
	stateANoRoom
	stateAEnded
	stateMask = 1<<iota - 1
)

// fuzzAlloc is one allocation as the oracle knows it.
type fuzzAlloc struct {
	name, session string
	client        netip.AddrPort
	udp           bool
	// channels maps channel numbers to the name of the allocation they are
	// bound to ("" for a port where no relay lives).
	channels map[uint16]string
	relay    *relayConn
}

// fuzzWorld is an allocations with allocations bound to each other:
//
//	a  (session a, room r1): 0x4000->b 0x4002->c 0x4003->d 0x4004->nowhere 0x4005->e
//	a2 (session a, room r1): 0x4000->b
//	b  (session b, room r1): 0x4001->a 0x7FFF->c
//	c  (session c, room r1): no channels, so its peers' packets go to its inbox
//	d  (session d, room r2): 0x4000->a
//	e  (session e, room r1, TCP client): 0x4000->a
type fuzzWorld struct {
	allocs *allocations
	fs     *fakeSessions
	made   []*fuzzAlloc
	buf    []byte
}

func newFuzzWorld(tb testing.TB, roomChanges bool, bandwidth int64) *fuzzWorld {
	tb.Helper()
	fs := newFakeSessions()
	cfg := testConfig(fs)
	cfg.MaxBandwidth, cfg.BandwidthBurst = bandwidth, DefaultBandwidthBurst(bandwidth)
	cfg = cfg.prepared()
	allocs := newAllocations(cfg, testLogger())
	if roomChanges {
		// As New does, before any packet.
		allocs.roomChanges = true
		tb.Cleanup(notifyingSessions{fs}.OnRoomChange(allocs.invalidate))
	}
	for s, room := range map[string]string{"a": "r1", "b": "r1", "c": "r1", "d": "r2", "e": "r1"} {
		fs.join(s, room)
	}
	w := &fuzzWorld{allocs: allocs, fs: fs, buf: make([]byte, packetCap)}
	gen := &relayGenerator{allocs: allocs, bindIP: net.IPv4(127, 0, 0, 1), log: testLogger()}
	server := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 3478}
	expiry := time.Now().Add(time.Hour).Unix()
	add := func(name, session, client string, udp bool) *fuzzAlloc {
		pc, relayAddr, err := gen.AllocatePacketConn("udp4", 0)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = pc.Close() })
		relay := pc.(*relayConn) //nolint:forcetypeassert // ours
		a := &fuzzAlloc{
			name: name, session: session, client: netip.MustParseAddrPort(client), udp: udp,
			channels: map[uint16]string{}, relay: relay,
		}
		var src net.Addr = net.UDPAddrFromAddrPort(a.client)
		if !udp {
			src = net.TCPAddrFromAddrPort(a.client)
		}
		allocs.onAllocationCreated(src, server, "udp", fmt.Sprintf("%d:%s", expiry, session), DefaultRealm, relayAddr, 600)
		w.made = append(w.made, a)

		return a
	}
	a := add("a", "a", "127.0.0.1:5000", true)
	a2 := add("a2", "a", "127.0.0.1:5001", true)
	b := add("b", "b", "127.0.0.1:6000", true)
	c := add("c", "c", "127.0.0.1:7000", true)
	d := add("d", "d", "127.0.0.1:8000", true)
	e := add("e", "e", "127.0.0.1:7500", false)
	// bind goes through pion's channel event; expected says whether the
	// mirror must take it (pion refuses rebinding a number or a peer).
	bind := func(from *fuzzAlloc, number uint16, to *fuzzAlloc, expected bool) {
		peerPort := 9 // no relay listens on the discard port
		name := ""
		if to != nil {
			peerPort, name = int(to.relay.port), to.name
		}
		allocs.onChannelCreated(nil, server, "udp", "", DefaultRealm, from.relay.public,
			&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1).To4(), Port: peerPort}, number)
		if expected {
			from.channels[number] = name
		}
	}
	bind(a, 0x4000, b, true)
	bind(a, 0x4002, c, true)
	bind(a, 0x4003, d, true)
	bind(a, 0x4004, nil, true)
	bind(a, 0x4005, e, true)
	bind(a, 0x4006, b, false) // b already has a channel
	bind(a, 0x4000, c, false) // 0x4000 already goes to b
	bind(a2, 0x4000, b, true)
	bind(b, 0x4001, a, true)
	bind(b, 0x7FFF, c, true)
	bind(d, 0x4000, a, true)
	bind(e, 0x4000, a, true)

	return w
}

func (w *fuzzWorld) byName(name string) *fuzzAlloc {
	for _, a := range w.made {
		if a.name == name {
			return a
		}
	}

	return nil
}

// outcome is what forward should do with one packet.
type outcome struct {
	left  bool // ok=false: left to pion
	to    netip.AddrPort
	n     int
	back  uint16     // the channel number b is rewritten to
	inbox *fuzzAlloc // handed over in memory to this allocation
	from  *fuzzAlloc
}

// expect is the oracle: the fast path's rules stated over the world's plan.
func (w *fuzzWorld) expect(src netip.AddrPort, rooms map[string]string, pkt []byte) outcome {
	number := binary.BigEndian.Uint16(pkt[0:2])
	length := int(binary.BigEndian.Uint16(pkt[2:4]))
	if channelHeader+length > len(pkt) {
		return outcome{left: true}
	}
	src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
	var from *fuzzAlloc
	for _, a := range w.made {
		if a.udp && a.client == src {
			from = a
		}
	}
	if from == nil {
		return outcome{left: true}
	}
	peerName, bound := from.channels[number]
	peer := w.byName(peerName)
	if !bound || peer == nil {
		return outcome{left: true}
	}
	r1, live1 := rooms[from.session]
	r2, live2 := rooms[peer.session]
	if !live1 || !live2 || r1 == "" || r1 != r2 {
		return outcome{left: true}
	}
	if peer.udp {
		for number, to := range peer.channels {
			if to == from.name {
				return outcome{to: peer.client, n: channelHeader + length, back: number, from: from}
			}
		}
	}

	return outcome{inbox: peer, from: from}
}

// check runs one packet through forward and holds it to the oracle and to
// the invariants any forwarder must keep.
func (w *fuzzWorld) check(t *testing.T, src netip.AddrPort, state uint8, pkt []byte) {
	rooms := map[string]string{"a": "r1", "b": "r1", "c": "r1", "d": "r2", "e": "r1"}
	if state&stateBOtherRoom != 0 {
		rooms["b"] = "r2"
	}
	if state&stateBEnded != 0 {
		delete(rooms, "b")
	}
	if state&stateANoRoom != 0 {
		rooms["a"] = ""
	}
	if state&stateAEnded != 0 {
		delete(rooms, "a")
	}
	for _, s := range []string{"a", "b"} {
		if room, live := rooms[s]; live {
			w.fs.join(s, room)
		} else {
			w.fs.end(s)
		}
	}
	defer func() {
		w.fs.join("a", "r1")
		w.fs.join("b", "r1")
	}()

	want := w.expect(src, rooms, pkt)
	orig := append([]byte(nil), pkt...)
	overBefore, fullBefore := w.allocs.droppedBandwidth.Load(), w.allocs.droppedFull.Load()
	to, n, ok := w.allocs.forward(pkt, src)
	overBandwidth := w.allocs.droppedBandwidth.Load() != overBefore
	if w.allocs.droppedFull.Load() != fullBefore {
		t.Fatal("an inbox filled up: the fuzzer drains them after every packet")
	}

	// Invariants, whatever the oracle says.
	if n < 0 || n > len(pkt) {
		t.Fatalf("n = %d for a %d-byte packet", n, len(pkt))
	}
	if !ok && (n != 0 || !bytes.Equal(pkt, orig)) {
		t.Fatalf("left to pion with n = %d, packet %x -> %x: pion must see it as sent", n, orig, pkt)
	}
	if ok && n > 0 {
		if got := channelHeader + int(binary.BigEndian.Uint16(pkt[2:4])); got != n {
			t.Fatalf("sent %d bytes under a header declaring %d", n, got)
		}
		if !w.isClient(to) {
			t.Fatalf("forwarded to %v, not a client of this server", to)
		}
		if !bytes.Equal(pkt[2:], orig[2:]) {
			t.Fatal("forward changed more than the channel number")
		}
	}
	if overBandwidth && (!ok || n != 0 || !bytes.Equal(pkt, orig)) {
		t.Fatalf("over bandwidth: forward = %v %d %v, want dropped here untouched", to, n, ok)
	}
	if overBandwidth && !w.allocs.bw.limited {
		t.Fatal("a drop for bandwidth with no limit")
	}

	// The oracle.
	delivered := w.drain(t)
	switch {
	case want.left:
		if ok {
			t.Fatalf("forward = %v %d true, want left to pion (src %v, %x)", to, n, src, orig)
		}
		if delivered != nil {
			t.Fatalf("refused packet reached %s's inbox", delivered.to.name)
		}
	case overBandwidth:
		if delivered != nil {
			t.Fatalf("packet over bandwidth reached %s's inbox", delivered.to.name)
		}
	case want.inbox != nil:
		if !ok || n != 0 || to.IsValid() || !bytes.Equal(pkt, orig) {
			t.Fatalf("forward = %v %d %v, want handed to %s's inbox untouched", to, n, ok, want.inbox.name)
		}
		length := int(binary.BigEndian.Uint16(orig[2:4]))
		if delivered == nil || delivered.to != want.inbox || delivered.from.String() != want.from.relay.public.String() ||
			!bytes.Equal(delivered.data, orig[channelHeader:channelHeader+length]) {
			t.Fatalf("inbox got %+v, want %q from %v in %s's", delivered, orig[channelHeader:channelHeader+length],
				want.from.relay.public, want.inbox.name)
		}
	default:
		if !ok || to != want.to || n != want.n {
			t.Fatalf("forward = %v %d %v, want %v %d true", to, n, ok, want.to, want.n)
		}
		if got := binary.BigEndian.Uint16(pkt[0:2]); got != want.back {
			t.Fatalf("channel rewritten to %#x, want the receiver's %#x", got, want.back)
		}
		if delivered != nil {
			t.Fatalf("packet sent on and also put in %s's inbox", delivered.to.name)
		}
	}
}

func (w *fuzzWorld) isClient(to netip.AddrPort) bool {
	w.allocs.mu.RLock()
	defer w.allocs.mu.RUnlock()

	return w.allocs.clients[to] != nil
}

type handedOver struct {
	to   *fuzzAlloc
	from net.Addr
	data []byte
}

// drain empties every inbox, returning the one packet found if any; more
// than one is a failure, since the fuzzer sends one packet at a time.
func (w *fuzzWorld) drain(t *testing.T) *handedOver {
	var got *handedOver
	for _, a := range w.made {
		for {
			n, from, ok := a.relay.in.take(w.buf)
			if !ok {
				break
			}
			if got != nil {
				t.Fatalf("one packet handed over twice (%s and %s)", got.to.name, a.name)
			}
			got = &handedOver{to: a, from: from, data: append([]byte(nil), w.buf[:n]...)}
		}
	}

	return got
}
