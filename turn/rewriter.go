package turn

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"time"

	"github.com/pion/stun/v3"
)

// requestRewriter is the one place where a TURN request passes before
// pion/turn handles it, and pion's response after: the seam for the patches
// of pion's request handling that no pion hook can make (one file each,
// pionfix_*.go, with a canary test that fails the day pion no longer needs
// it):
//
//   - pionfix_unauthorized.go: a refused credential is answered 401, not
//     pion's 400;
//   - pionfix_lifetime.go: an Allocate or Refresh asking for more than
//     MaxAllocationLifetime is rewritten to ask for the cap;
//   - pionfix_channelcap.go: a ChannelBind past MaxChannelsPerAllocation is
//     answered 508 and never reaches pion.
//
// Each needs the request authenticated first, with the key the AuthHandler
// derives, so a rewrite never helps a forged request along.
//
// It serves UDP and TCP alike: a UDP listener's reads (udpListener.ReadFrom)
// and a TCP connection's frames (tcpConn.Read, one whole frame each) pass
// through it, and pion writes its responses back through the same socket or
// connection (udpListener.WriteTo, tcpConn.Write), which ask response.
//
// One requestRewriter serves one pion read loop: a UDP listener's or a TCP
// connection's. The loop runs pion's handling of each request to completion
// (response written) before reading the next, so what the rewriter noted
// of a request is about the one pion is answering when it writes. Other
// goroutines write there too (relayed data), but never a response to a
// request.
type requestRewriter struct {
	allocs   *allocations
	authKey  func(username, realm string, src net.Addr) ([]byte, bool)
	realm    stun.Realm
	lifetime time.Duration

	// refused is the request now in pion's hands whose credentials failed
	// (pionfix_unauthorized.go).
	refused atomic.Pointer[refusal]
}

// request looks at the STUN message p[:n] from client. It returns the length
// of the message to hand to pion (p may have been rewritten in place, never
// past len(p)-1, which pion would take as truncated), or 0 and a reply to
// send instead.
func (rw *requestRewriter) request(p []byte, n int, client allocKey) (int, []byte) {
	if rw.refused.Load() != nil {
		rw.refused.Store(nil)
	}
	b := p[:n]
	if !stun.IsMessage(b) {
		return n, nil
	}
	var typ stun.MessageType
	typ.ReadValue(binary.BigEndian.Uint16(b[0:2]))
	if typ.Class != stun.ClassRequest {
		return n, nil
	}
	switch typ.Method {
	case stun.MethodAllocate, stun.MethodRefresh, stun.MethodCreatePermission, stun.MethodChannelBind:
	default:
		return n, nil
	}
	m := &stun.Message{Raw: append([]byte(nil), b...)}
	if m.Decode() != nil || !m.Contains(stun.AttrMessageIntegrity) {
		return n, nil // pion answers these (400, or 401 with a nonce)
	}
	var (
		user  stun.Username
		realm stun.Realm
		nonce stun.Nonce
	)
	if user.GetFrom(m) != nil || realm.GetFrom(m) != nil || nonce.GetFrom(m) != nil {
		return n, nil // pion answers 400: not an authentication failure
	}
	key, ok := rw.authKey(user.String(), realm.String(), client.addr())
	if !ok || stun.MessageIntegrity(key).Check(m) != nil {
		rw.noteRefused(m, nonce)

		return n, nil
	}

	switch typ.Method {
	case stun.MethodChannelBind:
		if reply := rw.capChannels(m, client, key); reply != nil {
			return 0, reply
		}
	case stun.MethodAllocate, stun.MethodRefresh:
		if out := rw.capLifetime(m, key); out != nil && len(out) < len(p) {
			return copy(p, out), nil
		}
	}

	return n, nil
}

// response returns what to send instead of p, pion's write to the client,
// or nil to send p as it is.
func (rw *requestRewriter) response(p []byte) []byte {
	if rw.refused.Load() == nil {
		return nil
	}

	return rw.unauthorized(p)
}
