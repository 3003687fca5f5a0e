// Package testwait waits in tests for a condition another goroutine makes
// true (a session ending, a counter moving), failing the test after a bound
// rather than hanging or sleeping a guessed time.
package testwait

import (
	"testing"
	"time"
)

// Within is how long For waits: generous, so a slow machine does not fail a
// test that is right, and short next to the suite's timeout.
const Within = 5 * time.Second

// For polls cond until it holds, failing t with what after Within.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	forWithin(t, what, Within, cond)
}

func forWithin(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
