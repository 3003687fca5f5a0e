package signaling

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// take checks and spends in one step: of many concurrent takes exactly the
// budget succeed, and time refills the bucket.
func TestIPLimiterTake(t *testing.T) {
	const burst = 14
	l := newIPLimiter(time.Second, burst)
	ip := netip.MustParseAddr("203.0.113.7")
	now := time.Unix(1795000000, 0)
	var got atomic.Int32
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.take(ip, now) {
				got.Add(1)
			}
		}()
	}
	wg.Wait()
	if got.Load() != burst {
		t.Fatalf("%d takes succeeded, want the budget %d", got.Load(), burst)
	}
	if l.take(ip, now) || l.allowed(ip, now) {
		t.Fatal("took past the budget")
	}
	// Another network has its own bucket; an IPv6 /64 is one network.
	if !l.take(netip.MustParseAddr("2001:db8::1"), now) || !l.allowed(netip.MustParseAddr("2001:db8::2"), now) {
		t.Fatal("another network was refused")
	}
	// Half a second refills half a token: still none; a second, one.
	if l.take(ip, now.Add(500*time.Millisecond)) {
		t.Fatal("took half a token")
	}
	if !l.take(ip, now.Add(time.Second)) || l.take(ip, now.Add(time.Second)) {
		t.Fatal("a second did not refill exactly one token")
	}
}

// hold takes a token before a lookup: of many concurrent holds that all
// spend, exactly the budget get one; holds that give theirs back let every
// waiter through, one after another, and leave the budget whole.
func TestIPLimiterHold(t *testing.T) {
	const burst = 3
	now := func() time.Time { return time.Unix(1795000000, 0) }
	ip := netip.MustParseAddr("203.0.113.8")
	run := func(l *ipLimiter, refund bool) int32 {
		var got atomic.Int32
		var wg sync.WaitGroup
		for range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if tok, ok := l.hold(t.Context(), ip, now); ok {
					got.Add(1)
					tok.settle(refund, now())
				}
			}()
		}
		wg.Wait()
		return got.Load()
	}
	found := newIPLimiter(time.Second, burst)
	if got := run(found, true); got != 200 {
		t.Fatalf("%d of 200 holds that found their room got a token, want all", got)
	}
	// The whole burst is there to take, and no more.
	for i := range burst + 1 {
		if took := found.take(ip, now()); took != (i < burst) {
			t.Fatalf("take %d of a burst of %d after the refunds: %v", i+1, burst, took)
		}
	}
	spent := newIPLimiter(time.Second, burst)
	if got := run(spent, false); got != burst {
		t.Fatalf("%d of 200 holds that found nothing got a token, want the budget %d", got, burst)
	}
	// Past the limit with nothing in flight: refused at once.
	if _, ok := spent.hold(t.Context(), ip, now); ok {
		t.Fatal("held past the budget")
	}
}
