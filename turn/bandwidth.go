package turn

import (
	"context"
	"log/slog"
	"math"
	"sync/atomic"
	"time"
)

// Bandwidth per allocation. Every relayed packet is charged to the allocation
// whose client sent it, on whichever path carries it (the ChannelData fast
// path, pion's relay WriteTo, a relay socket's kernel read), before it is
// handed on. Packets over the limit are dropped: game traffic is unreliable
// UDP that the game already survives losing, and queueing it would only add
// latency. Charging the sender bounds what one credentialed client can push
// through us; a receiver gets at most the sum of its senders' limits.

// Bandwidth defaults applied by New.
const (
	// DefaultMaxBandwidth is 1 MiB/s of relayed payload per allocation. One
	// allocation carries one peer connection, so on the host it is one
	// client's stream: 60 Hz snapshots of 8 players run at 30–60 KB/s
	// delta-coded and a few hundred KB/s as full snapshots (≈ 4 KB × 60 =
	// 240 KB/s), plus DTLS and SCTP overhead. 1 MiB/s leaves 4× headroom over
	// the heavy case while a client abusing its credentials (up to
	// MaxAllocationsPerSession allocations) stays bounded.
	DefaultMaxBandwidth = 1 << 20
	// NoBandwidthLimit as Config.MaxBandwidth turns the limit off.
	NoBandwidthLimit = -1
	// defaultBurstDivisor makes the default burst a quarter second at the
	// full rate (256 KiB by default): enough for a join-time state transfer on
	// the reliable channel or an SCTP retransmission burst, without letting a
	// flood through for long.
	defaultBurstDivisor = 4
	// minBandwidthBurst is one packet of the largest size relayed: a smaller
	// burst would drop such packets forever.
	minBandwidthBurst = packetCap
	// maxBandwidth and maxBandwidthBurst (1 TiB/s, 1 GiB) keep the
	// fixed-point arithmetic below far from overflow.
	maxBandwidth      = 1 << 40
	maxBandwidthBurst = 1 << 30
)

// bandwidthLogEvery bounds the "limit reached" lines to one per allocation
// per interval: a flood must not turn into a log flood.
const bandwidthLogEvery = 10 * time.Second

// maxCharge caps the size one packet is charged at, so n·nsPerByte stays
// under 2^62 even at 1 byte/s; nothing larger is relayed (inbox.put drops it).
const maxCharge = 1 << 16

// bandwidthPolicy is the limit shared by all allocations of a server. The
// bucket is kept as GCRA (a token bucket stated as one timestamp), so each
// allocation's state is a single atomic int64 and a packet costs one clock
// read, one multiplication and one compare-and-swap.
type bandwidthPolicy struct {
	limited bool
	rate    int64 // bytes per second, for logs
	burst   int64 // bytes, for logs
	// nsPerByte is the time one byte of budget takes to refill, in 16.16
	// fixed point so rates above 1 GB/s keep their precision.
	nsPerByte int64
	// tolerance is the burst expressed as time: how far ahead of now an
	// allocation's budget may be spent.
	tolerance int64
	// epoch is the zero of the allocations' timestamps; time.Since on it
	// reads only the monotonic clock.
	epoch time.Time
}

func newBandwidthPolicy(rate, burst int64) bandwidthPolicy {
	p := bandwidthPolicy{epoch: time.Now()}
	if rate <= 0 {
		return p
	}
	p.limited, p.rate, p.burst = true, rate, burst
	p.nsPerByte = int64(math.Round(float64(time.Second<<16) / float64(rate)))
	// In float: burst·nsPerByte can pass 2^63 at low rates; the result,
	// at most 2^30 s in ns, cannot.
	p.tolerance = int64(float64(burst) * float64(p.nsPerByte) / (1 << 16))

	return p
}

// bandwidthLimit is one allocation's bucket and drop counters.
type bandwidthLimit struct {
	// tat is the GCRA theoretical arrival time in ns since the policy's
	// epoch: when the budget spent so far will have refilled.
	tat            atomic.Int64
	droppedPackets atomic.Uint64
	droppedBytes   atomic.Uint64
	lastLog        atomic.Int64 // ns since epoch of the last "limit reached" line; 0: none
}

// allow charges n bytes at time now (ns since epoch) and reports whether they
// fit the budget. A refused packet is not charged, so a sender at k times the
// limit still gets the limit through.
func (p *bandwidthPolicy) allow(l *bandwidthLimit, n int, now int64) bool {
	cost := (int64(min(n, maxCharge)) * p.nsPerByte) >> 16
	for {
		tat := l.tat.Load()
		next := max(tat, now) + cost
		if next-now > p.tolerance {
			return false
		}
		if l.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}

// admit charges a packet of n bytes sent by c's client on any relay path.
// It reports false, counting and maybe logging the drop, when the packet is
// over c's bandwidth. What it lets through is counted for c's usage.
func (a *allocations) admit(c *relayConn, n int) bool {
	if a.bw.limited {
		now := int64(time.Since(a.bw.epoch))
		if !a.bw.allow(&c.bw, n, now) {
			a.overBandwidth(c, n, now)

			return false
		}
	}
	c.usage.relayed.Add(uint64(n)) //nolint:gosec // a length

	return true
}

// overBandwidth counts a packet dropped for c's bandwidth and logs at most
// one line per allocation every bandwidthLogEvery.
func (a *allocations) overBandwidth(c *relayConn, n int, now int64) {
	a.droppedBandwidth.Add(1)
	a.droppedBandwidthBytes.Add(uint64(n)) //nolint:gosec // a length
	packets := c.bw.droppedPackets.Add(1)
	dropped := c.bw.droppedBytes.Add(uint64(n)) //nolint:gosec // a length
	last := c.bw.lastLog.Load()
	if (last != 0 && now-last < int64(bandwidthLogEvery)) || !c.bw.lastLog.CompareAndSwap(last, max(now, 1)) {
		return
	}
	if !a.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	a.mu.RLock()
	session := c.session
	a.mu.RUnlock()
	a.log.Info("relay bandwidth limit reached, dropping packets", "session", session, "relay_port", c.port,
		"limit_bytes_per_sec", a.bw.rate, "burst_bytes", a.bw.burst,
		"dropped_packets", packets, "dropped_bytes", dropped)
}
