package turn

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// relayConn is the relay socket of one allocation as pion sees it. pion
// reads peer traffic with ReadFrom and relays client traffic with WriteTo;
// both consult allocations so only same-room relay sockets are reachable.
type relayConn struct {
	conn   *net.UDPConn
	allocs *allocations
	port   uint16
	// public is the advertised relay address; it is also what ReadFrom
	// reports as the source of this socket's packets, so it must not be
	// modified (pion only reads it).
	public *net.UDPAddr
	// local is where other relay sockets send to reach this one.
	local netip.AddrPort
	// Guarded by allocs.mu. session owns the allocation and client is its
	// client's transport address (udpClient: over UDP), set once by
	// onAllocationCreated; channels mirrors pion's channel bindings.
	session   string
	client    netip.AddrPort
	udpClient bool
	channels  channelTable
	// expiry closes the allocation when its lifetime cap passes without a
	// Refresh; set by onAllocationCreated.
	expiry *time.Timer

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool

	// in holds packets other relay sockets of ours handed over in memory.
	in inbox
	// parked is set while ReadFrom waits in the kernel socket; deliver then
	// kicks it out with a past read deadline.
	parked atomic.Bool
	// deadline is the read deadline set by SetReadDeadline (unix ns, 0: none).
	deadline atomic.Int64
	// rooms caches the room of session when Sessions reports room changes.
	rooms roomCache
	// bw is this allocation's bandwidth budget, charged for what its client sends.
	bw bandwidthLimit
	// usage is what it relayed, for the operator's view (usage.go).
	usage usage
}

// aLongTimeAgo is a read deadline that makes a blocked read return at once.
var aLongTimeAgo = time.Unix(1, 0) //nolint:gochecknoglobals // a constant time

// ReadFrom returns the next packet from a relay socket of ours: those handed
// over in memory first, then any that came through the kernel. Anything else
// reaching the socket is silently dropped.
func (c *relayConn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		if n, from, ok := c.in.take(p); ok {
			// Counted here, before pion sends it on, so a packet that has
			// arrived has been counted.
			c.allocs.stats.other.add(n)

			return n, from, nil
		}
		if c.closed.Load() {
			return 0, nil, net.ErrClosed
		}
		// Park in the kernel read. A deliver that finds parked set kicks the
		// read out; one that ran before parked was set is seen by empty().
		c.parked.Store(true)
		if !c.in.empty() {
			c.parked.Store(false)

			continue
		}
		n, src, err := c.conn.ReadFromUDPAddrPort(p)
		c.parked.Store(false)
		if err != nil {
			if !isTimeout(err) {
				return 0, nil, err
			}
			// A kick, or the caller's own deadline.
			if d := c.deadline.Load(); d != 0 && time.Now().UnixNano() >= d {
				return 0, nil, err
			}
			_ = c.conn.SetReadDeadline(c.readDeadline())

			continue
		}
		from := c.allocs.inbound(src)
		if from == nil {
			c.allocs.droppedReads.Add(1)

			continue
		}
		// Our relays hand packets over in memory, so none should come this
		// way; if one does, it is charged to its sender all the same.
		if c.allocs.admit(from, n) {
			c.allocs.stats.other.add(n)

			return n, from.public, nil
		}
	}
}

// deliver queues p, sent by the relay whose advertised address is from, for
// this socket's reader, and says whether it did.
func (c *relayConn) deliver(p []byte, from *net.UDPAddr) delivery {
	if d := c.in.put(p, from); d != delivered {
		return d
	}
	if c.parked.Load() && c.parked.CompareAndSwap(true, false) {
		_ = c.conn.SetReadDeadline(aLongTimeAgo)
	}

	return delivered
}

// handOver delivers p from relay from to peer's reader and counts a drop
// by its cause: a full inbox is the server (or the receiving client) falling
// behind; an inbox closed since the sender looked peer up is a packet to a
// relay that is gone, which counts as the policy refusal it would have met a
// moment later. (Counting the latter as overflow made a 30-minute soak of
// 15 million packets report one "overflow" where no queue was full.)
func (a *allocations) handOver(peer *relayConn, p []byte, from *relayConn) {
	switch peer.deliver(p, from.public) {
	case delivered:
	case dropFull:
		a.droppedFull.Add(1)
	case dropGone:
		a.droppedWrites.Add(1)
	}
}

func (c *relayConn) readDeadline() time.Time {
	if d := c.deadline.Load(); d != 0 {
		return time.Unix(0, d)
	}

	return time.Time{}
}

func isTimeout(err error) bool {
	var ne net.Error

	return errors.As(err, &ne) && ne.Timeout()
}

// WriteTo relays p to dst if dst is a live relay address in the same room,
// and otherwise drops it while reporting success: the sender learns nothing
// about what lies behind the relay. The packet never touches the kernel: it
// goes straight to the destination allocation's inbox, unless it is over this
// allocation's bandwidth, which also drops it silently.
func (c *relayConn) WriteTo(p []byte, dst net.Addr) (int, error) {
	peer, ok := c.allocs.outbound(c, dst)
	if !ok {
		c.allocs.noteDroppedWrite(c, dst)

		return len(p), nil
	}
	if !c.allocs.admit(c, len(p)) {
		return len(p), nil
	}
	c.allocs.handOver(peer, p, c)

	return len(p), nil
}

// Close is idempotent because both pion (Allocation.Close, Manager.Close) and
// Server.Close close relay sockets, and pion's Manager.Close stops closing the
// rest at the first error.
func (c *relayConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.allocs.removeRelay(c)
		c.in.close()
		c.closeErr = c.conn.Close()
	})

	return c.closeErr
}

