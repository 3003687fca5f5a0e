package turn

import (
	"encoding/binary"
	"net/netip"

	"github.com/pion/stun/v3"
)

// Patch: at most MaxChannelsPerAllocation channels per allocation.
//
// What pion does: pion/turn v4.1.4 (and v5.1.0) binds any valid channel
// number a client asks for, up to 16,384 per allocation (0x4000-0x7FFF),
// with no setting to cap them. Its PermissionHandler also runs for
// ChannelBind, but sees only the client and the peer IP, neither the
// channel nor whether the request binds a new one or refreshes one, and
// pion answers its refusal 401. No upstream issue was found.
//
// How: requestRewriter.request answers an authenticated ChannelBind that
// would bind a new channel past the cap with 508 Insufficient Capacity
// itself (capChannels); pion never sees it. A refresh of a bound channel
// is never refused. The channel mirror (pionfix_channelmirror.go) closes an
// allocation should a binding past the cap reach pion all the same.
//
// Canary: TestUpstreamCanary_ChannelCap fails once plain pion refuses a
// channel below 33 (DefaultMaxChannelsPerAllocation+1) or its ServerConfig
// gains a channel setting other than ChannelBindTimeout. If that setting
// caps channels per allocation, set it to MaxChannelsPerAllocation and
// delete this file and its test and the capChannels call in rewriter.go.

// capChannels returns the 508 answering ChannelBind m from client, signed
// with key, if it would bind a new channel past MaxChannelsPerAllocation;
// else nil.
func (rw *requestRewriter) capChannels(m *stun.Message, client allocKey, key []byte) []byte {
	number, peer, ok := channelBindOf(m)
	if !ok || !rw.allocs.channelRefused(client, number, peer) {
		return nil
	}
	rw.allocs.stats.channelBindsRefused.Add(1)
	if skipped, ok := rw.allocs.refusalLog.allow(); ok {
		rw.allocs.log.Info("channel bind refused: MaxChannelsPerAllocation reached",
			"client", client.client.String(), "tcp", client.tcp, "limit", rw.allocs.maxChannels,
			"refusals_not_logged", skipped)
	}

	return errorReply(m, stun.CodeInsufficientCapacity, key)
}

// channelRefused reports whether a ChannelBind of number to peer by client
// would bind a new channel past MaxChannelsPerAllocation. A refresh of a
// bound channel is never refused.
func (a *allocations) channelRefused(client allocKey, number uint16, peer netip.AddrPort) bool {
	if peer.Addr() != a.public {
		return false // the permission handler refuses it
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	c := a.records[client].relay

	return c != nil && !c.channels.has(number, peer.Port()) && c.channels.len() >= a.maxChannels
}

// channelBindOf returns a ChannelBind's channel number and peer.
func channelBindOf(m *stun.Message) (uint16, netip.AddrPort, bool) {
	v, err := m.Get(stun.AttrChannelNumber)
	if err != nil || len(v) != 4 {
		return 0, netip.AddrPort{}, false
	}
	var peer stun.XORMappedAddress
	if peer.GetFromAs(m, stun.AttrXORPeerAddress) != nil {
		return 0, netip.AddrPort{}, false
	}
	ip, ok := netip.AddrFromSlice(peer.IP)
	if !ok {
		return 0, netip.AddrPort{}, false
	}

	return binary.BigEndian.Uint16(v), netip.AddrPortFrom(ip, uint16(peer.Port)), true //nolint:gosec // a port
}

// errorReply is an error response to request m, signed with key as RFC 5389
// section 10.2.2 asks of responses to authenticated requests.
func errorReply(m *stun.Message, code stun.ErrorCode, key []byte) []byte {
	out := new(stun.Message)
	if err := out.Build(stun.NewTransactionIDSetter(m.TransactionID),
		stun.NewType(m.Type.Method, stun.ClassErrorResponse), code, stun.MessageIntegrity(key)); err != nil {
		return nil
	}

	return out.Raw
}
