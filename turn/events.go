package turn

import (
	"net"
	"time"

	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"
)

// eventHandler keeps allocations in step with pion's allocations. pion calls
// these synchronously from its request and relay goroutines.
func (a *allocations) eventHandler() pionturn.EventHandler {
	return pionturn.EventHandler{
		OnAuth:              a.onAuth,
		OnAllocationCreated: a.onAllocationCreated,
		OnAllocationDeleted: a.onAllocationDeleted,
		OnAllocationError:   a.onAllocationError,
		OnChannelCreated:    a.onChannelCreated,
		OnChannelDeleted:    a.onChannelDeleted,
	}
}

// onAuth reports message-integrity failures, the one refusal the AuthHandler
// cannot see: pion checks the password after the handler returned the key.
// An authenticated Refresh (the AuthHandler refuses ended sessions) starts
// the allocation's lifetime cap again.
func (a *allocations) onAuth(src, _ net.Addr, _, username, _, method string, verdict bool) {
	if !verdict {
		a.stats.authFailures[authBadIntegrity].Add(1)
		a.log.Debug("auth refused", "reason", "message integrity", "method", method,
			"username", username, "client", src.String())

		return
	}
	if method == refreshMethod {
		a.refreshed(src)
	}
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
// lifetime cap. pion v4.1.4 cannot be told a cap (it grants up to an hour);
// the rewriter rewrites the lifetime asked for, over UDP and TCP, so pion's
// own timer and what the client is told agree with this one, which holds
// the cap should a request reach pion past the rewriter.
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

// onAllocationError settles the quota reservation of an Allocate that
// failed after the QuotaHandler granted it (pion reports every failed
// request here, from the goroutine that handled it).
func (a *allocations) onAllocationError(src, _ net.Addr, _, _ string) {
	key, ok := clientKey(src)
	if !ok {
		return
	}
	a.mu.Lock()
	a.settleLocked(key)
	a.mu.Unlock()
}

func (a *allocations) onAllocationCreated(src, _ net.Addr, _, username, _ string, relayAddr net.Addr, _ int) {
	key, ok := clientKey(src)
	if !ok {
		return
	}
	_, session, _ := parseUsername(username) // the auth handler accepted it, so it parses
	var port uint16
	if ra, ok := relayAddr.(*net.UDPAddr); ok {
		port = uint16(ra.Port) //nolint:gosec // a UDP port fits
	}

	a.mu.Lock()
	rc := a.pending[port]
	if rc != nil {
		delete(a.pending, port)
		rc.session = session
		rc.client, rc.udpClient = key.client, !key.tcp
		a.relays[port] = rc
		if rc.udpClient {
			a.clients[key.client] = rc
		}
		a.bySession[session] = append(a.bySession[session], rc)
		rc.expiry = time.AfterFunc(a.lifetime, func() { a.expire(rc) })
	}
	// A record already here belongs to an allocation on the same 5-tuple whose
	// deletion event has not arrived yet (pion reports it after unlocking).
	if old, dup := a.records[key]; dup {
		a.releaseLocked(old.session, old.prefix)
	}
	// The quota's reservation becomes this allocation's count.
	prefix := ipPrefix(key.client.Addr())
	a.settleLocked(key)
	a.countLocked(session, prefix)
	a.records[key] = allocRecord{session: session, username: username, prefix: prefix, relay: rc}
	a.mu.Unlock()
	a.stats.allocsCreated.Add(1)

	// The session may have ended after the AuthHandler let this Allocate in
	// and before the allocation was listed under it, unseen by closeEnded.
	a.ends.add(session)

	a.log.Debug("allocation created", "session", session, "client", src.String(),
		"relay", relayAddr.String(), "tcp", key.tcp)
}

func (a *allocations) onAllocationDeleted(src, _ net.Addr, _, username, _ string) {
	key, ok := clientKey(src)
	if !ok {
		return
	}
	a.mu.Lock()
	rec, ok := a.records[key]
	// pion closes the relay socket before reporting the deletion, so an open
	// socket here means the record is a newer allocation on the same 5-tuple.
	if ok && (rec.relay == nil || rec.relay.closed.Load()) {
		delete(a.records, key)
		a.releaseLocked(rec.session, rec.prefix)
	}
	a.mu.Unlock()

	_, session, _ := parseUsername(username)
	a.log.Debug("allocation deleted", "session", session, "client", src.String(), "tcp", key.tcp)
}
