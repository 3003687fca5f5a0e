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
// It mirrors pion's channel bindings through its channel events
// (pionfix_channelmirror.go) and handles
// only packets pion would relay the same way. Everything else (refused by
// the policy, unknown channel, a peer without a channel back, a TCP peer)
// goes on to pion, whose path enforces the same policy.

// channelHeader is the ChannelData header: channel number and length.
const channelHeader = 4

// udpListener is a TURN listener socket as pion sees it; its ReadFrom forwards
// ChannelData on the fast path, rewrites requests, and returns only what pion
// must handle. It reads and sends in batches (udpio.go).
type udpListener struct {
	*net.UDPConn
	allocs   *allocations
	rewriter *requestRewriter
	// fast counts what this listener relayed on the fast path; only its
	// read loop adds to it.
	fast *relayCounters

	// The rest belongs to pion's one read loop for this socket, the only
	// caller of ReadFrom.
	io    udpIO
	calls *ioCounters
	// in holds the last batch read; in[next:got] are still to be handled.
	in        []datagram
	next, got int
	// out holds the fast path's sends not yet made, rewritten in place in
	// the slots of in, which are not read into again before out is sent.
	out []datagram
}

// newTurnConn wraps listener socket u, reading and sending up to batch
// datagrams per system call, and with gso several datagrams for one client
// per message.
func newUDPListener(u *net.UDPConn, allocs *allocations, sc *requestRewriter, fast *relayCounters, batch int, gso bool) *udpListener {
	t := &udpListener{UDPConn: u, allocs: allocs, rewriter: sc, fast: fast, calls: new(ioCounters)}
	t.io = newUDPIO(u, batch, gso, t.calls)
	if _, single := t.io.(singleIO); single {
		batch = 1
	}
	bufs := make([]byte, batch*inboundMTU)
	t.in = make([]datagram, batch)
	for i := range t.in {
		t.in[i].buf = bufs[i*inboundMTU : (i+1)*inboundMTU : (i+1)*inboundMTU]
	}
	t.out = make([]datagram, 0, batch)

	return t
}

// ReadFrom returns the next packet that is not forwarded on the fast path
// or answered by the rewriter. What the fast path forwards from a batch is
// sent, sendGroup packets a call at most, before this returns or reads
// again: never held back for more to arrive.
func (l *udpListener) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		if l.next == l.got {
			l.flush()
			got, err := l.io.read(l.in)
			if err != nil {
				return 0, nil, err
			}
			l.next, l.got = 0, got
		}
		d := &l.in[l.next]
		l.next++
		if !d.addr.IsValid() {
			continue // no source the kernel could name: nowhere to answer
		}
		n, src := d.n, d.addr
		b := d.buf
		switch {
		case n >= channelHeader && b[0]&0xC0 == 0x40: // 0x4000-0x7FFF: ChannelData
			if to, m, ok := l.allocs.forward(b[:n], src); ok {
				if m > 0 {
					// Counted before the send, so a packet that has
					// arrived has been counted.
					l.fast.add(m - channelHeader)
					l.out = append(l.out, datagram{buf: b, n: m, addr: to})
					if len(l.out) == sendGroup {
						l.flush()
					}
				}

				continue
			}
		case n > 0 && b[0]&0xC0 == 0 && l.rewriter != nil: // STUN
			m, reply := l.rewriter.request(b, n, allocKey{client: netip.AddrPortFrom(src.Addr().Unmap(), src.Port())})
			if reply != nil {
				l.flush()
				_, _ = l.WriteToUDPAddrPort(reply, src)

				continue
			}
			n = m
		}
		// pion may take a while over a request (HMAC, allocation): what
		// the batch forwarded so far goes out first.
		l.flush()

		return copy(p, b[:n]), net.UDPAddrFromAddrPort(src), nil
	}
}

// sendGroup bounds how many forwarded packets wait for one sendmmsg: the
// first of a full read batch would otherwise wait for 63 others to be looked
// up (about 25 us) before it leaves. 16 keeps that to a few microseconds for
// one more call per 16 packets, against two calls per packet unbatched.
const sendGroup = 16

// flush sends the fast path's pending packets. A packet the kernel refuses
// is dropped, as a failed single send was, and the rest still go.
func (l *udpListener) flush() {
	for off := 0; off < len(l.out); {
		sent, err := l.io.write(l.out[off:])
		off += sent
		if err != nil {
			off++
		}
	}
	l.out = l.out[:0]
}

// WriteTo sends what pion writes: responses, and Data indications and
// ChannelData of its relay path; a response the rewriter replaces
// (pionfix_unauthorized.go) goes out replaced.
func (l *udpListener) WriteTo(p []byte, addr net.Addr) (int, error) {
	if l.rewriter != nil {
		if b := l.rewriter.response(p); b != nil {
			if _, err := l.UDPConn.WriteTo(b, addr); err != nil {
				return 0, err
			}

			return len(p), nil
		}
	}

	return l.UDPConn.WriteTo(p, addr)
}

// forward handles ChannelData b from client src if the fast path can: it
// rewrites b in place for the receiving client and returns where to send
// b[:n] (n = 0: delivered in memory or dropped over the sender's bandwidth,
// nothing to send). ok=false leaves the packet to pion.
func (a *allocations) forward(b []byte, src netip.AddrPort) (to netip.AddrPort, n int, ok bool) {
	number := binary.BigEndian.Uint16(b[0:2])
	length := int(binary.BigEndian.Uint16(b[2:4]))
	if channelHeader+length > len(b) {
		return to, 0, false // malformed: pion drops it
	}
	src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())

	a.mu.RLock()
	from := a.clients[src]
	if from == nil {
		a.mu.RUnlock()

		return to, 0, false
	}
	peerPort, bound := from.channelPeer(number)
	if !bound {
		a.mu.RUnlock()

		return to, 0, false
	}
	peer := a.relays[peerPort]
	if peer == nil {
		a.mu.RUnlock()

		return to, 0, false
	}
	self, other := from.session, peer.session
	back, hasBack := peer.channelTo(from.port)
	client, udp := peer.client, peer.udpClient
	a.mu.RUnlock()

	if !a.sameRoom(from, self, peer, other) {
		return to, 0, false
	}
	if !a.admit(from, length) {
		return to, 0, true // dropped here: pion would charge it again
	}
	if !hasBack || !udp {
		// pion sends it to B's client (as a Data indication, or over TCP).
		a.handOver(peer, b[channelHeader:channelHeader+length], from)

		return to, 0, true
	}
	binary.BigEndian.PutUint16(b[0:2], back)

	return client, channelHeader + length, true
}
