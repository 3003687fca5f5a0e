package turn

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"
)

// freePortRange returns n consecutive UDP ports free on 127.0.0.1 a moment
// ago, below the kernel's ephemeral range (32768 and up on Linux) so no
// socket of a concurrent test is handed one of them meanwhile.
func freePortRange(t *testing.T, n int) PortRange {
	t.Helper()
	for range 50 {
		lo := 20000 + rand.IntN(12000-n) //nolint:gosec // test ports
		var held []*net.UDPConn
		for p := lo; p < lo+n; p++ {
			c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p})
			if err != nil {
				break
			}
			held = append(held, c)
		}
		closeAll(held)
		if len(held) == n {
			return PortRange{Min: uint16(lo), Max: uint16(lo + n - 1)} //nolint:gosec // under 32768
		}
	}
	t.Fatalf("no %d free consecutive UDP ports on 127.0.0.1", n)

	return PortRange{}
}

// relayPort is the port of an allocation's relayed address.
func relayPort(t *testing.T, relay net.PacketConn) int {
	t.Helper()

	return relay.LocalAddr().(*net.UDPAddr).Port //nolint:forcetypeassert // pion's relay address is UDP
}

// TestRelayPortsAtAndPastLimit: with an N-port RelayPorts, N allocations
// fit, each on its own port of the range, for clients over UDP and over
// TCP; allocations N+1 and N+2 are answered 508 and counted as ports (no
// other reason moves); the N still relay to each other; and a port given
// up by an ended allocation serves the next Allocate.
func TestRelayPortsAtAndPastLimit(t *testing.T) {
	const n = 4
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			ports := freePortRange(t, n)
			srv, fs := newServer(t, func(c *Config) { c.RelayPorts = ports })
			clients := make([]*pionturn.Client, n)
			relays := make([]net.PacketConn, n)
			seen := map[int]bool{}
			for i := range n {
				session := fmt.Sprintf("p%d", i)
				fs.join(session, "room")
				clients[i] = tr.client(t, srv, srv.Credentials(session, time.Now()))
				relays[i] = allocate(t, clients[i])
				port := relayPort(t, relays[i])
				if !ports.contains(port) || seen[port] {
					t.Fatalf("allocation %d on port %d: want a port of %s not yet handed out (%v)", i+1, port, ports, seen)
				}
				seen[port] = true
			}

			before := srv.Stats().AllocationsRefused
			fs.join("over", "room")
			over := tr.client(t, srv, srv.Credentials("over", time.Now()))
			for i := range 2 {
				if relay, err := over.Allocate(); turnCode(err) != stun.CodeInsufficientCapacity {
					if err == nil {
						_ = relay.Close()
					}
					t.Fatalf("allocation %d of a %d-port range: %v, want 508 Insufficient Capacity", n+1+i, n, err)
				}
			}
			after := srv.Stats().AllocationsRefused
			for _, r := range AllocationRefusalReasons() {
				want := before[r]
				if r == "ports" {
					want += 2
				}
				if after[r] != want {
					t.Errorf("refused %s: %d, want %d", r, after[r], want)
				}
			}
			if got := srv.Stats().Allocations; got != n {
				t.Fatalf("%d allocations after the refusals, want %d", got, n)
			}

			permitFrom(t, clients[1], relays[0])
			permitFrom(t, clients[0], relays[1])
			if !deliver(relays[0], relays[1].LocalAddr(), relays[1], "full range 0->1", arrives) ||
				!deliver(relays[1], relays[0].LocalAddr(), relays[0], "full range 1->0", arrives) {
				t.Fatal("allocations of a full range no longer relay")
			}

			freed := relayPort(t, relays[n-1])
			if err := relays[n-1].Close(); err != nil {
				t.Fatal(err)
			}
			var again net.PacketConn
			if !eventually(arrives, func() bool {
				relay, err := over.Allocate()
				if err != nil {
					return false
				}
				again = relay
				t.Cleanup(func() { _ = relay.Close() })

				return true
			}) {
				t.Fatalf("no allocation after port %d was given up", freed)
			}
			if got := relayPort(t, again); got != freed {
				t.Fatalf("allocation after port %d was given up got port %d: the rest of %s is taken", freed, got, ports)
			}
		})
	}
}

