package turn

import (
	"maps"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/pion/stun/v3"

	"github.com/hostrelay/hostrelay/internal/testcert"
)

// sendEach sends n packets of msg from→to, one at a time, each read by rx
// before the next goes: afterwards exactly n were relayed.
func sendEach(t *testing.T, from net.PacketConn, to net.Addr, rx net.PacketConn, msg string, n int) {
	t.Helper()
	for i := range n {
		got := receive(rx, msg, arrives)
		if _, err := from.WriteTo([]byte(msg), to); err != nil {
			t.Fatal(err)
		}
		if !<-got {
			t.Fatalf("packet %d of %d (%q) did not arrive", i+1, n, msg)
		}
	}
}

// untilFast sends from→to until a packet takes the fast path: the server
// mirrors a channel binding before pion's client hears it is bound and
// stops sending Send indications.
func untilFast(t *testing.T, srv *Server, from net.PacketConn, to net.Addr, rx net.PacketConn) {
	t.Helper()
	if !eventually(arrives, func() bool {
		before := srv.Stats()
		if !deliver(from, to, rx, "warm up", arrives) {
			return false
		}
		fast, _ := trafficSince(srv, before)

		return fast.Packets > 0
	}) {
		t.Fatal("no packet took the fast path")
	}
}

// trafficSince is what was relayed on each path since before.
func trafficSince(srv *Server, before Stats) (fast, other Traffic) {
	st := srv.Stats()

	return Traffic{st.RelayedFast.Packets - before.RelayedFast.Packets, st.RelayedFast.Bytes - before.RelayedFast.Bytes},
		Traffic{st.RelayedOther.Packets - before.RelayedOther.Packets, st.RelayedOther.Bytes - before.RelayedOther.Bytes}
}

// TestStatsCountRelayedTraffic: every packet relayed is counted once, with
// its payload bytes, under the path that carried it: ChannelData between UDP
// clients with channels both ways on the fast path (summed over the
// SO_REUSEPORT listeners), TCP clients' packets through pion.
func TestStatsCountRelayedTraffic(t *testing.T) {
	const n = 20
	srv, fs := newServer(t, func(c *Config) { c.UDPListeners = 2 })

	t.Run("fast path", func(t *testing.T) {
		a, b, _, _ := channelPair(t, srv, fs)
		untilFast(t, srv, a, b.LocalAddr(), b)
		untilFast(t, srv, b, a.LocalAddr(), a)
		before := srv.Stats()
		sendEach(t, a, b.LocalAddr(), b, "fast a->b", n)
		sendEach(t, b, a.LocalAddr(), a, "fast b->a!", n)
		fast, other := trafficSince(srv, before)
		if want := (Traffic{2 * n, n * uint64(len("fast a->b")+len("fast b->a!"))}); fast != want || other != (Traffic{}) {
			t.Fatalf("fast path %+v, other %+v; want fast %+v and nothing else", fast, other, want)
		}
	})
	t.Run("through pion", func(t *testing.T) {
		fs.join("tcp-a", "r2")
		fs.join("tcp-b", "r2")
		clientA := newTCPClient(t, srv, srv.Credentials("tcp-a", time.Now()))
		clientB := newTCPClient(t, srv, srv.Credentials("tcp-b", time.Now()))
		a, b := allocate(t, clientA), allocate(t, clientB)
		permitFrom(t, clientA, b)
		permitFrom(t, clientB, a)
		if !deliver(a, b.LocalAddr(), b, "bind a->b", arrives) || !deliver(b, a.LocalAddr(), a, "bind b->a", arrives) {
			t.Fatal("no traffic between same-room TCP clients")
		}
		before := srv.Stats()
		sendEach(t, a, b.LocalAddr(), b, "tcp a->b", n)
		sendEach(t, b, a.LocalAddr(), a, "tcp b->a!", n)
		fast, other := trafficSince(srv, before)
		if want := (Traffic{2 * n, n * uint64(len("tcp a->b")+len("tcp b->a!"))}); other != want || fast != (Traffic{}) {
			t.Fatalf("through pion %+v, fast %+v; want through pion %+v and nothing else", other, fast, want)
		}
	})
	t.Run("refused is not relayed", func(t *testing.T) {
		fs.join("x", "r3")
		fs.join("y", "r4")
		x, y := allocated(t, srv, "x"), allocated(t, srv, "y")
		before := srv.Stats()
		if !neverArrives(x, y.LocalAddr(), y, "other room", silence) {
			t.Fatal("a packet crossed rooms")
		}
		if fast, other := trafficSince(srv, before); fast != (Traffic{}) || other != (Traffic{}) {
			t.Fatalf("refused packets counted as relayed: fast %+v, other %+v", fast, other)
		}
	})
}

