package signaling

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// roomLog records OnRoomChange reports.
type roomLog struct {
	mu  sync.Mutex
	ids []string
}

func (l *roomLog) add(id string) {
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
}

// take waits until every id in want was reported since the last take, and
// returns everything reported.
func (l *roomLog) take(t *testing.T, want ...string) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		got := slices.Clone(l.ids)
		l.mu.Unlock()
		missing := false
		for _, w := range want {
			if !slices.Contains(got, w) {
				missing = true
			}
		}
		if !missing {
			l.mu.Lock()
			l.ids = l.ids[len(got):]
			l.mu.Unlock()

			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("reports %v lack some of %v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Every way a session's room changes is reported, after the change.
func TestOnRoomChange(t *testing.T) {
	hub, url := testHub(t, nil)
	var log roomLog
	stop := hub.OnRoomChange(log.add)

	host := connect(t, url, "host")
	rj := host.create("watched", 4, "")
	hostID := sessionNamed(t, hub, "host")
	log.take(t, hostID)
	if room, ok := hub.RoomOf(hostID); !ok || room != rj.Room.Code {
		t.Fatalf("RoomOf(host) = %q %v after the report", room, ok)
	}

	b := connect(t, url, "b")
	b.join(rj.Room.Code, "")
	bID := sessionNamed(t, hub, "b")
	log.take(t, bID)

	b.request(protocol.TypeLeaveRoom, &protocol.LeaveRoom{})
	log.take(t, bID)
	if _, ok := hub.RoomOf(bID); ok {
		t.Fatal("RoomOf(b) still answers after leaving")
	}

	c := connect(t, url, "c")
	c.join(rj.Room.Code, "")
	cID := sessionNamed(t, hub, "c")
	log.take(t, cID)
	cPlayer := playerOf(t, hub, cID)
	host.request(protocol.TypeKick, &protocol.Kick{ID: cPlayer})
	log.take(t, cID)

	d := connect(t, url, "d")
	d.join(rj.Room.Code, "")
	dID := sessionNamed(t, hub, "d")
	log.take(t, dID)
	// The host leaving closes the room: everyone in it moves.
	host.request(protocol.TypeLeaveRoom, &protocol.LeaveRoom{})
	log.take(t, hostID, dID)

	// A session that ends is reported too (RoomOf turns false).
	d.conn.CloseNow()
	log.take(t, dID)

	stop()
	e := connect(t, url, "e")
	e.create("after stop", 2, "")
	time.Sleep(50 * time.Millisecond)
	if got := log.take(t); len(got) != 0 {
		t.Fatalf("reports after stop: %v", got)
	}
}

// sessionOf finds the session id of the connected player called name.
func sessionNamed(t *testing.T, hub *Hub, name string) string {
	t.Helper()
	hub.mu.RLock()
	defer hub.mu.RUnlock()
	for id, s := range hub.sessions {
		if s.name == name {
			return id
		}
	}
	t.Fatalf("no session named %q", name)

	return ""
}

func playerOf(t *testing.T, hub *Hub, sessionID string) string {
	t.Helper()
	hub.mu.RLock()
	defer hub.mu.RUnlock()

	return hub.sessions[sessionID].playerID
}
