package turn

import (
	"net"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/testcert"
)

// TestAllocationsCountRelayedBytes: through the real server and real pion
// clients, Allocations lists each live allocation with its session,
// transport and relay address, and counts on each exactly the payload bytes
// its client sent that were relayed: what the receiver got, to the byte.
// A sender in another room is refused and counts nothing. Run over the
// ChannelData fast path (UDP clients with channels bound both ways) and
// over pion's path (a sender over TCP, and one over TLS).
func TestAllocationsCountRelayedBytes(t *testing.T) {
	t.Run("fast path", func(t *testing.T) { testAllocationsCount(t, "udp") })
	t.Run("pion path, TCP", func(t *testing.T) { testAllocationsCount(t, "tcp") })
	t.Run("pion path, TLS", func(t *testing.T) { testAllocationsCount(t, "tls") })
}

func testAllocationsCount(t *testing.T, senderTransport string) {
	certs := testcert.New(t)
	srv, fs := newServer(t, notifying, withTLS(certs))
	tcpSender := senderTransport != "udp"
	fs.join("a", "room")
	fs.join("b", "room")
	fs.join("c", "elsewhere")
	if got := srv.Allocations(); len(got) != 0 {
		t.Fatalf("before any allocation: %+v", got)
	}
	var clientA *pionturn.Client
	switch senderTransport {
	case "udp":
		clientA = newClient(t, srv, srv.Credentials("a", time.Now()))
	case "tcp":
		clientA = newTCPClient(t, srv, srv.Credentials("a", time.Now()))
	case "tls":
		clientA = newTLSClient(t, srv, certs, srv.Credentials("a", time.Now()))
	}
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	clientC := newClient(t, srv, srv.Credentials("c", time.Now()))
	a, b, c := allocate(t, clientA), allocate(t, clientB), allocate(t, clientC)
	permitFrom(t, clientA, b)
	permitFrom(t, clientB, a)
	permitFrom(t, clientB, c) // so a packet from c that slipped through would show

	list := srv.Allocations()
	if len(list) != 3 {
		t.Fatalf("allocations %+v, want 3", list)
	}
	for i, want := range []struct {
		session, transport string
		relay              net.PacketConn
	}{{"a", senderTransport, a}, {"b", "udp", b}, {"c", "udp", c}} {
		got := list[i]
		if got.Session != want.session || got.Transport != want.transport || got.Relayed != 0 || got.Created.IsZero() ||
			got.Relay.String() != want.relay.LocalAddr().String() || !got.Client.IsValid() {
			t.Fatalf("allocation %d: %+v, want session %s over %s, relay %s", i, got, want.session, want.transport,
				want.relay.LocalAddr())
		}
		if i > 0 && got.ID <= list[i-1].ID {
			t.Fatalf("IDs not ascending: %+v", list)
		}
	}

	atA, atB := countTagged(a), countTagged(b)
	sentA, _ := pace(a, b.LocalAddr(), 'A', 300, 2*time.Millisecond, 50, 0)
	sentB, _ := pace(b, a.LocalAddr(), 'B', 100, 2*time.Millisecond, 50, 0)
	sentC, _ := pace(c, b.LocalAddr(), 'C', 500, 2*time.Millisecond, 20, 0)
	if sentA != 50*300 || sentB != 50*100 || sentC != 20*500 {
		t.Fatalf("sent %d, %d, %d bytes", sentA, sentB, sentC)
	}
	if !eventually(arrives, func() bool { return atB.bytes('A') == sentA && atA.bytes('B') == sentB }) {
		t.Fatalf("arrived %d of %d and %d of %d bytes", atB.bytes('A'), sentA, atA.bytes('B'), sentB)
	}
	if !tcpSender && !(boundTo(srv, relayOf(t, srv, a), b) && boundTo(srv, relayOf(t, srv, b), a)) {
		t.Fatal("channels not bound: the fast path was not tested")
	}
	relayed := map[string]uint64{}
	for _, al := range srv.Allocations() {
		relayed[al.Session] = al.Relayed
	}
	if relayed["a"] != uint64(sentA) || relayed["b"] != uint64(sentB) || relayed["c"] != 0 || atB.bytes('C') != 0 {
		t.Fatalf("relayed %v, want a %d, b %d, c 0 (c reached b with %d bytes)", relayed, sentA, sentB, atB.bytes('C'))
	}

	// A closed allocation leaves the list; the others keep their IDs.
	_ = c.Close()
	if !eventually(arrives, func() bool { return len(srv.Allocations()) == 2 }) {
		t.Fatalf("after closing c: %+v", srv.Allocations())
	}
	if after := srv.Allocations(); after[0].ID != list[0].ID || after[1].ID != list[1].ID {
		t.Fatalf("IDs changed: %+v, were %+v", after, list)
	}
}

// Dropped for bandwidth is not relayed: a flood over the limit counts on
// its allocation exactly what passed, and the drops make up the rest.
func TestAllocationsCountOnlyWhatPassed(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) { c.MaxBandwidth, c.BandwidthBurst = 20_000, 4_000 })
	fs.join("a", "room")
	fs.join("b", "room")
	clientA := newClient(t, srv, srv.Credentials("a", time.Now()))
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	a, b := allocate(t, clientA), allocate(t, clientB)
	permitFrom(t, clientB, a)
	sent, _ := pace(a, b.LocalAddr(), 'F', 1000, 0, 40, 0) // 40 KB at once: ten bursts' worth
	total := func() uint64 {
		var n uint64
		for _, al := range srv.Allocations() {
			n += al.Relayed
		}
		return n
	}
	if !eventually(arrives, func() bool { return total()+srv.Stats().DroppedBandwidthBytes == uint64(sent) }) {
		t.Fatalf("relayed %d + dropped %d, want the %d sent", total(), srv.Stats().DroppedBandwidthBytes, sent)
	}
	if total() == 0 || srv.Stats().DroppedBandwidthBytes == 0 {
		t.Fatalf("relayed %d, dropped %d: want both", total(), srv.Stats().DroppedBandwidthBytes)
	}
}