// TestStatsCountAuthFailures: each way a credential is refused counts once,
// under its own reason and no other.
func TestStatsCountAuthFailures(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("live", "room")
	fs.join("gone", "room")
	fs.end("gone")
	now := time.Now()
	live := srv.Credentials("live", now)
	expired := srv.Credentials("live", now.Add(-2*srv.cfg.CredentialTTL))
	gone := srv.Credentials("gone", now)
	far := srv.Credentials("live", now.Add(srv.cfg.MaxTTL))
	c := newClient(t, srv, live)

	if got, want := slices.Sorted(maps.Keys(srv.Stats().AuthFailures)), slices.Sorted(slices.Values(AuthFailureReasons())); !slices.Equal(got, want) {
		t.Fatalf("AuthFailures has %v, want every reason %v", got, want)
	}
	for _, tc := range []struct {
		reason             string
		username, password string
		realm              string
	}{
		{"bad_integrity", live.Username, "wrong", DefaultRealm},
		{"session_not_live", gone.Username, gone.Password, DefaultRealm},
		{"expired", expired.Username, expired.Password, DefaultRealm},
		{"expiry_too_far", far.Username, far.Password, DefaultRealm},
		{"malformed_username", "no-expiry", "x", DefaultRealm},
		{"wrong_realm", live.Username, live.Password, "elsewhere"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			before := srv.Stats().AuthFailures
			// An unsigned try for a nonce, then the signed one.
			res := transact(t, c, stun.TransactionID, stun.NewType(stun.MethodAllocate, stun.ClassRequest), udpTransport)
			var nonce stun.Nonce
			if err := nonce.GetFrom(res); err != nil {
				t.Fatalf("no NONCE in %s", res)
			}
			res = askWith(t, c, tc.username, tc.password, stun.NewRealm(tc.realm), nonce, stun.MethodAllocate, udpTransport)
			if code := codeOf(t, res); code != stun.CodeUnauthorized {
				t.Fatalf("error %d, want 401", code)
			}
			after := srv.Stats().AuthFailures
			for _, r := range AuthFailureReasons() {
				want := before[r]
				if r == tc.reason {
					want++
				}
				if after[r] != want {
					t.Errorf("%s: %d, want %d", r, after[r], want)
				}
			}
		})
	}
	// A good credential is no failure, and the Allocate's 401 challenge
	// (no credentials yet) is none either.
	before := srv.Stats().AuthFailures
	allocate(t, newClient(t, srv, live))
	if after := srv.Stats().AuthFailures; !maps.Equal(before, after) {
		t.Fatalf("a good Allocate changed AuthFailures: %v -> %v", before, after)
	}
}

// TestStatsCountAllocations: allocations live (by transport) and made, and
// each cap's refusals under its reason.
func TestStatsCountAllocations(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) {
		c.MaxAllocationsPerSession = 2
		c.MaxAllocationsPerIP = 3
		c.MaxAllocations = 4
	})
	for _, s := range []string{"a", "b", "c"} {
		fs.join(s, "room")
	}
	refusedAs := func(session string, code stun.ErrorCode, reason string, from string) {
		t.Helper()
		before := srv.Stats().AllocationsRefused
		_, err := newClientFrom(t, srv, from, srv.Credentials(session, time.Now())).Allocate()
		if turnCode(err) != code {
			t.Fatalf("Allocate: %v, want %d", err, code)
		}
		after := srv.Stats().AllocationsRefused
		for _, r := range AllocationRefusalReasons() {
			want := before[r]
			if r == reason {
				want++
			}
			if after[r] != want {
				t.Errorf("refused %s: %d, want %d", r, after[r], want)
			}
		}
	}

	allocated(t, srv, "a")
	allocate(t, newTCPClient(t, srv, srv.Credentials("a", time.Now())))
	refusedAs("a", stun.CodeAllocQuotaReached, "session_quota", "127.0.0.1")
	allocated(t, srv, "b")
	refusedAs("b", stun.CodeAllocQuotaReached, "ip_quota", "127.0.0.1")
	allocate(t, newClientFrom(t, srv, "127.0.0.2", srv.Credentials("c", time.Now())))
	refusedAs("c", stun.CodeInsufficientCapacity, "capacity", "127.0.0.3")

	st := srv.Stats()
	if st.Allocations != 4 || st.AllocationsTCP != 1 || st.AllocationsTLS != 0 || st.AllocationsCreated != 4 {
		t.Fatalf("allocations %d (tcp %d, tls %d), created %d; want 4 (tcp 1, tls 0), created 4",
			st.Allocations, st.AllocationsTCP, st.AllocationsTLS, st.AllocationsCreated)
	}
}

// TestStatsCountTLSAllocations: an allocation over TURN over TLS counts as
// a stream (TCP) allocation and as TLS; one over plain TCP only as the
// former.
func TestStatsCountTLSAllocations(t *testing.T) {
	certs := testcert.New(t)
	srv, fs := newServer(t, withTLS(certs))
	fs.join("a", "room")
	allocate(t, newTLSClient(t, srv, certs, srv.Credentials("a", time.Now())))
	allocate(t, newTCPClient(t, srv, srv.Credentials("a", time.Now())))
	allocated(t, srv, "a")
	if st := srv.Stats(); st.Allocations != 3 || st.AllocationsTCP != 2 || st.AllocationsTLS != 1 {
		t.Fatalf("allocations %d (tcp %d, tls %d); want 3 (tcp 2, tls 1)", st.Allocations, st.AllocationsTCP, st.AllocationsTLS)
	}
}
