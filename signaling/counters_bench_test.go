package signaling

import (
	"strconv"
	"testing"
)

// BenchmarkHubMetrics is what one scrape costs the lobby: one pass over
// 10,000 sessions and 2,000 rooms under the hub's read lock, which holds up
// requests (they take the write lock) for as long.
func BenchmarkHubMetrics(b *testing.B) {
	hub, _ := testHub(b, nil)
	hub.mu.Lock()
	for i := range 10000 {
		hub.sessions["s"+strconv.Itoa(i)] = &Session{away: i%50 == 0}
	}
	for i := range 2000 {
		hub.rooms["R"+strconv.Itoa(i)] = &room{started: i%2 == 0}
	}
	hub.mu.Unlock()
	b.ReportAllocs()
	for b.Loop() {
		if m := hub.Metrics(); m.Sessions != 10000 || m.RoomsOpen+m.RoomsStarted != 2000 {
			b.Fatalf("%+v", m)
		}
	}
	// The hub's Close must not try to end sessions that were never real.
	hub.mu.Lock()
	clear(hub.sessions)
	clear(hub.rooms)
	hub.mu.Unlock()
}
