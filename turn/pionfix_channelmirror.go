package turn

import "net"

// Patch: a copy of pion's channel bindings, for the fast path.
//
// What pion does: pion/turn v4.1.4 (and v5.1.0) keeps each allocation's
// channel bindings in its internal allocation package and exports no way to
// look one up: *turn.Server has only AllocationCount and Close. The fast
// path (fastpath.go) must map a client's channel to the peer relay, and that
// relay's channel back, on every packet.
//
// How: no rewrite; the documented EventHandler hook. OnChannelCreated and
// OnChannelDeleted (wired in events.go) keep a channelTable per relay
// socket in step with pion's bindings. Being a copy, it can only be as
// right as pion's events: a binding that is refreshed fires no event, and
// pion refuses a rebinding of either side, so created/deleted pairs are
// the whole story.
//
// Canary: TestUpstreamCanary_ChannelLookup fails once *turn.Server exports
// anything beyond AllocationCount and Close. If pion then lets a caller look
// up an allocation's channel by number and by peer, in O(1) without
// allocating, the fast path can ask pion and this file can go (with
// relayConn.channels and the OnChannel* events).

// channelBinding mirrors one pion channel binding of an allocation. peer is
// the port of the relay it is bound to: channels can only be bound to the
// relay IP, which the permission handler enforces.
type channelBinding struct {
	number uint16
	peer   uint16
}

// channelTable is an allocation's channel bindings, looked up both ways in
// O(1) on every fast-path packet (the slice it replaces was scanned under the
// allocations lock: 5.6 -> 10 us per packet with many channels). It holds at
// most MaxChannelsPerAllocation entries. Guarded by allocs.mu.
type channelTable struct {
	byNumber map[uint16]uint16 // channel number -> peer relay port
	byPeer   map[uint16]uint16 // peer relay port -> channel number
}

// newChannelTable returns a table holding bindings, for tests.
func newChannelTable(bindings ...channelBinding) channelTable {
	var t channelTable
	for _, b := range bindings {
		t.bind(b.number, b.peer)
	}

	return t
}

func (t *channelTable) len() int { return len(t.byNumber) }

// bind records number <-> peer. pion refuses rebinding either side, so a
// binding that shares one side with an existing one is a refresh.
func (t *channelTable) bind(number, peer uint16) bool {
	if _, ok := t.byNumber[number]; ok {
		return false
	}
	if _, ok := t.byPeer[peer]; ok {
		return false
	}
	if t.byNumber == nil {
		t.byNumber, t.byPeer = make(map[uint16]uint16), make(map[uint16]uint16)
	}
	t.byNumber[number], t.byPeer[peer] = peer, number

	return true
}

func (t *channelTable) unbind(number, peer uint16) {
	if p, ok := t.byNumber[number]; ok && p == peer {
		delete(t.byNumber, number)
		delete(t.byPeer, peer)
	}
}

func (t *channelTable) reset() { t.byNumber, t.byPeer = nil, nil }

// has reports whether number or peer is already bound: a ChannelBind for it
// is a refresh (or a conflict pion refuses), not a new channel.
func (t *channelTable) has(number, peer uint16) bool {
	_, n := t.byNumber[number]
	_, p := t.byPeer[peer]

	return n || p
}

// channelPeer returns the relay port that channel number of c is bound to.
// Caller holds allocs.mu.
func (c *relayConn) channelPeer(number uint16) (uint16, bool) {
	peer, ok := c.channels.byNumber[number]

	return peer, ok
}

// channelTo returns the channel number c has bound to relay port peer.
// Caller holds allocs.mu.
func (c *relayConn) channelTo(peer uint16) (uint16, bool) {
	number, ok := c.channels.byPeer[peer]

	return number, ok
}

// onChannelCreated mirrors a channel pion bound. The rewriter refuses a
// ChannelBind past MaxChannelsPerAllocation before pion sees it, over UDP and
// TCP; should one reach pion all the same (the rewriter and pion parsing it
// differently), the allocation is closed (no browser comes near the cap)
// rather than left to grow without bound.
func (a *allocations) onChannelCreated(src, _ net.Addr, _, _, _ string, relayAddr, peer net.Addr, number uint16) {
	port, peerPort, ok := a.channelPorts(relayAddr, peer)
	if !ok {
		return
	}
	a.mu.Lock()
	c := a.relays[port]
	if c == nil || c.channels.has(number, peerPort) {
		a.mu.Unlock()

		return
	}
	if c.channels.len() >= a.maxChannels {
		session := c.session
		a.mu.Unlock()
		a.log.Info("allocation closed: channel bindings past MaxChannelsPerAllocation", "session", session,
			"client", src.String(), "limit", a.maxChannels)
		_ = c.Close()

		return
	}
	c.channels.bind(number, peerPort)
	a.mu.Unlock()
}

// onChannelDeleted forgets a channel pion removed (expired or closed).
func (a *allocations) onChannelDeleted(_, _ net.Addr, _, _, _ string, relayAddr, peer net.Addr, number uint16) {
	port, peerPort, ok := a.channelPorts(relayAddr, peer)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.relays[port]; c != nil {
		c.channels.unbind(number, peerPort)
	}
}

// channelPorts extracts the allocation's relay port and the peer's port, if
// the peer is on the relay IP (no other peer can be one of our relays).
func (a *allocations) channelPorts(relayAddr, peer net.Addr) (port, peerPort uint16, ok bool) {
	ra, ok1 := relayAddr.(*net.UDPAddr)
	pa, ok2 := peer.(*net.UDPAddr)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	pap := pa.AddrPort()
	if pap.Addr() != a.public {
		return 0, 0, false
	}

	return uint16(ra.Port), pap.Port(), true //nolint:gosec // a UDP port
}
