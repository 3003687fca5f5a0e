package turn

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pion/stun/v3"
)

// TestChannelCap: an allocation binds MaxChannelsPerAllocation channels; a
// new one past that is answered 508 Insufficient Capacity and not bound,
// while a bound channel can still be refreshed and the allocation lives on.
// Over UDP and TCP alike.
func TestChannelCap(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) { testChannelCap(t, tr) })
	}
}

func testChannelCap(t *testing.T, tr transport) {
	const limit = 3
	srv, fs := newServer(t, func(c *Config) { c.MaxChannelsPerAllocation = limit })
	fs.join("c", "room")
	creds := srv.Credentials("c", time.Now())
	c := tr.client(t, srv, creds)
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
	if n := srv.Stats().ChannelBindsRefused; n != 1 {
		t.Fatalf("%d channel binds counted refused, want the one", n)
	}
	srv.allocs.mu.RLock()
	n := rc.channels.len()
	_, bound := rc.channelPeer(0x4000 + limit)
	srv.allocs.mu.RUnlock()
	if n != limit || bound {
		t.Fatalf("%d channels mirrored (refused one bound: %v), want %d", n, bound, limit)
	}
	if rc.closed.Load() || srv.Stats().Allocations != 1 || srv.pion.AllocationCount() != 1 {
		t.Fatal("the allocation was closed for a refused channel")
	}
	// Still served: a permission (authenticated like ChannelBind) is granted.
	if code := codeOf(t, ask(t, c, creds.Username, creds.Password, stun.MethodCreatePermission,
		stunPeer(srv.cfg.PublicIP, 20000))); code != 0 {
		t.Fatalf("CreatePermission after the refusal: error %d", code)
	}
}

// TestChannelCapBackstop: a binding past the cap that reaches pion all the
// same (the rewriter answers 508 before it can) closes the allocation rather
// than growing its table.
func TestChannelCapBackstop(t *testing.T) {
	allocs, _, a, _ := unitAllocations(t) // a has one channel
	allocs.maxChannels = 2
	client := net.UDPAddrFromAddrPort(a.client)
	bind := func(number uint16, peerPort int) {
		allocs.onChannelCreated(client, nil, "udp", "", DefaultRealm, a.public,
			&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1).To4(), Port: peerPort}, number)
	}
	bind(0x4002, 3000)
	if a.closed.Load() {
		t.Fatal("closed at the cap")
	}
	bind(0x4003, 3001)
	if !a.closed.Load() {
		t.Fatal("a binding past the cap left the allocation open")
	}
}

// TestUpstreamCanary_ChannelCap: plain pion/turn still binds more channels
// on one allocation than DefaultMaxChannelsPerAllocation, and its
// ServerConfig has no channel setting but the binding timeout
// (pionfix_channelcap.go caps them).
func TestUpstreamCanary_ChannelCap(t *testing.T) {
	for _, name := range pionConfigFields() {
		if strings.Contains(name, "Channel") && name != "ChannelBindTimeout" {
			upstreamGone(t, "pionfix_channelcap.go", "ServerConfig has "+name)
		}
	}
	c := plainPion(t, canaryPassword)
	allocate(t, c)
	for i := range DefaultMaxChannelsPerAllocation + 1 {
		res := ask(t, c, canaryUser, canaryPassword, stun.MethodChannelBind,
			channelNumber(0x4000+i), stunPeer(net.IPv4(127, 0, 0, 1), 20000+i))
		if code := codeOf(t, res); code != 0 {
			upstreamGone(t, "pionfix_channelcap.go", fmt.Sprintf("channel %d refused with %d", i+1, code))
		}
	}
}
