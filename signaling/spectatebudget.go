package signaling

import "sync"

// spectatorBudget is the one bound on the bytes every room's spectator
// stream holds (Config.SpectatorBudgetBytes): frames waiting out the delay
// and what joiners are sent. Per-room limits alone let -max-rooms rooms
// each keep their share (issue 24: 1,000 idle rooms took 588 MiB). Streams
// nobody watches may hold at most a quarter of it (idleShare), so rooms
// that stream to no one can never crowd out the streams people watch.
//
// Its lock is a leaf, taken under stream.mu: every change of a stream's
// held bytes and of the totals is one critical section, so the figures are
// exact and the budget is never passed, even for a moment.
type spectatorBudget struct {
	mu    sync.Mutex
	limit int
	held  int // every stream's frames
	idle  int // of which streams with no viewer
}

// idleShare is the part of the budget streams nobody watches may hold.
const idleShare = 4

func (b *spectatorBudget) idleLimit() int { return b.limit / idleShare }

// take charges n bytes to a stream, idle if it has no viewer, and reports
// whether they fit.
func (b *spectatorBudget) take(n int, idle bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > b.limit || idle && b.idle+n > b.idleLimit() {
		return false
	}
	b.held += n
	if idle {
		b.idle += n
	}
	return true
}

// give returns n bytes a stream held.
func (b *spectatorBudget) give(n int, idle bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if idle {
		b.idle -= n
	}
}

// toIdle moves a stream's n bytes to the idle share when its last viewer
// leaves, if they fit; toWatched moves them back when one arrives.
func (b *spectatorBudget) toIdle(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.idle+n > b.idleLimit() {
		return false
	}
	b.idle += n
	return true
}

func (b *spectatorBudget) toWatched(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.idle -= n
}

// bytes are the bytes held now.
func (b *spectatorBudget) bytes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}
