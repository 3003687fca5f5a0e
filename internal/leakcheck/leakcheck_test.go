package leakcheck

import (
	"strings"
	"testing"
	"time"
)

func parked(stop <-chan struct{}) { <-stop }

// TestSeesAStrayGoroutineUntilItEnds: a goroutine the test started is
// reported with its stack while it runs, and no longer once it returns.
func TestSeesAStrayGoroutineUntilItEnds(t *testing.T) {
	mine := func(stack string) bool { return strings.Contains(stack, "leakcheck.parked") }
	stop := make(chan struct{})
	go parked(stop)
	if left := Wait(50*time.Millisecond, mine); len(left) != 1 {
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
