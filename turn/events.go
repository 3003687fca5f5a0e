package turn

import (
	"net"
	"time"

	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"
)

// eventHandler keeps the registry in step with pion's allocations. pion calls
// these synchronously from its request and relay goroutines.
func (r *registry) eventHandler() pionturn.EventHandler {
	return pionturn.EventHandler{
		OnAuth:              r.onAuth,
		OnAllocationCreated: r.onAllocationCreated,
		OnAllocationDeleted: r.onAllocationDeleted,
		OnAllocationError:   r.onAllocationError,
		OnChannelCreated:    r.onChannelCreated,
		OnChannelDeleted:    r.onChannelDeleted,
	}
}

// onAuth reports message-integrity failures, the one refusal the AuthHandler
// cannot see: pion checks the password after the handler returned the key.
// An authenticated Refresh (the AuthHandler refuses ended sessions) starts
// the allocation's lifetime cap again.
func (r *registry) onAuth(src, _ net.Addr, _, username, _, method string, verdict bool) {
	if !verdict {
		r.stats.authFailures[authBadIntegrity].Add(1)
		r.log.Debug("auth refused", "reason", "message integrity", "method", method,
			"username", username, "client", src.String())

		return
	}
	if method == refreshMethod {
		r.refreshed(src)
	}
}

// refreshMethod is how pion names a Refresh to OnAuth.
var refreshMethod = stun.MethodRefresh.String() //nolint:gochecknoglobals // a constant pion only offers as a method

// refreshed restarts the lifetime cap of src's allocation. A Refresh with
// lifetime 0 lands here too, just before pion deletes the allocation.
func (r *registry) refreshed(src net.Addr) {
	key, ok := clientKey(src)
	if !ok {
		return
	}
	r.mu.RLock()
	if rec, ok := r.allocs[key]; ok && rec.relay != nil && rec.relay.expiry != nil {
		rec.relay.expiry.Reset(r.lifetime)
	}
	r.mu.RUnlock()
}

// expire closes an allocation its client did not refresh within the
// lifetime cap. pion v4.1.4 cannot be told a cap (it grants up to an hour);
// the screen rewrites the lifetime asked for, over UDP and TCP, so pion's
// own timer and what the client is told agree with this one, which holds
// the cap should a request reach pion unscreened.
func (r *registry) expire(c *relayConn) {
	if c.closed.Load() {
		return // a Refresh raced the close and re-armed the timer
	}
	r.mu.RLock()
	session := c.session
	r.mu.RUnlock()
	r.log.Debug("allocation closed: not refreshed within the lifetime cap", "session", session,
		"relay", c.public.String())
	_ = c.Close()
}

// onAllocationError settles the quota reservation of an Allocate that
// failed after the QuotaHandler granted it (pion reports every failed
// request here, from the goroutine that handled it).
func (r *registry) onAllocationError(src, _ net.Addr, _, _ string) {
	key, ok := clientKey(src)
	if !ok {
		return
	}
	r.mu.Lock()
	r.settleLocked(key)
	r.mu.Unlock()
}

func (r *registry) onAllocationCreated(src, _ net.Addr, _, username, _ string, relayAddr net.Addr, _ int) {
	key, ok := clientKey(src)
	if !ok {
		return
	}
	_, session, _ := parseUsername(username) // the auth handler accepted it, so it parses
	var port uint16
	if ra, ok := relayAddr.(*net.UDPAddr); ok {
		port = uint16(ra.Port) //nolint:gosec // a UDP port fits
	}

	r.mu.Lock()
	rc := r.pending[port]
	if rc != nil {
		delete(r.pending, port)
		rc.session = session
		rc.client, rc.udpClient = key.client, !key.tcp
		r.relays[port] = rc
		if rc.udpClient {
			r.clients[key.client] = rc
		}
		r.bySession[session] = append(r.bySession[session], rc)
		rc.expiry = time.AfterFunc(r.lifetime, func() { r.expire(rc) })
	}
	// A record already here belongs to an allocation on the same 5-tuple whose
	// deletion event has not arrived yet (pion reports it after unlocking).
	if old, dup := r.allocs[key]; dup {
		r.releaseLocked(old.session, old.prefix)
	}
	// The quota's reservation becomes this allocation's count.
	prefix := ipPrefix(key.client.Addr())
	r.settleLocked(key)
	r.countLocked(session, prefix)
	r.allocs[key] = allocRecord{session: session, username: username, prefix: prefix, relay: rc}
	r.mu.Unlock()
	r.stats.allocsCreated.Add(1)

	// The session may have ended after the AuthHandler let this Allocate in
	// and before the allocation was listed under it, unseen by closeEnded.
	r.ends.add(session)

	r.log.Debug("allocation created", "session", session, "client", src.String(),
		"relay", relayAddr.String(), "tcp", key.tcp)
}

func (r *registry) onAllocationDeleted(src, _ net.Addr, _, username, _ string) {
	key, ok := clientKey(src)
	if !ok {
		return
	}
	r.mu.Lock()
	rec, ok := r.allocs[key]
	// pion closes the relay socket before reporting the deletion, so an open
	// socket here means the record is a newer allocation on the same 5-tuple.
	if ok && (rec.relay == nil || rec.relay.closed.Load()) {
		delete(r.allocs, key)
		r.releaseLocked(rec.session, rec.prefix)
	}
	r.mu.Unlock()

	_, session, _ := parseUsername(username)
	r.log.Debug("allocation deleted", "session", session, "client", src.String(), "tcp", key.tcp)
}
