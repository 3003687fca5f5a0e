package signaling

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/hostrelay/hostrelay/internal/netkey"
)

// ipLimiter keeps a token bucket per client network. IPv6 clients are keyed
// by their /64, since one host usually owns a whole /64 and could otherwise
// rotate addresses to reset its bucket.
type ipLimiter struct {
	every time.Duration
	burst float64

	mu        sync.Mutex
	buckets   map[netip.Addr]*ipBucket
	lastPrune time.Time
}

// ipBucket is one network's tokens as they were at time at. Tokens are
// counted here rather than in a rate.Limiter so that a held token can be
// given back exactly (hold).
type ipBucket struct {
	tokens float64
	at     time.Time
	// held counts tokens taken by lookups that have not settled yet;
	// settled is closed (and replaced) each time one settles, waking the
	// holds waiting for a token.
	held    int
	settled chan struct{}
}

func newIPLimiter(every time.Duration, burst int) *ipLimiter {
	return &ipLimiter{every: every, burst: float64(burst), buckets: make(map[netip.Addr]*ipBucket)}
}

// bucketLocked is key's bucket refilled up to now, made full if new.
func (l *ipLimiter) bucketLocked(key netip.Addr, now time.Time) *ipBucket {
	b, ok := l.buckets[key]
	if !ok {
		b = &ipBucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	if now.After(b.at) {
		b.tokens = min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.every))
		b.at = now
	}
	return b
}

// allowed reports whether ip has a token left, without spending it.
func (l *ipLimiter) allowed(ip netip.Addr, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[netkey.Of(ip)]
	if !ok {
		return true
	}
	return min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.every)) >= 1
}

// spend takes one token from ip's bucket, if it has one.
func (l *ipLimiter) spend(ip netip.Addr, now time.Time) { l.take(ip, now) }

// take spends one of ip's tokens and reports whether there was one: the
// check and the spend in one step, so concurrent callers cannot all pass
// the check on the last token.
func (l *ipLimiter) take(ip netip.Addr, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketLocked(netkey.Of(ip), now)
	ok := b.tokens >= 1
	if ok {
		b.tokens--
	}
	l.pruneLocked(now) // after the spend: a full bucket would be pruned
	return ok
}

// heldToken is a token taken for a lookup whose answer decides its fate:
// spent for a code that does not exist, given back for one that does.
type heldToken struct {
	l   *ipLimiter
	key netip.Addr
}

// hold takes one of ip's tokens before a lookup. With none left while
// other lookups of the same network still hold theirs, it waits for them
// to settle (or ctx to end): players joining together from one address
// are kept a moment rather than refused, since their lookups give their
// tokens back, while a guesser's lookups spend theirs and so never exceed
// its budget, however many it sends at once.
func (l *ipLimiter) hold(ctx context.Context, ip netip.Addr, now func() time.Time) (heldToken, bool) {
	key := netkey.Of(ip)
	for {
		l.mu.Lock()
		b := l.bucketLocked(key, now())
		if b.tokens >= 1 {
			b.tokens--
			b.held++
			l.mu.Unlock()
			return heldToken{l: l, key: key}, true
		}
		if b.held == 0 {
			l.mu.Unlock()
			return heldToken{}, false
		}
		if b.settled == nil {
			b.settled = make(chan struct{})
		}
		wait := b.settled
		l.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return heldToken{}, false
		}
	}
}

// settle ends a hold: refund gives the token back (the code was found),
// else it stays spent. Call it exactly once per successful hold.
func (t heldToken) settle(refund bool, now time.Time) {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketLocked(t.key, now) // never pruned while held
	b.held--
	if refund {
		b.tokens = min(l.burst, b.tokens+1)
	}
	if b.settled != nil {
		close(b.settled)
		b.settled = nil
	}
}

// pruneLocked drops buckets that have refilled and hold nothing: they
// carry no information, and without this an attacker spraying addresses
// would grow the map forever.
func (l *ipLimiter) pruneLocked(now time.Time) {
	if now.Sub(l.lastPrune) < time.Minute {
		return
	}
	l.lastPrune = now
	for k, b := range l.buckets {
		if b.held == 0 && min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.every)) >= l.burst {
			delete(l.buckets, k)
		}
	}
}
