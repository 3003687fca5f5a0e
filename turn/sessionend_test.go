package turn

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/pion/stun/v3"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// TestSessionEndClosesAllocations: when a session ends (the RoomChangeNotifier
// reports it and SessionLive turns false), every allocation it holds, over
// UDP and TCP, is closed and deleted from pion; other sessions keep theirs,
// an ended session's Refresh is refused, and new sessions still allocate.
func TestSessionEndClosesAllocations(t *testing.T) {
	srv, fs := newServer(t, notifying)
	fs.join("keeper", "room")
	keeper := allocated(t, srv, "keeper")

	const sessions = 10
	var lastClient = newClient(t, srv, srv.Credentials("keeper", time.Now()))
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		fs.join(id, "room"+id)
		creds := srv.Credentials(id, time.Now())
		lastClient = newClient(t, srv, creds)
		allocate(t, lastClient)
		allocate(t, newTCPClient(t, srv, creds))
	}
	if n := srv.Stats().Allocations; n != 1+2*sessions {
		t.Fatalf("%d allocations, want %d", n, 1+2*sessions)
	}

	for i := range sessions {
		fs.end(fmt.Sprintf("s%d", i))
	}
	testwait.For(t, "the ended sessions' allocations to close", func() bool {
		return srv.Stats().Allocations == 1 && srv.pion.AllocationCount() == 1
	})

	// The ended session cannot refresh, or keep anything alive.
	last := srv.Credentials(fmt.Sprintf("s%d", sessions-1), time.Now())
	if res := ask(t, lastClient, last.Username, last.Password, stun.MethodRefresh, lifetime(600)); res.Type.Class != stun.ClassErrorResponse {
		t.Fatalf("Refresh of an ended session: %s, want an error", res.Type)
	}

	// The live session's allocation still relays, and a new session allocates.
	fs.join("fresh", "room")
	freshClient := newClient(t, srv, srv.Credentials("fresh", time.Now()))
	fresh := allocate(t, freshClient)
	permitFrom(t, freshClient, keeper)
	if !deliver(keeper, fresh.LocalAddr(), fresh, "after the purge", arrives) {
		t.Fatal("keeper's allocation stopped relaying")
	}
}

// TestSessionEndWithoutWatcher: a Sessions that reports no room changes
// still has its ended sessions' allocations closed, by the janitor's sweep.
func TestSessionEndWithoutWatcher(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("a", "room")
	fs.join("b", "room")
	allocated(t, srv, "a")
	allocated(t, srv, "b")
	fs.end("a")
	if !eventually(3*sweepInterval, func() bool { return srv.Stats().Allocations == 1 }) {
		t.Fatalf("%d allocations after a session ended, want 1", srv.Stats().Allocations)
	}
}

// TestAllocationOfEndedSessionClosed: a session that ends between pion's
// AuthHandler call and the allocation's creation (the RoomChangeNotifier found it
// holding nothing) still loses the allocation. The race is set up by hand:
// a relay socket taken as pion does, then pion's creation event for a
// session that has already ended.
func TestAllocationOfEndedSessionClosed(t *testing.T) {
	srv, fs := newServer(t, notifying)
	fs.join("late", "room")
	fs.end("late")
	gen := &relayGenerator{allocs: srv.allocs, bindIP: srv.cfg.RelayBindIP, log: srv.log}
	pc, relayAddr, err := gen.AllocatePacketConn("udp4", 0)
	if err != nil {
		t.Fatal(err)
	}
	rc := pc.(*relayConn) //nolint:forcetypeassert // ours
	client := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	username := srv.Credentials("late", time.Now()).Username
	srv.allocs.onAllocationCreated(client, srv.UDPAddr(), "UDP", username, srv.cfg.Realm, relayAddr, 0)
	testwait.For(t, "the ended session's late allocation to close", rc.closed.Load)
	srv.allocs.onAllocationDeleted(client, srv.UDPAddr(), "UDP", username, srv.cfg.Realm)
	if n := srv.Stats().Allocations; n != 0 {
		t.Fatalf("%d allocations left", n)
	}
}
