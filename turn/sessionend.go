package turn

import (
	"sync"
	"time"
)

// Allocations end with their lobby session. A session that is gone for
// good (the hub keeps an away session, and SessionLive true, until its seat
// grace ends) has every allocation closed, which makes pion delete them; its
// Refreshes, permissions and channel binds were already refused by the
// AuthHandler. Without this, one IP held 12,705 allocations of 495 ended
// sessions for up to an hour each (pion/turn v4.1.4 grants up to 3600 s).

// sweepInterval is how often the janitor drops stale quota reservations
// and, when the Sessions reports no room changes, asks whether each session
// holding allocations is still live.
const sweepInterval = 5 * time.Second

// sessionEnds collects sessions that may have ended, for the janitor. The
// RoomChangeNotifier callback adds to it under the lobby's locks, so add only
// takes a private mutex and never blocks.
type sessionEnds struct {
	mu   sync.Mutex
	ids  map[string]struct{}
	wake chan struct{}
}

func newSessionEnds() sessionEnds {
	return sessionEnds{ids: make(map[string]struct{}), wake: make(chan struct{}, 1)}
}

func (e *sessionEnds) add(session string) {
	e.mu.Lock()
	e.ids[session] = struct{}{}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// take returns the collected sessions and starts a new set.
func (e *sessionEnds) take() map[string]struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.ids) == 0 {
		return nil
	}
	ids := e.ids
	e.ids = make(map[string]struct{})

	return ids
}

// janitor closes the allocations of ended sessions until stop is closed.
// It calls SessionLive from its own goroutine, never from the RoomChangeNotifier
// callback, which runs under the lobby's locks.
func (a *allocations) janitor(stop <-chan struct{}) {
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-a.ends.wake:
			for session := range a.ends.take() {
				a.closeIfEnded(session)
			}
		case now := <-tick.C:
			a.dropStaleReservations(now)
			if !a.roomChanges {
				for _, session := range a.sessionsWithAllocations() {
					a.closeIfEnded(session)
				}
			}
		}
	}
}

// closeIfEnded closes every allocation of session if the session is gone.
// Sessions never come back, so nothing of it can be wanted again.
func (a *allocations) closeIfEnded(session string) {
	a.mu.RLock()
	held := len(a.bySession[session])
	a.mu.RUnlock()
	if held == 0 || a.sessions.SessionLive(session) {
		return
	}
	a.mu.RLock()
	conns := append([]*relayConn(nil), a.bySession[session]...)
	a.mu.RUnlock()
	for _, c := range conns {
		_ = c.Close()
	}
	a.log.Debug("session ended: allocations closed", "session", session, "allocations", len(conns))
}

func (a *allocations) sessionsWithAllocations() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]string, 0, len(a.bySession))
	for session := range a.bySession {
		out = append(out, session)
	}

	return out
}
