package turn

import (
	"testing"
	"time"
)

// The pion path (Send indications, relayConn.WriteTo) under cached rooms:
// every change the lobby reports takes effect at once.
func TestCachedRoomsFollowChanges(t *testing.T) {
	srv, fs := newServer(t, notifying)
	if !srv.allocs.roomChanges {
		t.Fatal("a RoomChangeNotifier did not turn the cache on")
	}
	fs.join("a", "r1")
	fs.join("b", "r1")
	clientA := newClient(t, srv, srv.Credentials("a", time.Now()))
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	a, b := allocate(t, clientA), allocate(t, clientB)
	permitFrom(t, clientA, b)
	permitFrom(t, clientB, a)
	steps := []struct {
		change func()
		flows  bool
	}{
		{func() {}, true},
		{func() { fs.join("b", "r2") }, false},
		{func() { fs.join("b", "r1") }, true},
		{func() { fs.join("a", "") }, false},
		{func() { fs.join("a", "r1") }, true},
		{func() { fs.end("a") }, false},
	}
	for i, st := range steps {
		st.change()
		msg := "step " + string(rune('0'+i))
		if st.flows {
			if !deliver(a, b.LocalAddr(), b, msg, arrives) || !deliver(b, a.LocalAddr(), a, msg+" back", arrives) {
				t.Fatalf("%s: packets did not flow", msg)
			}
		} else if !neverArrives(a, b.LocalAddr(), b, msg, silence) || !neverArrives(b, a.LocalAddr(), a, msg+" back", silence) {
			t.Fatalf("%s: packets flowed", msg)
		}
	}
}

// While nothing changes, relayed packets do not ask the lobby.
func TestCachedRoomsSpareRoomOf(t *testing.T) {
	srv, fs := newServer(t, notifying)
	a, b, ra, rb := channelPair(t, srv, fs)
	if !deliver(a, b.LocalAddr(), b, "warm", arrives) {
		t.Fatal("no traffic")
	}
	before := fs.roomOfs.Load()
	for range 200 {
		if _, err := a.WriteTo([]byte("steady"), b.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	// The 200 are not waited for one by one; this lets them be relayed.
	time.Sleep(100 * time.Millisecond)
	if n := fs.roomOfs.Load() - before; n > 0 {
		t.Fatalf("%d RoomOf calls for 200 packets with no room change", n)
	}
	// A change for a's session invalidates a's relay only.
	va, vb := ra.rooms.ver.Load(), rb.rooms.ver.Load()
	fs.join("a", "r1")
	if ra.rooms.ver.Load() == va || rb.rooms.ver.Load() != vb {
		t.Fatal("invalidation did not hit exactly the changed session's relays")
	}
}

// roomOf never serves a room from before a reported change, even when the
// change lands while RoomOf runs.
func TestRoomOfRace(t *testing.T) {
	allocs, fs, a, _ := unitAllocations(t)
	w := notifyingSessions{fs}
	allocs.sessions, allocs.roomChanges = w, true
	stop := w.OnRoomChange(allocs.invalidate)
	defer stop()
	allocs.bySession["a"] = []*relayConn{a}

	if room, ok := allocs.roomOf(a, "a"); !ok || room != "r1" {
		t.Fatalf("roomOf = %q %v", room, ok)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			if i%2 == 0 {
				fs.join("a", "r2")
			} else {
				fs.join("a", "r1")
			}
		}
		fs.join("a", "r3")
	}()
	for {
		select {
		case <-done:
			if room, _ := allocs.roomOf(a, "a"); room != "r3" {
				t.Fatalf("after the last change roomOf = %q, want r3", room)
			}

			return
		default:
			_, _ = allocs.roomOf(a, "a")
		}
	}
}

// Close unregisters the room-change listener.
func TestCloseStopsRoomWatch(t *testing.T) {
	fs := newFakeSessions()
	cfg := testConfig(fs)
	notifying(&cfg)
	srv, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fs.onRoomChange == nil {
		t.Fatal("no room-change listener registered")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if fs.onRoomChange != nil {
		t.Fatal("room-change listener still registered after Close")
	}
}
