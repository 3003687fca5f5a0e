package turn

import (
	"encoding/binary"
	"net"
	"time"

	"github.com/pion/stun/v3"
)

// Patch: allocations live at most MaxAllocationLifetime unrefreshed.
//
// What pion does: pion/turn v4.1.4 grants whatever LIFETIME an Allocate or
// Refresh asks for below an hour, and 10 minutes otherwise
// (internal/server/util.go allocationLifeTime), with no setting to lower
// it; v5.1.0's ServerConfig.AllocationLifetime only sets the default, a
// client's ask still wins. No upstream issue was found.
//
// How: requestRewriter.request rewrites an authenticated Allocate or Refresh
// that would be granted more than the cap to ask for the cap, signed again
// with the same key (capLifetime), so pion's own timer and the LIFETIME the
// client is told agree with the cap. A timer per allocation (armLifetimeCap,
// restarted by refreshed on every authenticated Refresh) closes it at the
// cap should a request ever reach pion past the rewriter.
//
// Canary: TestUpstreamCanary_Lifetime fails once plain pion grants less than
// asked or its ServerConfig gains a lifetime setting. If that setting caps
// what a client may ask, set it to MaxAllocationLifetime and delete this
// file and its test, the capLifetime call in rewriter.go, and the
// armLifetimeCap and refreshed calls and relayConn.expiry.

// pionDefaultLifetime is what pion grants when LIFETIME is absent or an hour
// or more (pion/turn v4.1.4 internal/server/util.go allocationLifeTime).
const pionDefaultLifetime = 10 * time.Minute

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

// armLifetimeCap starts the timer that closes rc at the lifetime cap unless
// a Refresh restarts it. Caller holds allocs.mu.
func (a *allocations) armLifetimeCap(rc *relayConn) {
	rc.expiry = time.AfterFunc(a.lifetime, func() { a.expire(rc) })
}

// refreshMethod is how pion names a Refresh to OnAuth.
var refreshMethod = stun.MethodRefresh.String() //nolint:gochecknoglobals // a constant pion only offers as a method

// refreshed restarts the lifetime cap of src's allocation. A Refresh with
// lifetime 0 lands here too, just before pion deletes the allocation.
func (a *allocations) refreshed(src net.Addr) {
	key, ok := clientKey(src)
	if !ok {
		return
	}
	a.mu.RLock()
	if rec, ok := a.records[key]; ok && rec.relay != nil && rec.relay.expiry != nil {
		rec.relay.expiry.Reset(a.lifetime)
	}
	a.mu.RUnlock()
}

// expire closes an allocation its client did not refresh within the
// lifetime cap.
func (a *allocations) expire(c *relayConn) {
	if c.closed.Load() {
		return // a Refresh raced the close and re-armed the timer
	}
	a.mu.RLock()
	session := c.session
	a.mu.RUnlock()
	a.log.Debug("allocation closed: not refreshed within the lifetime cap", "session", session,
		"relay", c.public.String())
	_ = c.Close()
}