// LocalAddr returns the bound address of the socket.
func (c *relayConn) LocalAddr() net.Addr { return c.conn.LocalAddr() }

// SetDeadline sets the read and write deadlines.
func (c *relayConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.conn.SetWriteDeadline(t))
}

// SetReadDeadline sets the read deadline. It is kept here too because
// deliver moves the socket's own deadline to wake a parked reader.
func (c *relayConn) SetReadDeadline(t time.Time) error {
	var d int64
	if !t.IsZero() {
		d = max(t.UnixNano(), 1)
	}
	c.deadline.Store(d)

	return c.conn.SetReadDeadline(t)
}

// SetWriteDeadline sets the socket's write deadline.
func (c *relayConn) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }

// relayGenerator is the pion RelayAddressGenerator: it opens each
// allocation's relay socket, advertises it at PublicIP and wraps it in a
// relayConn. pion does not tell it the username, so the socket learns its
// session later from onAllocationCreated.
type relayGenerator struct {
	allocs *allocations
	bindIP net.IP
	ports  PortRange // Config.RelayPorts; zero: the kernel picks
	log    *slog.Logger
	ids    atomic.Uint64 // the last usage.id handed out
}

// Validate is called by pion's NewServer.
func (g *relayGenerator) Validate() error { return nil }

// AllocatePacketConn opens a relay socket. pion v4 always asks for "udp4".
func (g *relayGenerator) AllocatePacketConn(network string, requestedPort int) (net.PacketConn, net.Addr, error) {
	if network != "udp4" {
		return nil, nil, fmt.Errorf("%w (asked for %s)", errRelayNetwork, network)
	}
	// pion answers a refusal here 508 Insufficient Capacity. Checked before
	// the socket is opened so a flood costs no descriptors; addPending
	// checks again under the lock.
	if g.allocs.full() {
		g.allocs.stats.refusedCapacity.Add(1)
		if skipped, ok := g.allocs.refusalLog.allow(); ok {
			g.log.Warn("allocation refused: server at MaxAllocations", "limit", g.allocs.maxTotal,
				"refusals_not_logged", skipped)
		}

		return nil, nil, errCapacity
	}
	conn, err := g.listen(requestedPort)
	if err != nil {
		if errors.Is(err, errPortsExhausted) {
			g.allocs.stats.refusedPorts.Add(1)
			if skipped, ok := g.allocs.refusalLog.allow(); ok {
				g.log.Warn("allocation refused: no free port in RelayPorts", "relay_ports", g.ports.String(),
					"err", err, "refusals_not_logged", skipped)
			}

			return nil, nil, err
		}

		return nil, nil, fmt.Errorf("turn: open relay socket: %w", err)
	}
	// No raised buffers here: relayed packets reach this allocation in
	// memory (deliver), so the socket itself only ever sees strays.
	port := uint16(conn.LocalAddr().(*net.UDPAddr).Port) //nolint:gosec,forcetypeassert // a UDP socket
	c := &relayConn{
		conn:   conn,
		allocs: g.allocs,
		port:   port,
		public: &net.UDPAddr{IP: g.allocs.public.AsSlice(), Port: int(port)},
		local:  netip.AddrPortFrom(g.allocs.local, port),
		usage:  usage{id: g.ids.Add(1), created: time.Now()},
	}
	if err := g.allocs.addPending(c); err != nil {
		_ = conn.Close()

		return nil, nil, err
	}

	// pion keeps the returned address as the allocation's RelayAddr; give it
	// its own copy so nothing it does can reach c.public.
	return c, &net.UDPAddr{IP: g.allocs.public.AsSlice(), Port: int(port)}, nil
}

// listen opens a relay socket on requested (pion asks for a port only for
// EVEN-PORT, one this generator opened a moment before), else on a free
// port of RelayPorts, else on the port the kernel picks.
func (g *relayGenerator) listen(requested int) (*net.UDPConn, error) {
	switch {
	case g.ports.Size() == 0:
	case requested == 0:
		return g.listenInRange()
	case !g.ports.contains(requested):
		return nil, fmt.Errorf("%w: port %d asked for is outside %s", errPortsExhausted, requested, g.ports)
	}

	return net.ListenUDP("udp4", &net.UDPAddr{IP: g.bindIP, Port: requested})
}

// listenInRange binds the first port of RelayPorts that is free, trying
// them in order from a random one (so a port just given up is seldom the
// next one handed out) and wrapping around. Ports our relays hold are passed
// over without a system call; one held by anything else fails to bind and
// is skipped. A full range costs no bind at all.
func (g *relayGenerator) listenInRange() (*net.UDPConn, error) {
	size := g.ports.Size()
	if g.allocs.relayCount() >= size {
		return nil, errPortsExhausted
	}
	start := rand.IntN(size) //nolint:gosec // spreads ports, guards nothing
	var lastErr error
	for i := range size {
		port := int(g.ports.Min) + (start+i)%size
		if g.allocs.holdsPort(uint16(port)) { //nolint:gosec // in the uint16 range
			continue
		}
		conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: g.bindIP, Port: port})
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	if lastErr == nil {
		return nil, errPortsExhausted
	}

	return nil, fmt.Errorf("%w (last bind: %w)", errPortsExhausted, lastErr)
}

// AllocateConn would serve RFC 6062 TCP relays, which hostrelay does not offer.
func (g *relayGenerator) AllocateConn(string, int) (net.Conn, net.Addr, error) {
	return nil, nil, errTCPRelay
}
