package server

import (
	"net/netip"
	"sync"
	"time"
)

// Wrong admin tokens per client network: a burst of adminFailureBurst, then
// one more every adminFailureEvery. A token is at least 16 bytes, so this is
// not what stops a guesser; it keeps one from filling the log, and an
// operator mistyping gets ten tries before a wait.
const (
	adminFailureBurst = 10
	adminFailureEvery = 6 * time.Second
)

// failureLimit keeps a bucket of failures per client network (IPv6: /64).
// An attempt takes a token before the token is checked and gives it back on
// success, so concurrent guesses cannot all pass the check on the last
// token, and an operator who knows the token never spends any.
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

// attempt is one try that took a token; succeeded gives it back.
type attempt struct {
	l   *failureLimit
	key netip.Addr
}

func (a attempt) succeeded(now time.Time) {
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	if b, ok := a.l.buckets[a.key]; ok {
		a.l.refillLocked(b, now)
		b.tokens = min(a.l.burst, b.tokens+1)
	}
}

// begin takes a token of ip's network for a try, or reports false when its
// budget is spent.
func (l *failureLimit) begin(ip netip.Addr, now time.Time) (attempt, bool) {
	key := networkOf(ip)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pruneLocked(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	l.refillLocked(b, now)
	if b.tokens < 1 {
		return attempt{}, false
	}
	b.tokens--
	return attempt{l: l, key: key}, true
}

// pruneLocked drops full buckets, which hold no information, so addresses
// sprayed at the API cannot grow the map forever. (A try in flight whose
// bucket goes finds none to give its token back to: it had a full one.)
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
