package signaling

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ipLimiter keeps a token bucket per client network. IPv6 clients are keyed
// by their /64, since one host usually owns a whole /64 and could otherwise
// rotate addresses to reset its bucket.
type ipLimiter struct {
	every time.Duration
	burst int

	mu        sync.Mutex
	buckets   map[netip.Addr]*rate.Limiter
	lastPrune time.Time
}

func newIPLimiter(every time.Duration, burst int) *ipLimiter {
	return &ipLimiter{every: every, burst: burst, buckets: make(map[netip.Addr]*rate.Limiter)}
}

func limiterKey(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}

// allowed reports whether ip has a token left, without spending it.
func (l *ipLimiter) allowed(ip netip.Addr, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[limiterKey(ip)]
	return !ok || b.TokensAt(now) >= 1
}

// spend takes one token from ip's bucket, if it has one.
func (l *ipLimiter) spend(ip netip.Addr, now time.Time) { l.take(ip, now) }

// take spends one of ip's tokens and reports whether there was one: the
// check and the spend in one step, so concurrent callers cannot all pass
// the check on the last token. (allowed then spend is one step only when a
// lock the caller holds serializes every caller, as Hub.mu does for the
// failed-join budget.)
func (l *ipLimiter) take(ip netip.Addr, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := limiterKey(ip)
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.buckets[key] = b
	}
	ok = b.AllowN(now, 1)
	l.pruneLocked(now) // after the spend: a full bucket would be pruned
	return ok
}

// pruneLocked drops buckets that have refilled: they hold no information,
// and without this an attacker spraying addresses would grow the map forever.
func (l *ipLimiter) pruneLocked(now time.Time) {
	if now.Sub(l.lastPrune) < time.Minute {
		return
	}
	l.lastPrune = now
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, k)
		}
	}
}
