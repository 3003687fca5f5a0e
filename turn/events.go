package turn

import (
	"net"

	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/netkey"
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
		a.armLifetimeCap(rc)
	}
	// A record already here belongs to an allocation on the same 5-tuple whose
	// deletion event has not arrived yet (pion reports it after unlocking).
	if old, dup := a.records[key]; dup {
		a.releaseLocked(old.session, old.prefix)
	}
	// The quota's reservation becomes this allocation's count.
	prefix := netkey.Prefix(key.client.Addr())
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
