package turn

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/pion/stun/v3"
)

// screen looks at the authenticated TURN requests a client sends before
// pion/turn v4.1.4 does, for what pion cannot be told:
//
//   - a wrong password (or a credential the AuthHandler refuses) is answered
//     400 Bad Request by pion; RFC 5389 section 10.2.2 says 401 Unauthorized
//     with REALM and NONCE. The rewriter checks MESSAGE-INTEGRITY with the key
//     the AuthHandler derives and, if it fails, turns pion's 400 for that
//     transaction into a 401 as it is written (udpListener.WriteTo,
//     tcpConn.Write). pion still runs its checks in its order (a stale
//     nonce is still 438).
//   - the lifetime pion grants: up to an hour if asked. An Allocate or
//     Refresh asking (or defaulting, 10 minutes) for more than
//     MaxAllocationLifetime is rewritten to ask for the cap and signed again
//     with the same key, so the client is told the lifetime it really has.
//   - ChannelBind: pion allows 16,384 channels per allocation. One that
//     would bind a new channel past MaxChannelsPerAllocation is answered 508
//     Insufficient Capacity here and never reaches pion.
//
// It serves UDP and TCP alike: a UDP listener's reads (udpListener.ReadFrom)
// and a TCP connection's frames (tcpConn.Read, one whole frame each) pass
// through it, and pion writes its responses back through the same socket
// or connection.
//
// One screen serves one pion read loop: a UDP listener's or a TCP
// connection's. The loop runs pion's handling of each request to completion
// (response written) before reading the next, so the refusal noted for a
// request is the one pion is answering when it writes. Other goroutines
// write there too (relayed data), but never a response to a request.
type requestRewriter struct {
	allocs   *allocations
	authKey  func(username, realm string, src net.Addr) ([]byte, bool)
	realm    stun.Realm
	lifetime time.Duration

	// refused is the request now in pion's hands whose credentials failed.
	refused atomic.Pointer[refusal]
}

// refusal is what a 401 for a request needs from it.
type refusal struct {
	id     [stun.TransactionIDSize]byte
	method stun.Method
	nonce  stun.Nonce
}

// pionDefaultLifetime is what pion grants when LIFETIME is absent or an hour
// or more (pion/turn v4.1.4 internal/server/util.go allocationLifeTime).
const pionDefaultLifetime = 10 * time.Minute

// request screens the STUN message p[:n] from client. It returns the length of
// the message to hand to pion (p may have been rewritten in place, never
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
		rw.refused.Store(&refusal{id: m.TransactionID, method: typ.Method, nonce: nonce})

		return n, nil
	}

	switch typ.Method {
	case stun.MethodChannelBind:
		if number, peer, ok := channelBindOf(m); ok && rw.allocs.channelRefused(client, number, peer) {
			rw.allocs.stats.channelBindsRefused.Add(1)
			if skipped, ok := rw.allocs.refusalLog.allow(); ok {
				rw.allocs.log.Info("channel bind refused: MaxChannelsPerAllocation reached",
					"client", client.client.String(), "tcp", client.tcp, "limit", rw.allocs.maxChannels,
					"refusals_not_logged", skipped)
			}

			return 0, errorReply(m, stun.CodeInsufficientCapacity, key)
		}
	case stun.MethodAllocate, stun.MethodRefresh:
		if out := rw.capLifetime(m, key); out != nil && len(out) < len(p) {
			return copy(p, out), nil
		}
	}

	return n, nil
}

// capLifetime returns m asking for MaxAllocationLifetime, signed with key,
// if m would be granted more; else nil. Attributes after MESSAGE-INTEGRITY
// other than FINGERPRINT are ignored by receivers (RFC 5389 section 15.4),
// so they are dropped.
func (rw *requestRewriter) capLifetime(m *stun.Message, key []byte) []byte {
	granted := pionDefaultLifetime
	if v, err := m.Get(stun.AttrLifetime); err == nil && len(v) == 4 {
		if d := time.Duration(binary.BigEndian.Uint32(v)) * time.Second; d < time.Hour {
			granted = d
		}
	}
	if granted <= rw.lifetime {
		return nil // including 0, a Refresh that deletes the allocation
	}
	out := new(stun.Message)
	out.Type, out.TransactionID = m.Type, m.TransactionID
	out.WriteHeader()
	for _, a := range m.Attributes {
		if a.Type == stun.AttrMessageIntegrity {
			break
		}
		if a.Type != stun.AttrLifetime {
			out.Add(a.Type, a.Value)
		}
	}
	var lt [4]byte
	binary.BigEndian.PutUint32(lt[:], uint32(rw.lifetime/time.Second)) //nolint:gosec // at most an hour
	out.Add(stun.AttrLifetime, lt[:])
	if stun.MessageIntegrity(key).AddTo(out) != nil {
		return nil
	}
	if m.Contains(stun.AttrFingerprint) && stun.Fingerprint.AddTo(out) != nil {
		return nil
	}

	return out.Raw
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

// unauthorized returns the 401 to send instead of p, if p is pion's 400
// Bad Request to the refused request; else nil.
func (rw *requestRewriter) unauthorized(p []byte) []byte {
	f := rw.refused.Load()
	if f == nil || len(p) < 20 || !bytes.Equal(p[8:20], f.id[:]) {
		return nil
	}
	if binary.BigEndian.Uint16(p[0:2]) != stun.NewType(f.method, stun.ClassErrorResponse).Value() {
		return nil
	}
	m := &stun.Message{Raw: append([]byte(nil), p...)}
	var code stun.ErrorCodeAttribute
	if m.Decode() != nil || code.GetFrom(m) != nil || code.Code != stun.CodeBadRequest {
		return nil
	}
	rw.refused.CompareAndSwap(f, nil)
	out := new(stun.Message)
	// The client's nonce passed pion's check before the credentials were
	// looked at, so it is good for the client's next try.
	if err := out.Build(stun.NewTransactionIDSetter(f.id), stun.NewType(f.method, stun.ClassErrorResponse),
		stun.CodeUnauthorized, f.nonce, rw.realm); err != nil {
		return nil
	}

	return out.Raw
}
