package turn

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// TestAllocationsPerIP: MaxAllocationsPerIP allocations from one IP, of any
// sessions; the next is answered 486 Allocation Quota Reached. Another IP is
// unaffected, and a released allocation makes room again.
func TestAllocationsPerIP(t *testing.T) {
	const limit = 3
	srv, fs := newServer(t, func(c *Config) { c.MaxAllocationsPerIP = limit })
	relays := make([]net.PacketConn, 0, limit)
	for i := range limit + 2 {
		fs.join(fmt.Sprintf("p%d", i), "room")
	}
	for i := range limit {
		relays = append(relays, allocate(t, newClientFrom(t, srv, "127.0.0.1", srv.Credentials(fmt.Sprintf("p%d", i), time.Now()))))
	}
	over := newClientFrom(t, srv, "127.0.0.1", srv.Credentials(fmt.Sprintf("p%d", limit), time.Now()))
	if _, err := over.Allocate(); turnCode(err) != stun.CodeAllocQuotaReached {
		t.Fatalf("allocation %d from one IP: %v, want 486 Allocation Quota Reached", limit+1, err)
	}
	allocate(t, newClientFrom(t, srv, "127.0.0.2", srv.Credentials(fmt.Sprintf("p%d", limit+1), time.Now())))

	if err := relays[0].Close(); err != nil {
		t.Fatal(err)
	}
	if !eventually(arrives, func() bool {
		relay, err := over.Allocate()
		if err != nil {
			return false
		}
		t.Cleanup(func() { _ = relay.Close() })

		return true
	}) {
		t.Fatal("no allocation from the IP after one of its allocations was released")
	}
}

