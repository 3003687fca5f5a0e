package signaling

import (
	"net/netip"
	"sync"
	"time"

	"github.com/hostrelay/hostrelay/internal/netkey"
)

// A network whose connection was just closed for a flood (frames or
// messages past their budget, frames before hello) has its next upgrades
// refused for a while: closing the connection alone left the flood free to
// reconnect at once, and each reconnect (an upgrade, a hello, a session)
// costs more than the frames the wire meter lets through. With floods from
// one address reconnecting 35 times a second, the soak's players' p99 went
// up 2.2 times on a quiet machine. The hold doubles with each flood close
// within floodMemory, from firstFloodHold up to maxFloodHold. The network
// is netkey.Of's: an IPv4 address or an IPv6 /64.
const (
	firstFloodHold = time.Second
	maxFloodHold   = time.Minute
	floodMemory    = 10 * time.Minute
)

// floodHolds are the networks held back after a flood close.
type floodHolds struct {
	mu        sync.Mutex
	nets      map[netip.Addr]*floodHold
	lastPrune time.Time
}

type floodHold struct {
	until, last time.Time
	hold        time.Duration
	// told: an upgrade was answered 429 with Retry-After during this hold,
	// so the network has heard why; its next connections in the hold may be
	// closed at accept (refuseAtAccept).
	told bool
}

func newFloodHolds() floodHolds { return floodHolds{nets: make(map[netip.Addr]*floodHold)} }

// closed notes a flood close from ip at now and returns how long ip is
// held back.
func (f *floodHolds) closed(ip netip.Addr, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := netkey.Of(ip)
	h := f.nets[key]
	switch {
	case h == nil:
		h = &floodHold{hold: firstFloodHold}
		f.nets[key] = h
	case now.Sub(h.last) > floodMemory:
		h.hold = firstFloodHold
	case now.Before(h.until):
		// Closes of connections opened before the hold began: one hold.
	default:
		h.hold = min(2*h.hold, maxFloodHold)
	}
	if !now.Before(h.until) {
		h.told = false // a new hold: its first upgrade is told why
	}
	h.last = now
	h.until = now.Add(h.hold)
	f.pruneLocked(now)
	return h.hold
}

// held returns how long ip is still held back at now (0: not held).
func (f *floodHolds) held(ip netip.Addr, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.activeLocked(ip, now); h != nil {
		return h.until.Sub(now)
	}
	return 0
}

// tell is held, and notes that ip is being told so.
func (f *floodHolds) tell(ip netip.Addr, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.activeLocked(ip, now)
	if h == nil {
		return 0
	}
	h.told = true
	return h.until.Sub(now)
}

// refuseAtAccept reports whether ip is held back at now and was told so
// during this hold.
func (f *floodHolds) refuseAtAccept(ip netip.Addr, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.activeLocked(ip, now)
	return h != nil && h.told
}

// activeLocked is ip's hold if it lasts past now, else nil.
func (f *floodHolds) activeLocked(ip netip.Addr, now time.Time) *floodHold {
	h := f.nets[netkey.Of(ip)]
	if h == nil || !now.Before(h.until) {
		return nil
	}
	return h
}

// pruneLocked forgets networks whose last flood is older than floodMemory.
func (f *floodHolds) pruneLocked(now time.Time) {
	if now.Sub(f.lastPrune) < time.Minute {
		return
	}
	f.lastPrune = now
	for k, h := range f.nets {
		if now.Sub(h.last) > floodMemory {
			delete(f.nets, k)
		}
	}
}

// RefuseAtAccept reports whether a new connection from ip should be closed
// as soon as it is accepted, before any HTTP is read: ip's network is held
// back after a flood and one of its upgrades was already answered 429 with
// Retry-After during this hold. A flooder that reconnects regardless then
// costs the server an accept and a reset, not a goroutine, a request read
// and a reply (with eight such flooders reconnecting 80 times a second, the
// soak's players' game p99 rose 1.5 times); a client that honours
// Retry-After has been told why. The HTTP listener calls it for every
// connection not from a trusted proxy (whose clients' addresses are only
// known from the request), and a refusal is counted as flood_hold_accept.
func (h *Hub) RefuseAtAccept(ip netip.Addr) bool {
	if !h.floods.refuseAtAccept(ip, h.cfg.Now()) {
		return false
	}
	h.counters.limited(limitFloodHoldAccept)
	return true
}

// floodClosed holds back remote's network after its connection was closed
// for a flood.
func (h *Hub) floodClosed(remote netip.Addr) {
	hold := h.floods.closed(remote, h.cfg.Now())
	h.log.Info("network held back after a flood", "remote", remote, "hold", hold)
}
