package turn

import (
	"bytes"
	"encoding/binary"

	"github.com/pion/stun/v3"
)

// Patch: a refused credential is answered 401 Unauthorized, not 400.
//
// What pion does: pion/turn v4.1.4 (and v5.1.0) answers 400 Bad Request to
// an authenticated request whose credentials fail, whether the AuthHandler
// refused the username or MESSAGE-INTEGRITY did not check
// (internal/server/util.go authenticateRequest). RFC 5389 section 10.2.2
// asks for 401 with REALM and NONCE, and browsers read a 400 as a broken
// server rather than a stale credential. No upstream issue was found; no
// hook can change the response (the AuthHandler and OnAuth only see it
// happen).
//
// How: requestRewriter.request checks the credentials itself and notes the
// refused request (noteRefused); when pion writes its 400 for that
// transaction, response swaps in a 401 (unauthorized). pion still runs its
// checks in its order, so a stale nonce is still 438.
//
// Canary: TestUpstreamCanary_Unauthorized fails once plain pion answers
// 401. Then delete this file and its test, the refused field and the
// noteRefused call in rewriter.go, and the response calls in
// udpListener.WriteTo and tcpConn.Write.

// refusal is what a 401 for a request needs from it.
type refusal struct {
	id     [stun.TransactionIDSize]byte
	method stun.Method
	nonce  stun.Nonce
}

// noteRefused remembers request m, whose credentials failed, until pion
// answers it.
func (rw *requestRewriter) noteRefused(m *stun.Message, nonce stun.Nonce) {
	rw.refused.Store(&refusal{id: m.TransactionID, method: m.Type.Method, nonce: nonce})
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
