package turn

import (
	"encoding/binary"
	"net"
	"net/netip"
)

// The ChannelData fast path. Browsers send game traffic as ChannelData once
// their channel is bound, and both ends of every packet are allocations of
// this server. So the listener's read loop forwards such a packet itself:
// from client A's channel to relay B, rewritten for B's channel back to A's
// relay, straight to B's client on the same socket. One recvfrom and one
// sendto per packet, in one goroutine, with no allocation, where pion would
// take a sendto and a recvfrom more (relay to relay) and a goroutine switch.
//
// It mirrors pion's channel bindings through its channel events and handles
// only packets pion would relay the same way. Everything else (refused by
// the policy, unknown channel, a peer without a channel back, a TCP peer)
// goes on to pion, whose path enforces the same policy.

// channelHeader is the ChannelData header: channel number and length.
const channelHeader = 4

// turnConn is a TURN listener socket as pion sees it; its ReadFrom forwards
// ChannelData on the fast path and returns only what pion must handle.
type turnConn struct {
	*net.UDPConn
	reg *registry
}

// ReadFrom returns the next packet that is not forwarded on the fast path.
func (t *turnConn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		n, src, err := t.ReadFromUDPAddrPort(p)
		if err != nil {
			return n, nil, err
		}
		if n >= channelHeader && p[0]&0xC0 == 0x40 { // 0x4000-0x7FFF: ChannelData
			if to, m, ok := t.reg.forward(p[:n], src); ok {
				if m > 0 {
					_, _ = t.WriteToUDPAddrPort(p[:m], to)
				}

				continue
			}
		}

		return n, net.UDPAddrFromAddrPort(src), nil
	}
}

// channelBinding mirrors one pion channel binding of an allocation. peer is
// the port of the relay it is bound to: channels can only be bound to the
// relay IP, which the permission handler enforces.
type channelBinding struct {
	number uint16
	peer   uint16
}

// forward handles ChannelData b from client src if the fast path can: it
// rewrites b in place for the receiving client and returns where to send
// b[:n] (n = 0: delivered in memory or dropped over the sender's bandwidth,
// nothing to send). ok=false leaves the packet to pion.
func (r *registry) forward(b []byte, src netip.AddrPort) (to netip.AddrPort, n int, ok bool) {
	number := binary.BigEndian.Uint16(b[0:2])
	length := int(binary.BigEndian.Uint16(b[2:4]))
	if channelHeader+length > len(b) {
		return to, 0, false // malformed: pion drops it
	}
	src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())

	r.mu.RLock()
	from := r.clients[src]
	if from == nil {
		r.mu.RUnlock()

		return to, 0, false
	}
	peerPort, bound := from.channelPeer(number)
	if !bound {
		r.mu.RUnlock()

		return to, 0, false
	}
	peer := r.relays[peerPort]
	if peer == nil {
		r.mu.RUnlock()

		return to, 0, false
	}
	self, other := from.session, peer.session
	back, hasBack := peer.channelTo(from.port)
	client, udp := peer.client, peer.udpClient
	r.mu.RUnlock()

	if !r.sameRoom(from, self, peer, other) {
		return to, 0, false
	}
	if !r.admit(from, length) {
		return to, 0, true // dropped here: pion would charge it again
	}
	if !hasBack || !udp {
		// pion sends it to B's client (as a Data indication, or over TCP).
		if !peer.deliver(b[channelHeader:channelHeader+length], from.public) {
			r.droppedFull.Add(1)
		}

		return to, 0, true
	}
	binary.BigEndian.PutUint16(b[0:2], back)

	return client, channelHeader + length, true
}

// channelPeer returns the relay port that channel number of c is bound to.
// Caller holds reg.mu.
func (c *relayConn) channelPeer(number uint16) (uint16, bool) {
	for _, ch := range c.channels {
		if ch.number == number {
			return ch.peer, true
		}
	}

	return 0, false
}

// channelTo returns the channel number c has bound to relay port peer.
// Caller holds reg.mu.
func (c *relayConn) channelTo(peer uint16) (uint16, bool) {
	for _, ch := range c.channels {
		if ch.peer == peer {
			return ch.number, true
		}
	}

	return 0, false
}

// onChannelCreated mirrors a channel pion bound.
func (r *registry) onChannelCreated(_, _ net.Addr, _, _, _ string, relayAddr, peer net.Addr, number uint16) {
	port, peerPort, ok := r.channelPorts(relayAddr, peer)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.relays[port]
	if c == nil {
		return
	}
	for _, ch := range c.channels {
		if ch.number == number || ch.peer == peerPort {
			return // pion refuses rebinding either side; a refresh needs nothing
		}
	}
	c.channels = append(c.channels, channelBinding{number: number, peer: peerPort})
}

// onChannelDeleted forgets a channel pion removed (expired or closed).
func (r *registry) onChannelDeleted(_, _ net.Addr, _, _, _ string, relayAddr, peer net.Addr, number uint16) {
	port, peerPort, ok := r.channelPorts(relayAddr, peer)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.relays[port]
	if c == nil {
		return
	}
	for i, ch := range c.channels {
		if ch.number == number && ch.peer == peerPort {
			c.channels = append(c.channels[:i], c.channels[i+1:]...)

			return
		}
	}
}

// channelPorts extracts the allocation's relay port and the peer's port, if
// the peer is on the relay IP (no other peer can be one of our relays).
func (r *registry) channelPorts(relayAddr, peer net.Addr) (port, peerPort uint16, ok bool) {
	ra, ok1 := relayAddr.(*net.UDPAddr)
	pa, ok2 := peer.(*net.UDPAddr)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	pap := pa.AddrPort()
	if pap.Addr() != r.public {
		return 0, 0, false
	}

	return uint16(ra.Port), pap.Port(), true //nolint:gosec // a UDP port
}