// TestRelayPortsSkipPortInUse: a port of the range that another socket
// holds is skipped; the rest serve, and then Allocate is answered 508.
func TestRelayPortsSkipPortInUse(t *testing.T) {
	const n = 3
	ports := freePortRange(t, n)
	busy := int(ports.Min) + 1
	other, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: busy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	srv, fs := newServer(t, func(c *Config) { c.RelayPorts = ports })
	for i := range n - 1 {
		session := fmt.Sprintf("p%d", i)
		fs.join(session, "room")
		if port := relayPort(t, allocated(t, srv, session)); port == busy || !ports.contains(port) {
			t.Fatalf("allocation %d on port %d: want one of %s but %d", i+1, port, ports, busy)
		}
	}
	fs.join("over", "room")
	if _, err := newClient(t, srv, srv.Credentials("over", time.Now())).Allocate(); turnCode(err) != stun.CodeInsufficientCapacity {
		t.Fatalf("allocation with every free port of %s taken: %v, want 508", ports, err)
	}
	if got := srv.Stats().AllocationsRefused["ports"]; got != 1 {
		t.Fatalf("refused ports: %d, want 1", got)
	}
}

// TestRelayPortsRequestedPort: a port pion asks for (EVEN-PORT) is opened
// only if it is in the range.
func TestRelayPortsRequestedPort(t *testing.T) {
	ports := freePortRange(t, 2)
	cfg := testConfig(newFakeSessions()).prepared()
	g := &relayGenerator{allocs: newAllocations(cfg, testLogger()), bindIP: cfg.RelayBindIP, ports: ports, log: testLogger()}
	if _, _, err := g.AllocatePacketConn("udp4", int(ports.Max)+1); !errors.Is(err, errPortsExhausted) {
		t.Fatalf("port %d outside %s: %v, want refused", ports.Max+1, ports, err)
	}
	conn, addr, err := g.AllocatePacketConn("udp4", int(ports.Max))
	if err != nil {
		t.Fatalf("port %d of %s: %v", ports.Max, ports, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if got := addr.(*net.UDPAddr).Port; got != int(ports.Max) { //nolint:forcetypeassert // ours is UDP
		t.Fatalf("relay address port %d, want %d", got, ports.Max)
	}
}

// TestRelayAddressNeedsNoInboundPath: relays exchange packets even when
// the relay addresses TURN hands out lead nowhere (PublicIP is not on this
// host), over UDP and TCP clients: packets between our allocations never
// cross the relay ports, so a firewall may keep the range closed
// (docs/operations.md#firewall says so).
func TestRelayAddressNeedsNoInboundPath(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) {
		c.PublicIP = net.IPv4(192, 0, 2, 1) // TEST-NET-1: not on this host
		c.RelayBindIP = net.IPv4(127, 0, 0, 1)
		c.RelayPorts = freePortRange(t, 2)
	})
	fs.join("a", "room")
	fs.join("b", "room")
	ca := newTCPClient(t, srv, srv.Credentials("a", time.Now()))
	cb := newClient(t, srv, srv.Credentials("b", time.Now()))
	a, b := allocate(t, ca), allocate(t, cb)
	permitFrom(t, ca, b)
	permitFrom(t, cb, a)
	if !deliver(a, b.LocalAddr(), b, "tcp->udp", arrives) || !deliver(b, a.LocalAddr(), a, "udp->tcp", arrives) {
		t.Fatalf("relays at %s and %s exchanged nothing", a.LocalAddr(), b.LocalAddr())
	}
}