// TestQuotaPerIPv6Prefix: IPv6 clients are counted by their /64, and an
// IPv4-mapped address as its IPv4 address (the listeners here are IPv4, so
// this is the QuotaHandler on its own, at and past the cap).
func TestQuotaPerIPv6Prefix(t *testing.T) {
	cfg := testConfig(newFakeSessions())
	cfg.MaxAllocationsPerIP = 2
	cfg = cfg.prepared()
	allocs := newAllocations(cfg, testLogger())
	ask := func(addr string, session string) bool {
		return allocs.quota(formatUsername(time.Now().Add(time.Hour).Unix(), session), "", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
	}
	for _, tc := range []struct {
		addr, session string
		want          bool
	}{
		{"[2001:db8:0:1::1]:1000", "a", true},
		{"[2001:db8:0:1:ffff:ffff:ffff:ffff]:1000", "b", true},
		{"[2001:db8:0:1::2]:2000", "c", false}, // third in that /64
		{"[2001:db8:0:2::1]:1000", "c", true},  // the next /64
		{"192.0.2.1:1000", "d", true},
		{"[::ffff:192.0.2.1]:2000", "e", true}, // the same IPv4 address
		{"192.0.2.1:3000", "f", false},
	} {
		if got := ask(tc.addr, tc.session); got != tc.want {
			t.Errorf("quota for %s = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// TestMaxAllocations: past MaxAllocations the server answers 508
// Insufficient Capacity, whoever asks; a released allocation makes room, and
// the refused Allocate left no quota behind (its session, capped at one
// allocation, gets one from a new socket).
func TestMaxAllocations(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) {
		c.MaxAllocations = 2
		c.MaxAllocationsPerSession = 1
	})
	for _, s := range []string{"a", "b", "c"} {
		fs.join(s, "room")
	}
	first := allocated(t, srv, "a")
	allocated(t, srv, "b")
	if _, err := newClient(t, srv, srv.Credentials("c", time.Now())).Allocate(); turnCode(err) != stun.CodeInsufficientCapacity {
		t.Fatalf("allocation past MaxAllocations: %v, want 508 Insufficient Capacity", err)
	}
	if n := srv.Stats().Allocations; n != 2 {
		t.Fatalf("%d allocations, want 2", n)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if !eventually(arrives, func() bool { return srv.Stats().Allocations == 1 }) {
		t.Fatal("released allocation not deleted")
	}
	relay, err := newClient(t, srv, srv.Credentials("c", time.Now())).Allocate()
	if err != nil {
		t.Fatalf("allocation after one was released: %v (486: the refused one's quota was kept)", err)
	}
	_ = relay.Close()
}

// TestQuotaUnderConcurrentAllocates: Allocates of one session racing on four
// UDP listeners and on TCP connections get exactly the quota, no more.
func TestQuotaUnderConcurrentAllocates(t *testing.T) {
	const limit, clients = 4, 24
	srv, fs := newServer(t, func(c *Config) {
		c.MaxAllocationsPerSession = limit
		c.UDPListeners = 4
	})
	fs.join("q", "room")
	creds := srv.Credentials("q", time.Now())
	cs := make([]*pionturn.Client, clients)
	for i := range cs {
		if i%2 == 0 {
			cs[i] = newClient(t, srv, creds)
		} else {
			cs[i] = newTCPClient(t, srv, creds)
		}
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		granted int
		refused int
	)
	for _, c := range cs {
		wg.Go(func() {
			relay, err := c.Allocate()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				granted++
				t.Cleanup(func() { _ = relay.Close() })
			case turnCode(err) == stun.CodeAllocQuotaReached:
				refused++
			default:
				t.Errorf("Allocate: %v", err)
			}
		})
	}
	wg.Wait()
	if granted != limit || refused != clients-limit {
		t.Fatalf("%d granted, %d refused; want %d and %d", granted, refused, limit, clients-limit)
	}
	if n := srv.Stats().Allocations; n != limit {
		t.Fatalf("%d allocations, want %d", n, limit)
	}
}

// TestFailedAllocateLeavesNoQuota: an Allocate granted by the quota whose
// relay socket then cannot be opened (here: the bind IP is not on this
// host) is answered 508 and gives its quota back, so the session's next try
// is 508 again, not 486.
func TestFailedAllocateLeavesNoQuota(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) {
		c.MaxAllocationsPerSession = 1
		c.RelayBindIP = net.IPv4(192, 0, 2, 1) // TEST-NET-1: binding fails locally
	})
	fs.join("f", "room")
	creds := srv.Credentials("f", time.Now())
	for i := range 2 {
		if _, err := newClient(t, srv, creds).Allocate(); turnCode(err) != stun.CodeInsufficientCapacity {
			t.Fatalf("Allocate %d with no relay socket to be had: %v, want 508 Insufficient Capacity", i+1, err)
		}
		// pion v4.1.4 reports the failure (OnAllocationError, which gives
		// the slot back) just after it has sent the 508, and the next
		// Allocate may reach the other UDP listener first: a retry at
		// loopback speed once found the slot still held (486) in CI.
		testwait.For(t, "the failed Allocate's slot to be given back", func() bool {
			srv.allocs.mu.RLock()
			defer srv.allocs.mu.RUnlock()
			return len(srv.allocs.reserved) == 0 && srv.allocs.perSession["f"] == 0
		})
	}
}

// TestStaleReservationReleased: a quota reservation whose Allocate never
// reported back (pion always does; this is the safety net) stops counting
// after reservationTTL, so it cannot hold a session's or an IP's slot.
func TestStaleReservationReleased(t *testing.T) {
	cfg := testConfig(newFakeSessions())
	cfg.MaxAllocationsPerSession = 1
	allocs := newAllocations(cfg.prepared(), testLogger())
	username := formatUsername(time.Now().Add(time.Hour).Unix(), "s")
	from := func(port int) net.Addr { return &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: port} }
	if !allocs.quota(username, "", from(1)) {
		t.Fatal("first Allocate refused")
	}
	if allocs.quota(username, "", from(2)) {
		t.Fatal("second Allocate of a session capped at one granted while the first is pending")
	}
	allocs.dropStaleReservations(time.Now().Add(reservationTTL / 2))
	if allocs.quota(username, "", from(3)) {
		t.Fatal("reservation released before reservationTTL")
	}
	allocs.dropStaleReservations(time.Now().Add(reservationTTL + time.Second))
	if !allocs.quota(username, "", from(4)) {
		t.Fatal("stale reservation still counted")
	}
}
