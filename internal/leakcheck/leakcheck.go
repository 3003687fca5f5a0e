// Package leakcheck fails a test binary whose tests leave goroutines behind:
// a session, timer or read loop that a close, a flood or a bad input forgot
// to stop. Test files use it from TestMain; nothing else imports it.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Main runs the tests and, if they passed, waits up to d for every
// goroutine that counts to exit. Leftovers fail the run with their stacks.
// It returns the exit code for os.Exit.
func Main(m *testing.M, d time.Duration, counts func(stack string) bool) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	if left := Wait(d, counts); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "leaked goroutines:\n\n%s\n", strings.Join(left, "\n\n"))
		return 1
	}
	return 0
}

// Wait polls until no goroutine that counts is left, and returns the
// leftovers if some remain after d. Polling, not one look: closed
// connections and stopped timers take a moment to unwind.
func Wait(d time.Duration, counts func(stack string) bool) []string {
	deadline := time.Now().Add(d)
	for {
		left := Goroutines(counts)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Goroutines returns the stacks of the goroutines that count, leaving out
// the caller's and the test framework's.
func Goroutines(counts func(stack string) bool) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 || strings.Contains(g, "testing.tRunner") || strings.Contains(g, "testing.(*M).") || strings.Contains(g, "testing.runTests") {
			continue // i == 0 is the caller
		}
		if counts(g) {
			out = append(out, g)
		}
	}
	return out
}

// Any counts every goroutine but those that live as long as the process
// whatever the tests do.
func Any(stack string) bool {
	for _, s := range []string{
		"os/signal.signal_recv", "os/signal.loop", // signal.Notify's reader, started once
		"runtime.ensureSigM",
		"runtime/trace.", "runtime/pprof.", // -trace, -cpuprofile
	} {
		if strings.Contains(stack, s) {
			return false
		}
	}
	return true
}
