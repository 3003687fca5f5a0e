package turn

import (
	"testing"
	"time"

	"github.com/pion/stun/v3"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

const testLifetimeCap = 2 * time.Second

// TestLifetimeCap: over UDP the lifetime granted is at most
// MaxAllocationLifetime, whatever was asked (pion alone grants up to an
// hour, and 10 minutes when nothing is asked); less is granted as asked.
func TestLifetimeCap(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) { c.MaxAllocationLifetime = testLifetimeCap })
	fs.join("l", "room")
	creds := srv.Credentials("l", time.Now())
	capSeconds := uint32(testLifetimeCap / time.Second)
	for _, tc := range []struct {
		name  string
		attrs []stun.Setter
		want  uint32
	}{
		{"asks an hour", []stun.Setter{udpTransport, lifetime(3599)}, capSeconds},
		{"asks nothing", []stun.Setter{udpTransport}, capSeconds},
		{"asks more than pion allows", []stun.Setter{udpTransport, lifetime(7200)}, capSeconds},
		{"asks less", []stun.Setter{udpTransport, lifetime(1)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, srv, creds)
			res := ask(t, c, creds.Username, creds.Password, stun.MethodAllocate, tc.attrs...)
			if code := codeOf(t, res); code != 0 {
				t.Fatalf("Allocate: error %d", code)
			}
			if got := lifetimeOf(t, res); got != tc.want {
				t.Fatalf("granted %ds, want %ds", got, tc.want)
			}
			if tc.name == "asks an hour" {
				res := ask(t, c, creds.Username, creds.Password, stun.MethodRefresh, lifetime(3599))
				if code := codeOf(t, res); code != 0 {
					t.Fatalf("Refresh: error %d", code)
				}
				if got := lifetimeOf(t, res); got != capSeconds {
					t.Fatalf("Refresh granted %ds, want %ds", got, capSeconds)
				}
			}
		})
	}
	// None of them refreshes: all are gone once the cap has passed.
	testwait.For(t, "unrefreshed allocations to expire", func() bool {
		return srv.Stats().Allocations == 0 && srv.pion.AllocationCount() == 0
	})
}

// TestLifetimeCapRefreshed: a client that refreshes within the lifetime it
// was told (pion's client refreshes at half of it) keeps its allocation, and
// it relays, for several times the cap.
func TestLifetimeCapRefreshed(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) { c.MaxAllocationLifetime = testLifetimeCap })
	fs.join("a", "room")
	fs.join("b", "room")
	a := allocated(t, srv, "a")
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	b := allocate(t, clientB)
	permitFrom(t, clientB, a)
	start := time.Now()
	for i := 0; time.Since(start) < 3*testLifetimeCap; i++ {
		if !deliver(a, b.LocalAddr(), b, "refreshed "+string(rune('a'+i%26)), arrives) {
			t.Fatalf("relay stopped after %s with a lifetime cap of %s", time.Since(start), testLifetimeCap)
		}
	}
	if n := srv.Stats().Allocations; n != 2 {
		t.Fatalf("%d allocations, want 2", n)
	}
}

// TestLifetimeCapTCP: over TCP pion reads the requests itself and grants
// what it likes (10 minutes to pion's client, which then refreshes after 5);
// the allocation is closed when the cap passes without a Refresh. The cap
// for TCP is never below those 10 minutes, which the test shortens.
func TestLifetimeCapTCP(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) {
		c.MaxAllocationLifetime = testLifetimeCap
		c.tcpLifetimeFloor = testLifetimeCap
	})
	short := testConfig(newFakeSessions())
	short.MaxAllocationLifetime = testLifetimeCap
	if got := newRegistry(short.withDefaults(), testLogger()).tcpLifetime; got != pionDefaultLifetime {
		t.Fatalf("TCP lifetime cap %s under a %s cap, want pion's default lifetime %s", got, testLifetimeCap, pionDefaultLifetime)
	}
	fs.join("t", "room")
	allocate(t, newTCPClient(t, srv, srv.Credentials("t", time.Now())))
	if n := srv.Stats().Allocations; n != 1 {
		t.Fatalf("%d allocations, want 1", n)
	}
	testwait.For(t, "the TCP allocation to be closed at the cap", func() bool {
		return srv.Stats().Allocations == 0 && srv.pion.AllocationCount() == 0
	})
}
