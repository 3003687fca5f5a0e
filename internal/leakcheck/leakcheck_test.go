package leakcheck

import (
	"strings"
	"testing"
	"time"
)

func parked(started chan<- struct{}, stop <-chan struct{}) {
	close(started)
	<-stop
}

// TestSeesAStrayGoroutineUntilItEnds: a goroutine the test started is
// reported with its stack while it runs, and no longer once it returns.
func TestSeesAStrayGoroutineUntilItEnds(t *testing.T) {
	mine := func(stack string) bool { return strings.Contains(stack, "leakcheck.parked") }
	started, stop := make(chan struct{}), make(chan struct{})
	go parked(started, stop)
	<-started // until it runs, its stack does not show parked yet
	if left := Goroutines(mine); len(left) != 1 {
		t.Fatalf("running goroutine: got %d stacks, want 1", len(left))
	}
	close(stop)
	if left := Wait(5*time.Second, mine); len(left) != 0 {
		t.Fatalf("ended goroutine still reported:\n%s", strings.Join(left, "\n\n"))
	}
	if left := Goroutines(Any); len(left) != 0 {
		t.Fatalf("the test framework's own goroutines counted:\n%s", strings.Join(left, "\n\n"))
	}
}
