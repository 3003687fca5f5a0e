//go:build linux

package turn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// gsoIO is the rig's listener I/O with GSO, or the test is skipped where
// the kernel has no UDP_SEGMENT (before Linux 4.18).
func gsoIO(t *testing.T, r *listenerRig) *mmsgIO {
	t.Helper()
	m, ok := r.tc.io.(*mmsgIO)
	if !ok || !m.gso {
		t.Skip("no UDP GSO on this kernel")
	}

	return m
}

// burstFromA is a batch a's client sends: payload sizes in order, each
// payload tagged with its index so order and content can be checked.
func burstFromA(t *testing.T, r *listenerRig, sizes ...int) [][]byte {
	t.Helper()
	var want [][]byte
	for i, n := range sizes {
		p := bytes.Repeat([]byte{byte('a' + i)}, n)
		r.send(t, r.ca, channelData(0x4000, string(p)))
		want = append(want, channelData(0x4001, string(p)))
	}
	r.send(t, r.ca, stunLike(9))
	if p := r.readUntil(t, arrives); !bytes.Equal(p, stunLike(9)) {
		t.Fatalf("ReadFrom returned %x", p)
	}

	return want
}

// checkReceived reads len(want) datagrams at b's client and compares them,
// in order.
func checkReceived(t *testing.T, r *listenerRig, want [][]byte) {
	t.Helper()
	got := recvAll(t, r.cb, len(want), arrives)
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("datagram %d: got %d bytes %.8x…, want %d bytes %.8x…", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
	nothingMore(t, r.cb, 50*time.Millisecond)
}

// A batch's forwards to one client go out as segmented messages, and the
// client receives each datagram whole, in order: a run of equal sizes, a
// shorter one that ends its message, and a longer one that starts the next.
func TestListenerGSO(t *testing.T) {
	r := newListenerRig(t, DefaultUDPBatch)
	m := gsoIO(t, r)
	want := burstFromA(t, r, 150, 150, 150, 150, 150, 80, 150, 150, 151, 20)
	checkReceived(t, r, want)
	if c := r.tc.calls; c.segmented.Load() != 10 || c.writes.Load() != 1 {
		t.Fatalf("%d datagrams sent segmented in %d calls, want all 10 in one", c.segmented.Load(), c.writes.Load())
	}
	if !m.gso {
		t.Fatal("GSO turned off")
	}
}

// With DisableUDPGSO each datagram is its own message.
func TestListenerGSODisabled(t *testing.T) {
	r := newListenerRig(t, DefaultUDPBatch, func(c *Config) { c.DisableUDPGSO = true })
	if m, ok := r.tc.io.(*mmsgIO); !ok || m.gso {
		t.Fatalf("io %T with GSO on, want batched I/O without", r.tc.io)
	}
	checkReceived(t, r, burstFromA(t, r, 150, 150, 150))
	if n := r.tc.calls.segmented.Load(); n != 0 {
		t.Fatalf("%d datagrams sent segmented with GSO disabled", n)
	}
}

// refusingKernel makes sendmmsg refuse, with errno, the first call whose
// first message is segmented; every other call reaches the kernel.
func refusingKernel(m *mmsgIO, errno unix.Errno) *int {
	return refusingKernelN(m, errno, 1)
}

// refusingKernelN refuses the first n such calls.
func refusingKernelN(m *mmsgIO, errno unix.Errno, n int) *int {
	refused := new(int)
	m.syscall = func(nr, fd uintptr, hdrs *mmsghdr, vlen int) (uintptr, unix.Errno) {
		if nr == unix.SYS_SENDMMSG && *refused < n && hdrs.hdr.Iovlen > 1 {
			*refused++

			return 0, errno
		}

		return mmsgSyscall(nr, fd, hdrs, vlen)
	}

	return refused
}

// A device without checksum offload refuses segmented sends with EIO: the
// refused datagrams go again one per message, none lost, and GSO stays off
// on that socket.
func TestListenerGSORefusedForGood(t *testing.T) {
	r := newListenerRig(t, DefaultUDPBatch)
	m := gsoIO(t, r)
	refused := refusingKernel(m, unix.EIO)
	checkReceived(t, r, burstFromA(t, r, 100, 100, 100, 100))
	if *refused != 1 || m.gso {
		t.Fatalf("refused %d calls, GSO on %v: want one refusal and GSO off", *refused, m.gso)
	}
	checkReceived(t, r, burstFromA(t, r, 100, 100))
	if n := r.tc.calls.segmented.Load(); n != 0 {
		t.Fatalf("%d datagrams sent segmented after EIO", n)
	}
}

// Any other refusal of a segmented send is about that client: its datagrams
// go again one per message (here the kernel takes them), and GSO stays on
// for the next batch.
func TestListenerGSORefusedOnce(t *testing.T) {
	r := newListenerRig(t, DefaultUDPBatch)
	m := gsoIO(t, r)
	refused := refusingKernel(m, unix.ENOBUFS)
	checkReceived(t, r, burstFromA(t, r, 60, 60, 60))
	if *refused != 1 || !m.gso {
		t.Fatalf("refused %d calls, GSO on %v: want one refusal and GSO still on", *refused, m.gso)
	}
	checkReceived(t, r, burstFromA(t, r, 60, 60))
	if n := r.tc.calls.segmented.Load(); n != 2 {
		t.Fatalf("%d datagrams sent segmented after the refusal, want the next batch's 2", n)
	}
}

// EINVAL may be one datagram too big for the path to segment: GSO stays on
// through maxRefusedGSO-1 refusals in a row (a segmented send that goes
// starts the count again), and goes off at maxRefusedGSO. Nothing is lost
// on the way.
func TestListenerGSORefusedEINVAL(t *testing.T) {
	r := newListenerRig(t, DefaultUDPBatch)
	m := gsoIO(t, r)
	refused := refusingKernelN(m, unix.EINVAL, maxRefusedGSO-1)
	for range maxRefusedGSO - 1 {
		checkReceived(t, r, burstFromA(t, r, 70, 70))
	}
	if *refused != maxRefusedGSO-1 || !m.gso || m.refusedGSO != maxRefusedGSO-1 {
		t.Fatalf("after %d refusals: GSO on %v, count %d", *refused, m.gso, m.refusedGSO)
	}
	checkReceived(t, r, burstFromA(t, r, 70, 70))
	if m.refusedGSO != 0 || r.tc.calls.segmented.Load() != 2 {
		t.Fatalf("a segmented send that went: count %d, %d segmented", m.refusedGSO, r.tc.calls.segmented.Load())
	}
	refused = refusingKernelN(m, unix.EINVAL, maxRefusedGSO)
	for range maxRefusedGSO {
		checkReceived(t, r, burstFromA(t, r, 70, 70))
	}
	if *refused != maxRefusedGSO || m.gso {
		t.Fatalf("after %d refusals in a row GSO is still on", *refused)
	}
}

func TestGroupByPeer(t *testing.T) {
	a, b, c := netip.MustParseAddrPort("127.0.0.1:1"), netip.MustParseAddrPort("127.0.0.1:2"), netip.MustParseAddrPort("[::1]:1")
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"a1", "a1"},
		{"a1 b1 a2 c1 b2 a3", "a1 a2 a3 b1 b2 c1"},
		{"a1 a2 b1 b2", "a1 a2 b1 b2"},
		{"c1 b1 c2 a1 b2 c3", "c1 c2 c3 b1 b2 a1"},
	} {
		var ds []datagram
		for _, w := range bytes.Fields([]byte(tc.in)) {
			addr := map[byte]netip.AddrPort{'a': a, 'b': b, 'c': c}[w[0]]
			ds = append(ds, datagram{buf: w, n: len(w), addr: addr})
		}
		groupByPeer(ds)
		var got []string
		for _, d := range ds {
			got = append(got, string(d.buf))
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("groupByPeer(%s) = %s, want %s", tc.in, s, tc.want)
		}
	}
}

