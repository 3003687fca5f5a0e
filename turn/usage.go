package turn

import (
	"cmp"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"
)

// What each allocation relayed, for the operator's view (the admin page):
// bytes per room and per player are sums over allocations, taken when asked.
// Counting per allocation costs one atomic add per relayed packet on a
// counter only that allocation's traffic touches (admit, which every relay
// path already calls); turn knows no rooms, so the caller groups allocations
// by Allocation.Session.

// usage is one allocation's identity and relayed byte count.
type usage struct {
	id      uint64    // unique for the server's life: a relay port is reused, this is not
	created time.Time // when its relay socket opened
	relayed atomic.Uint64
}

// Allocation is one live allocation as an operator sees it.
type Allocation struct {
	// ID names the allocation across calls: a caller working out a rate
	// from two calls subtracts Relayed of the same ID.
	ID      uint64
	Session string         // the lobby session its credentials name
	Client  netip.AddrPort // the client's transport address
	// Transport is how the client reaches TURN: "udp", "tcp" or "tls".
	Transport string
	Relay     netip.AddrPort // the advertised relay address
	Created   time.Time
	// Relayed counts the payload bytes its client sent that were relayed
	// (not those dropped by the policy or over the bandwidth limit). Every
	// relayed packet is counted once, on its sender's allocation.
	Relayed uint64
}

// Allocations lists the live allocations by ID, oldest first.
func (s *Server) Allocations() []Allocation {
	r := s.allocs
	r.mu.RLock()
	out := make([]Allocation, 0, len(r.records))
	for key, rec := range r.records {
		c := rec.relay
		if c == nil || c.closed.Load() {
			continue // its deletion is on the way
		}
		transport := "udp"
		if key.tcp {
			transport = "tcp" // or tls, told apart below
		}
		out = append(out, Allocation{
			ID: c.usage.id, Session: rec.session, Client: key.client, Transport: transport,
			Relay: netip.AddrPortFrom(r.public, c.port), Created: c.usage.created, Relayed: c.usage.relayed.Load(),
		})
	}
	r.mu.RUnlock()
	// allocations keys stream allocations by client address alone; the
	// TLS listener knows which connections are its own (as Stats counts them).
	if s.tls != nil {
		for i := range out {
			if out[i].Transport == "tcp" && s.tls.tracking([]netip.AddrPort{out[i].Client}) == 1 {
				out[i].Transport = "tls"
			}
		}
	}
	slices.SortFunc(out, func(a, b Allocation) int { return cmp.Compare(a.ID, b.ID) })

	return out
}
