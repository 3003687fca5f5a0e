package loadgen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hostrelay/hostrelay/turn"
)

func TestMuxAddrRoundTrip(t *testing.T) {
	for _, i := range []int{0, 1, muxPerB - 1, muxPerB, muxPerA - 1, muxPerA, 123456, muxMaxAddrs - 1} {
		a := muxAddr(i)
		if a[0] != 127 || a[3] == 0 || a[3] == 255 || (a[1] == 0 && a[2] == 0) || a == [4]byte{127, 0, 0, 1} {
			t.Errorf("muxAddr(%d) = %v: not a usable loopback address", i, a)
		}
		if j, ok := muxIndex(a); !ok || j != i {
			t.Errorf("muxIndex(muxAddr(%d) = %v) = %d, %v", i, a, j, ok)
		}
	}
	for _, a := range [][4]byte{{127, 0, 0, 1}, {127, 16, 0, 0}, {127, 16, 0, 251}, {127, 16, 0, 255}, {10, 16, 0, 1}, {127, 255, 0, 1}} {
		if i, ok := muxIndex(a); ok {
			t.Errorf("muxIndex(%v) = %d, want none", a, i)
		}
	}
}

// cmsg appends one control message as the kernel lays it out.
func cmsg(b []byte, level, typ int32, data []byte) []byte {
	m := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&m[0])) //nolint:gosec // G103: a cmsghdr laid over an aligned buffer
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(m[unix.CmsgLen(0):], data)

	return append(b, m...)
}

func TestParseRx(t *testing.T) {
	ts := make([]byte, 16)
	binary.NativeEndian.PutUint64(ts[0:8], 1700000000)
	binary.NativeEndian.PutUint64(ts[8:16], 123)
	pkt := []byte{1, 0, 0, 0, 127, 0, 0, 1, 127, 16, 2, 3} // ifindex, spec_dst, addr
	oob := cmsg(cmsg(nil, unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts), unix.IPPROTO_IP, unix.IP_PKTINFO, pkt)

	info, err := parseRx(oob)
	if err != nil {
		t.Fatal(err)
	}
	if info.rx != 1700000000*1e9+123 || !info.hasDst || info.dst != [4]byte{127, 16, 2, 3} {
		t.Errorf("parseRx = %+v", info)
	}
	if _, err := parseRx(oob[:20]); err == nil {
		t.Error("a truncated control message parsed")
	}
	if info, err := parseRx(nil); err != nil || info.hasDst || info.rx != 0 {
		t.Errorf("parseRx(nil) = %+v, %v", info, err)
	}
}

func TestPktinfoCmsgParses(t *testing.T) {
	// The send-side IP_PKTINFO carries the source in ipi_spec_dst.
	b := pktinfoCmsg([4]byte{127, 16, 0, 9})
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0])) //nolint:gosec // G103: the cmsghdr just built
	if h.Level != unix.IPPROTO_IP || h.Type != unix.IP_PKTINFO {
		t.Fatalf("cmsg %d/%d", h.Level, h.Type)
	}
	if got := b[unix.CmsgLen(0)+4 : unix.CmsgLen(0)+8]; !bytes.Equal(got, []byte{127, 16, 0, 9}) {
		t.Errorf("spec_dst %v", got)
	}
}

