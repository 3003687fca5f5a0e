package server

import (
	"net/netip"
	"sync"
	"time"

	"github.com/hostrelay/hostrelay/internal/netkey"
)

// Wrong admin tokens per client network: a burst of adminFailureBurst, then
// one more every adminFailureEvery; past that a wrong token is answered 429
// rather than 401 and is not logged. Only failures are throttled: the right
// token is accepted from any address at any time (adminAuth).
const (
	adminFailureBurst = 10
	adminFailureEvery = 6 * time.Second
)

// failureLimit keeps a bucket of failures per client network (IPv6: /64).
type failureLimit struct {
	every time.Duration
	burst float64

	mu        sync.Mutex
	buckets   map[netip.Addr]*bucket
	lastPrune time.Time
}

// bucket is the tokens one network had at time at.
type bucket struct {
	tokens float64
	at     time.Time
}

func newFailureLimit(every time.Duration, burst int) *failureLimit {
	return &failureLimit{every: every, burst: float64(burst), buckets: make(map[netip.Addr]*bucket)}
}

// refillLocked brings b's tokens up to now.
func (l *failureLimit) refillLocked(b *bucket, now time.Time) {
	if now.After(b.at) {
		b.tokens = min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.every))
		b.at = now
	}
}

// fail counts a failure of ip's network: ok while within its budget, else
// the wait until the budget has room for one more. A refused failure
// costs nothing more, so a wrong try every adminFailureEvery keeps the
// network at its limit, no further.
func (l *failureLimit) fail(ip netip.Addr, now time.Time) (wait time.Duration, ok bool) {
	key := netkey.Of(ip)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pruneLocked(now)
	b, found := l.buckets[key]
	if !found {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	l.refillLocked(b, now)
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) * float64(l.every)), false
	}
	b.tokens--
	return 0, true
}

// pruneLocked drops full buckets, which hold no information, so addresses
// sprayed at the API cannot grow the map forever.
func (l *failureLimit) pruneLocked(now time.Time) {
	if now.Sub(l.lastPrune) < time.Minute {
		return
	}
	l.lastPrune = now
	for k, b := range l.buckets {
		l.refillLocked(b, now)
		if b.tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
}
