package turn

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// relayConn is the relay socket of one allocation as pion sees it. pion
// reads peer traffic with ReadFrom and relays client traffic with WriteTo;
// both consult the registry so only same-room relay sockets are reachable.
type relayConn struct {
	conn *net.UDPConn
	reg  *registry
	port uint16
	// public is the advertised relay address; it is also what ReadFrom
	// reports as the source of this socket's packets, so it must not be
	// modified (pion only reads it).
	public *net.UDPAddr
	// local is where other relay sockets send to reach this one.
	local netip.AddrPort
	// session owns the allocation; guarded by reg.mu, set once by
	// onAllocationCreated.
	session string

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool
}

// ReadFrom returns the next packet sent by a relay socket of ours, silently
// dropping anything else.
func (c *relayConn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		n, src, err := c.conn.ReadFromUDPAddrPort(p)
		if err != nil {
			return n, nil, err
		}
		if from := c.reg.inbound(src); from != nil {
			return n, from, nil
		}
		c.reg.droppedReads.Add(1)
	}
}

// WriteTo relays p to dst if dst is a live relay address in the same room,
// and otherwise drops it while reporting success: the sender learns nothing
// about what lies behind the relay.
func (c *relayConn) WriteTo(p []byte, dst net.Addr) (int, error) {
	to, ok := c.reg.outbound(c, dst)
	if !ok {
		c.reg.noteDroppedWrite(c, dst)

		return len(p), nil
	}

	return c.conn.WriteToUDPAddrPort(p, to)
}

// Close is idempotent because both pion (Allocation.Close, Manager.Close) and
// Server.Close close relay sockets, and pion's Manager.Close stops closing the
// rest at the first error.
func (c *relayConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.reg.removeRelay(c)
		c.closeErr = c.conn.Close()
	})

	return c.closeErr
}

// LocalAddr returns the bound address of the socket.
func (c *relayConn) LocalAddr() net.Addr { return c.conn.LocalAddr() }

// SetDeadline sets the socket's read and write deadlines.
func (c *relayConn) SetDeadline(t time.Time) error { return c.conn.SetDeadline(t) }

// SetReadDeadline sets the socket's read deadline.
func (c *relayConn) SetReadDeadline(t time.Time) error { return c.conn.SetReadDeadline(t) }

// SetWriteDeadline sets the socket's write deadline.
func (c *relayConn) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }

// relayGenerator is the pion RelayAddressGenerator: it opens each
// allocation's relay socket, advertises it at PublicIP and wraps it in a
// relayConn. pion does not tell it the username, so the socket learns its
// session later from onAllocationCreated.
type relayGenerator struct {
	reg      *registry
	bindIP   net.IP
	log      *slog.Logger
	warnOnce sync.Once
}

// Validate is called by pion's NewServer.
func (g *relayGenerator) Validate() error { return nil }

// AllocatePacketConn opens a relay socket. pion v4 always asks for "udp4".
func (g *relayGenerator) AllocatePacketConn(network string, requestedPort int) (net.PacketConn, net.Addr, error) {
	if network != "udp4" {
		return nil, nil, fmt.Errorf("%w (asked for %s)", errRelayNetwork, network)
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: g.bindIP, Port: requestedPort})
	if err != nil {
		return nil, nil, fmt.Errorf("turn: open relay socket: %w", err)
	}
	if rcv, snd, ok := raiseBuffers(conn); !ok {
		g.warnOnce.Do(func() {
			g.log.Warn("relay socket buffers below target; raise net.core.rmem_max/wmem_max",
				"want", socketBufferBytes, "rcvbuf", rcv, "sndbuf", snd)
		})
	}
	port := uint16(conn.LocalAddr().(*net.UDPAddr).Port) //nolint:gosec,forcetypeassert // a UDP socket
	c := &relayConn{
		conn:   conn,
		reg:    g.reg,
		port:   port,
		public: &net.UDPAddr{IP: g.reg.public.AsSlice(), Port: int(port)},
		local:  netip.AddrPortFrom(g.reg.local, port),
	}
	if err := g.reg.addPending(c); err != nil {
		_ = conn.Close()

		return nil, nil, err
	}

	// pion keeps the returned address as the allocation's RelayAddr; give it
	// its own copy so nothing it does can reach c.public.
	return c, &net.UDPAddr{IP: g.reg.public.AsSlice(), Port: int(port)}, nil
}

// AllocateConn would serve RFC 6062 TCP relays, which hostrelay does not offer.
func (g *relayGenerator) AllocateConn(string, int) (net.Conn, net.Addr, error) {
	return nil, nil, errTCPRelay
}