// loopbackGSO is a batched writer with GSO asked for on a loopback socket
// closed with tb; it skips tb where the kernel has no sendmmsg.
func loopbackGSO(tb testing.TB) *mmsgIO {
	tb.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	m, ok := newMmsgIO(conn, DefaultUDPBatch, true, new(ioCounters))
	if !ok {
		tb.Skip("no sendmmsg")
	}
	return m
}

// FuzzGSOWrites checks the messages a write builds from any send group:
// every datagram in exactly one message, in its peer's order; a message
// with several holds one peer's, all as long as the first but the last,
// which may be shorter, none empty, within the kernel's bounds, with
// UDP_SEGMENT set to the first's length; a message of one carries no
// control message.
func FuzzGSOWrites(f *testing.F) {
	m := loopbackGSO(f)
	peers := []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.1:1000"), netip.MustParseAddrPort("127.0.0.2:1000"),
		netip.MustParseAddrPort("127.0.0.1:1001"),
	}
	// A datagram is encoded as its peer (mod 3) and its length (0..255).
	f.Add([]byte{0, 150, 0, 150, 1, 60, 0, 150, 0, 80, 0, 150, 2, 0, 2, 10})
	f.Add([]byte{1, 1, 1, 1, 1, 2})
	f.Add(bytes.Repeat([]byte{0, 200}, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ds []datagram
		var wantOrder []string
		for i := 0; i+1 < len(data) && len(ds) < DefaultUDPBatch; i += 2 {
			n := int(data[i+1])
			// Each its own buffer: a datagram is known by its buffer.
			ds = append(ds, datagram{buf: make([]byte, max(n, 1)), n: n, addr: peers[int(data[i])%len(peers)]})
		}
		per := map[netip.AddrPort][]int{}
		for i, d := range ds {
			per[d.addr] = append(per[d.addr], i)
		}
		for _, p := range peers {
			wantOrder = append(wantOrder, fmt.Sprint(p, per[p]))
		}
		in := slices.Clone(ds)
		groupByPeer(ds)
		msgs := m.buildWrites(ds, true)
		got := map[netip.AddrPort][]int{}
		covered := 0
		for k := range msgs {
			h := &m.whdrs[k].hdr
			segs := int(h.Iovlen)
			if segs != m.wsegs[k] || segs < 1 || segs > maxGSOSegments {
				t.Fatalf("message %d: %d iovecs, %d segments recorded", k, segs, m.wsegs[k])
			}
			addr, ok := parseSockaddr(m.wnames[k][:h.Namelen])
			iovs := unsafe.Slice(h.Iov, segs) //nolint:gosec // G103: the iovecs buildWrites pointed the header at
			first, total := int(iovs[0].Len), 0
			for s, iov := range iovs {
				d := ds[covered]
				covered++
				if int(iov.Len) != d.n || (d.n > 0 && iov.Base != &d.buf[0]) {
					t.Fatalf("message %d segment %d is not datagram %d", k, s, covered-1)
				}
				if ok && addr != d.addr {
					t.Fatalf("message %d to %v holds a datagram for %v", k, addr, d.addr)
				}
				if segs > 1 && (d.n == 0 || d.n > first || (d.n < first && s != segs-1)) {
					t.Fatalf("message %d segment %d of %d: %d bytes after a first of %d", k, s, segs, d.n, first)
				}
				total += d.n
				id := slices.IndexFunc(in, func(e datagram) bool { return &e.buf[0] == &d.buf[0] })
				got[d.addr] = append(got[d.addr], id)
			}
			if total > maxGSOBytes {
				t.Fatalf("message %d carries %d bytes", k, total)
			}
			switch {
			case segs == 1 && h.Controllen != 0:
				t.Fatalf("message %d of one datagram has a control message", k)
			case segs > 1:
				ctl := unsafe.Slice(h.Control, h.Controllen) //nolint:gosec // G103: the header's control message
				if size := binary.NativeEndian.Uint16(ctl[unix.CmsgLen(0):]); int(size) != first {
					t.Fatalf("message %d: UDP_SEGMENT %d, first segment %d", k, size, first)
				}
			}
		}
		if covered != len(ds) {
			t.Fatalf("messages cover %d of %d datagrams", covered, len(ds))
		}
		var gotOrder []string
		for _, p := range peers {
			gotOrder = append(gotOrder, fmt.Sprint(p, got[p]))
		}
		if fmt.Sprint(gotOrder) != fmt.Sprint(wantOrder) {
			t.Fatalf("per peer %v\nwant %v", gotOrder, wantOrder)
		}
	})
}

// BenchmarkBuildWrites is the user-space cost GSO adds to a send group of
// 16: grouping by peer and building the messages, for 16 different peers
// (nothing to segment: the overhead a game's one-packet-per-client batches
// pay) and for one peer (everything in one message), against building
// without GSO.
func BenchmarkBuildWrites(b *testing.B) {
	m := loopbackGSO(b)
	for _, peers := range []int{16, 1} {
		for _, gso := range []bool{false, true} {
			b.Run(fmt.Sprintf("peers=%d/gso=%v", peers, gso), func(b *testing.B) {
				ds := make([]datagram, sendGroup)
				for i := range ds {
					ds[i] = datagram{buf: make([]byte, 154), n: 154,
						addr: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(1000+i%peers))} //nolint:gosec // small
				}
				for b.Loop() {
					if gso {
						groupByPeer(ds)
					}
					m.buildWrites(ds, gso)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ds)), "ns/datagram")
			})
		}
	}
}
