package turn

import (
	"testing"
	"time"

	"github.com/pion/stun/v3"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// TestChannelCap: an allocation binds MaxChannelsPerAllocation channels; a
// new one past that is answered 508 Insufficient Capacity and not bound,
// while a bound channel can still be refreshed.
func TestChannelCap(t *testing.T) {
	const limit = 3
	srv, fs := newServer(t, func(c *Config) { c.MaxChannelsPerAllocation = limit })
	fs.join("c", "room")
	creds := srv.Credentials("c", time.Now())
	c := newClient(t, srv, creds)
	relay := allocate(t, c)
	rc := relayOf(t, srv, relay)
	bind := func(i int) stun.ErrorCode {
		t.Helper()
		res := ask(t, c, creds.Username, creds.Password, stun.MethodChannelBind,
			channelNumber(0x4000+i), stunPeer(srv.cfg.PublicIP, 20000+i))

		return codeOf(t, res)
	}
	for i := range limit {
		if code := bind(i); code != 0 {
			t.Fatalf("channel %d: error %d", i+1, code)
		}
	}
	if code := bind(limit); code != stun.CodeInsufficientCapacity {
		t.Fatalf("channel %d: error %d, want 508 Insufficient Capacity", limit+1, code)
	}
	if code := bind(0); code != 0 {
		t.Fatalf("refreshing a bound channel at the cap: error %d", code)
	}
	srv.reg.mu.RLock()
	n := rc.channels.len()
	_, bound := rc.channelPeer(0x4000 + limit)
	srv.reg.mu.RUnlock()
	if n != limit || bound {
		t.Fatalf("%d channels mirrored (refused one bound: %v), want %d", n, bound, limit)
	}
}

// TestChannelCapTCP: over TCP pion reads ChannelBind itself, so a binding
// past the cap cannot be refused; the allocation is closed instead.
func TestChannelCapTCP(t *testing.T) {
	const limit = 2
	srv, fs := newServer(t, func(c *Config) { c.MaxChannelsPerAllocation = limit })
	fs.join("t", "room")
	creds := srv.Credentials("t", time.Now())
	c := newTCPClient(t, srv, creds)
	allocate(t, c)
	for i := range limit + 1 {
		res := ask(t, c, creds.Username, creds.Password, stun.MethodChannelBind,
			channelNumber(0x4000+i), stunPeer(srv.cfg.PublicIP, 20000+i))
		if code := codeOf(t, res); code != 0 {
			t.Fatalf("channel %d: error %d", i+1, code)
		}
		if i < limit && srv.Stats().Allocations != 1 {
			t.Fatalf("allocation closed at %d channels, within the cap of %d", i+1, limit)
		}
	}
	testwait.For(t, "the allocation past the channel cap to close", func() bool {
		return srv.Stats().Allocations == 0 && srv.pion.AllocationCount() == 0
	})
}
