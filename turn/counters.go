package turn

import (
	"sync"
	"sync/atomic"
)

// Counters for metrics, read only by Stats. The per-packet ones are plain
// atomic adds on memory no other hot path touches: each UDP listener's read
// loop counts its fast-path packets in a block of its own, summed at read
// time, so the fast path shares no cache line across cores for them.

// cacheLine pads the per-packet counters: an add must not invalidate the
// line holding fields other cores read on every packet (allocations.bw).
const cacheLine = 64

// relayCounters counts relayed packets and their payload bytes.
type relayCounters struct {
	_       [cacheLine]byte
	packets atomic.Uint64
	bytes   atomic.Uint64
	_       [cacheLine - 16]byte
}

func (c *relayCounters) add(n int) {
	c.packets.Add(1)
	c.bytes.Add(uint64(n)) //nolint:gosec // a length
}

func (c *relayCounters) load() Traffic {
	return Traffic{Packets: c.packets.Load(), Bytes: c.bytes.Load()}
}

// Traffic is a count of relayed packets and their payload bytes (TURN
// framing not included).
type Traffic struct {
	Packets uint64
	Bytes   uint64
}

// allocationCounters are the totals of allocations since start.
type allocationCounters struct {
	// other counts packets relayed through pion (Send indications, TCP
	// clients, a peer with no channel back), as the receiving allocation's
	// relay socket hands them to pion to send on (relayConn.ReadFrom).
	other *relayCounters

	allocsCreated       atomic.Uint64
	refusedSession      atomic.Uint64 // Allocate answered 486: the session's quota
	refusedIP           atomic.Uint64 // Allocate answered 486: the client IP's quota
	refusedCapacity     atomic.Uint64 // Allocate answered 508: MaxAllocations
	refusedPorts        atomic.Uint64 // Allocate answered 508: no free port in RelayPorts
	channelBindsRefused atomic.Uint64 // ChannelBind answered 508: MaxChannelsPerAllocation
	authFailures        [authRefusals]atomic.Uint64

	mu        sync.Mutex
	listeners []*relayCounters // each UDP listener's fast path
}

func newAllocationCounters() *allocationCounters {
	return &allocationCounters{other: new(relayCounters)}
}

// newListener returns the fast-path counters of one more UDP listener.
func (c *allocationCounters) newListener() *relayCounters {
	l := new(relayCounters)
	c.mu.Lock()
	c.listeners = append(c.listeners, l)
	c.mu.Unlock()

	return l
}

// fast sums the listeners' fast-path counters.
func (c *allocationCounters) fast() Traffic {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t Traffic
	for _, l := range c.listeners {
		lt := l.load()
		t.Packets += lt.Packets
		t.Bytes += lt.Bytes
	}

	return t
}

// AuthFailureReasons are the reasons Stats.AuthFailures counts by:
// wrong_realm, malformed_username, expiry_too_far (beyond MaxTTL),
// session_not_live (ended or unknown session), expired (and no allocation
// of its own to keep alive) and bad_integrity (a wrong password).
func AuthFailureReasons() []string {
	out := make([]string, 0, authRefusals-1)
	for a := authOK + 1; a < authRefusals; a++ {
		out = append(out, authRefusalNames[a].label)
	}

	return out
}

// AllocationRefusalReasons are the reasons Stats.AllocationsRefused counts
// by: session_quota and ip_quota (486 Allocation Quota Reached), capacity
// and ports (508 Insufficient Capacity: MaxAllocations, and no free port
// in RelayPorts).
func AllocationRefusalReasons() []string {
	return []string{"session_quota", "ip_quota", "capacity", "ports"}
}

// fill adds the allocations counters to st.
func (c *allocationCounters) fill(st *Stats) {
	st.RelayedFast = c.fast()
	st.RelayedOther = c.other.load()
	st.AllocationsCreated = c.allocsCreated.Load()
	st.AllocationsRefused = map[string]uint64{
		"session_quota": c.refusedSession.Load(),
		"ip_quota":      c.refusedIP.Load(),
		"capacity":      c.refusedCapacity.Load(),
		"ports":         c.refusedPorts.Load(),
	}
	st.ChannelBindsRefused = c.channelBindsRefused.Load()
	st.AuthFailures = make(map[string]uint64, authRefusals-1)
	for a := authOK + 1; a < authRefusals; a++ {
		st.AuthFailures[authRefusalNames[a].label] = c.authFailures[a].Load()
	}
}
