package turn

import (
	"net"

	pionturn "github.com/pion/turn/v4"
)

// eventHandler keeps the registry in step with pion's allocations. pion calls
// these synchronously from its request and relay goroutines.
func (r *registry) eventHandler() pionturn.EventHandler {
	return pionturn.EventHandler{
		OnAuth:              r.onAuth,
		OnAllocationCreated: r.onAllocationCreated,
		OnAllocationDeleted: r.onAllocationDeleted,
		OnChannelCreated:    r.onChannelCreated,
		OnChannelDeleted:    r.onChannelDeleted,
	}
}

// onAuth reports message-integrity failures, the one refusal the AuthHandler
// cannot see: pion checks the password after the handler returned the key.
func (r *registry) onAuth(src, _ net.Addr, _, username, _, method string, verdict bool) {
	if !verdict {
		r.log.Debug("auth refused", "reason", "message integrity", "method", method,
			"username", username, "client", src.String())
	}
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
	}
	// A record already here belongs to an allocation on the same 5-tuple whose
	// deletion event has not arrived yet (pion reports it after unlocking).
	if old, dup := r.allocs[key]; dup {
		r.releaseLocked(old.session)
	}
	r.allocs[key] = allocRecord{session: session, username: username, relay: rc}
	r.perSession[session]++
	r.mu.Unlock()

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
		r.releaseLocked(rec.session)
	}
	r.mu.Unlock()

	_, session, _ := parseUsername(username)
	r.log.Debug("allocation deleted", "session", session, "client", src.String(), "tcp", key.tcp)
}

func (r *registry) releaseLocked(session string) {
	if r.perSession[session] <= 1 {
		delete(r.perSession, session)

		return
	}
	r.perSession[session]--
}
