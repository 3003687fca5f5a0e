package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// counters are the soak's player-side figures. Failures are what a player
// would see; the rest is volume, to tell a quiet run from a broken one.
type counters struct {
	// Live gauges, sampled into the table.
	players atomic.Int64 // lobby sessions open
	peers   atomic.Int64 // open peer connections, each end counted

	// Churn performed.
	joins, leaves, rejoins, resumesAsked, migrations, cycles atomic.Int64

	// Outcomes.
	resumed    atomic.Int64 // Resumed events
	opens      atomic.Int64 // expected channel opens that happened in time
	gameSent   atomic.Int64
	gameRecv   atomic.Int64
	eventsSent atomic.Int64
	eventsRecv atomic.Int64
	sdkDropped atomic.Int64 // game messages the SDK dropped: our reader was late
	// Lobby probes that failed outside a cut (a leave racing the probe).
	probeErrors atomic.Int64
	// Sends that failed because the peer had just closed the connection
	// (PeerClosed followed): what a game sees when a player leaves.
	sendsOnClosing atomic.Int64

	// Player-visible failures.
	joinRefused   atomic.Int64 // JoinRoom or CreateRoom refused or failed
	resumeFailed  atomic.Int64 // a cut lobby connection that did not resume its seat
	openTimeouts  atomic.Int64 // channels not open within the bound (each end counts)
	peerFailed    atomic.Int64 // PeerClosed with an error (ICE failed, signalling failed)
	roomLost      atomic.Int64 // a room ended for a player who did not leave it
	migrateFailed atomic.Int64 // the host left a migrating room and nobody took over
	stalls        atomic.Int64 // an open link that carried nothing for the stall bound
	gameLost      atomic.Int64 // game packets missing between ones that arrived
	eventsLost    atomic.Int64 // reliable messages missing or out of order
	sendErrors    atomic.Int64 // Send on an open peer failed

	mu      sync.Mutex
	refused map[string]int // joinRefused by error code or message
	notes   []string       // the first few failures, described
}

func newCounters() *counters { return &counters{refused: map[string]int{}} }

// maxNotes bounds the failure descriptions kept for the report.
const maxNotes = 20

func (c *counters) note(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.notes) < maxNotes {
		c.notes = append(c.notes, fmt.Sprintf(format, args...))
	}
}

func (c *counters) refusal(why string) {
	c.joinRefused.Add(1)
	c.mu.Lock()
	c.refused[why]++
	c.mu.Unlock()
}

// failures lists each player-visible failure count by name.
func (c *counters) failures() []namedCount {
	return []namedCount{
		{"joins refused", c.joinRefused.Load()},
		{"resume_failed (seat lost after a cut)", c.resumeFailed.Load()},
		{"channels not open in time (each end)", c.openTimeouts.Load()},
		{"peer connections failed", c.peerFailed.Load()},
		{"rooms lost unasked", c.roomLost.Load()},
		{"host migrations that did not happen", c.migrateFailed.Load()},
		{"open links that went silent", c.stalls.Load()},
		{"reliable messages lost or reordered", c.eventsLost.Load()},
		{"sends failed on a connection still open", c.sendErrors.Load()},
	}
}

type namedCount struct {
	name string
	n    int64
}

// logCounter is the SDK's slog handler: it counts warnings and errors by
// message (the report lists them) and drops the rest.
type logCounter struct {
	mu     *sync.Mutex
	counts map[string]int
}

func newLogCounter() *logCounter { return &logCounter{mu: &sync.Mutex{}, counts: map[string]int{}} }

func (h *logCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *logCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.counts[r.Message]++
	h.mu.Unlock()
	return nil
}

func (h *logCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCounter) WithGroup(string) slog.Handler      { return h }

// top returns the n most frequent messages, most frequent first.
func (h *logCounter) top(n int) []namedCount {
	h.mu.Lock()
	defer h.mu.Unlock()
	return topCounts(h.counts, n)
}

func topCounts(m map[string]int, n int) []namedCount {
	out := make([]namedCount, 0, len(m))
	for k, v := range m {
		out = append(out, namedCount{k, int64(v)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].name < out[j].name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// hist is a latency histogram with 16 buckets per doubling from 1 µs
// (4.4 % wide), safe for concurrent use. A soak records millions of game
// packets: keeping them all would itself look like a leak.
type hist struct {
	mu      sync.Mutex
	buckets []uint64
	n       uint64
}

const histPerOctave = 16

func bucketOf(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us < 1 {
		return 0
	}
	return int(math.Log2(us)*histPerOctave) + 1
}

// upperEdge is the largest latency bucket i holds.
func upperEdge(i int) time.Duration {
	if i == 0 {
		return time.Microsecond
	}
	return time.Duration(math.Exp2(float64(i)/histPerOctave) * float64(time.Microsecond))
}

func (h *hist) add(d time.Duration) {
	i := bucketOf(d)
	h.mu.Lock()
	if i >= len(h.buckets) {
		h.buckets = append(h.buckets, make([]uint64, i+1-len(h.buckets))...)
	}
	h.buckets[i]++
	h.n++
	h.mu.Unlock()
}

// merge adds o's timings to h.
func (h *hist) merge(o *hist) {
	o.mu.Lock()
	b, n := slices.Clone(o.buckets), o.n
	o.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(b) > len(h.buckets) {
		h.buckets = append(h.buckets, make([]uint64, len(b)-len(h.buckets))...)
	}
	for i, c := range b {
		h.buckets[i] += c
	}
	h.n += n
}

func (h *hist) count() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// quantile returns the q-quantile (0..1) to its bucket's upper edge.
func (h *hist) quantile(q float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return 0
	}
	want := min(uint64(q*float64(h.n)), h.n-1)
	var seen uint64
	for i, b := range h.buckets {
		seen += b
		if seen > want {
			return upperEdge(i)
		}
	}
	return upperEdge(len(h.buckets) - 1)
}

// quantiles formats p50/p99/max-bucket of h for the report.
func (h *hist) String() string {
	if h.count() == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %s, p99 %s, p99.9 %s (n=%d)", roundDur(h.quantile(0.5)), roundDur(h.quantile(0.99)),
		roundDur(h.quantile(0.999)), h.count())
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

// joinNamed formats counts as "name n, name n".
func joinNamed(cs []namedCount) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%q ×%d", c.name, c.n))
	}
	return strings.Join(slices.Clip(parts), ", ")
}