// TestMuxClientsDistinct checks each client reaches a plain UDP socket from
// its own address and gets the answer back, demultiplexed to it alone.
func TestMuxClientsDistinct(t *testing.T) {
	m, err := NewMux(MuxConfig{Clients: 300, Buffer: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	echo, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = echo.Close() })

	// Messages start with a zero byte, as STUN does: the mux takes 0x40-0x7f
	// for ChannelData.
	const n = 260 // past one .C range
	got := make(chan [2]string, n)
	clients := make([]*MuxClient, n)
	for i := range clients {
		c, err := m.NewClient()
		if err != nil {
			t.Fatal(err)
		}
		c.OnControl(func(b []byte, _ net.Addr) { got <- [2]string{c.Addr().String(), string(b)} })
		clients[i] = c
	}
	seen := map[string]bool{}
	for _, c := range clients {
		if _, err := c.WriteTo([]byte("\x00hello "+c.Addr().String()), echo.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		_ = echo.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		k, from, err := echo.ReadFromUDP(buf)
		if err != nil {
			t.Fatal(err)
		}
		if from.String() != c.Addr().String() || string(buf[:k]) != "\x00hello "+c.Addr().String() {
			t.Fatalf("echo got %q from %s, want it from %s", buf[:k], from, c.Addr())
		}
		seen[from.String()] = true
		if _, err := echo.WriteToUDP(buf[:k], from); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct sources, want %d", len(seen), n)
	}
	for range n {
		select {
		case g := <-got:
			if g[1] != "\x00hello "+g[0] {
				t.Errorf("client %s got %q", g[0], g[1])
			}
		case <-time.After(5 * time.Second):
			t.Fatal("answers did not all come back")
		}
	}
}

// TestSmokeMuxTURN allocates game pairs on the mux through our TURN server,
// checks the server maps each allocation to its client's own address, and
// sends a little game traffic. No figure is asserted.
//
// The server allows one allocation per client IP: were the clients not
// told apart by address, the second would be refused.
func TestSmokeMuxTURN(t *testing.T) {
	srv := turnServerWith(t, func(c *turn.Config) { c.MaxAllocationsPerIP = 1 })
	m, err := NewMux(MuxConfig{Clients: 64, Buffer: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	creds := func(room, member int) Creds {
		c := srv.Credentials("s"+string(rune('a'+room))+string(rune('a'+member)), time.Now())

		return Creds{Username: c.Username, Password: c.Password}
	}

	// The server's view of a client (STUN Binding) is the client's own address.
	one, err := m.Allocate(srv.UDPAddr(), creds(9, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = one.Close() })
	mapped, err := one.Client.SendBindingRequest()
	if err != nil {
		t.Fatal(err)
	}
	if mapped.String() != one.Addr().String() {
		t.Errorf("server sees %s, client is %s", mapped, one.Addr())
	}

	pairs, closePairs, err := MuxGamePairs(t.Context(), m, srv.UDPAddr(), 10, 8, creds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closePairs)
	addrs := map[string]bool{}
	for _, p := range pairs {
		addrs[p.Client.Addr().String()] = true
		addrs[p.Host.Addr().String()] = true
	}
	if len(addrs) != 2*len(pairs) {
		t.Errorf("%d addresses for %d allocations", len(addrs), 2*len(pairs))
	}
	st, err := MeasureGameMux(t.Context(), m, pairs, 100, 30, 20, 200*time.Millisecond, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent == 0 || st.Delivered == 0 {
		t.Fatalf("nothing went through: %+v", st)
	}
}

// TestWheel runs the sender's schedule in slot time: every flow gets its rate
// (to a frame), each frame in the slot it fell due or later, and a flow left
// far behind skips ahead instead of bursting.
func TestWheel(t *testing.T) {
	const quantum = time.Millisecond
	var flows []*muxFlow
	for i, hz := range []float64{30, 20, 30, 1000, 2500, 1} {
		iv := time.Duration(float64(time.Second) / hz)
		flows = append(flows, &muxFlow{interval: iv, next: time.Duration(i) * iv / 7, seq: uint32(i)}) //nolint:gosec // small
	}
	w := newWheel(flows, quantum)
	count := map[*muxFlow]int{}
	var slot int64
	emit := func(f *muxFlow) {
		if due := int64(f.next / quantum); due > slot {
			t.Fatalf("flow every %v emitted in slot %d, due in %d", f.interval, slot, due)
		}
		count[f]++
	}
	for slot = 0; slot < 1999; slot += 3 { // the sender wakes every few slots
		w.run(slot, emit)
	}
	slot = 1999 // 2 s of slots in all
	w.run(slot, emit)
	for _, f := range flows {
		want := int(2 * time.Second / f.interval)
		if got := count[f]; got < want-1 || got > want+1 {
			t.Errorf("flow every %v: %d frames in 2 s, want %d", f.interval, got, want)
		}
	}

	// Three seconds late: each flow sends at most its backlog of one second.
	clear(count)
	slot = 5000
	w.run(slot, emit)
	for _, f := range flows {
		if max1s := int(time.Second/f.interval) + 2; count[f] > max1s {
			t.Errorf("flow every %v burst %d frames after a stall, want ≤ %d", f.interval, count[f], max1s)
		}
	}
}

// A mux hands out no more addresses than it was made for, refuses flows
// without a destination, and after Close its clients refuse to write.
func TestMuxLimitsAndClose(t *testing.T) {
	m, err := NewMux(MuxConfig{Clients: 2, Buffer: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewClient(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewClient(); !errors.Is(err, errMuxFull) {
		t.Errorf("third client of two: %v", err)
	}
	if _, err := RunMux(t.Context(), m, []MuxFlow{{From: a, Rate: 10}}, 60, time.Millisecond, 0, 0, nil); err == nil {
		t.Error("a flow without a destination ran")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := a.WriteTo([]byte{0}, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after Close: %v", err)
	}
}
