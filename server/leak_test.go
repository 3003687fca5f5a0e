package server

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if any goroutine the tests started outlives them:
// a lobby session, a TURN allocation or an HTTP handler the server forgot
// to stop after a bad input, a flood or a shutdown. (The same idea as
// turn's TestMain, but every goroutine counts, not only one library's.)
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(10 * time.Second); len(leaked) > 0 {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n\n%s\n", strings.Join(leaked, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// waitNoLeaks polls until no goroutine but the runtime's and the test
// framework's is left, and returns the leftovers if some remain after d.
// Polling, not one look: closed connections and cancelled timers take a
// moment to unwind, and a single snapshot would flake.
func waitNoLeaks(d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		left := strayGoroutines()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// strayGoroutines returns the stacks of every goroutine but the caller's and
// those that belong to the runtime or the testing package.
func strayGoroutines() []string {
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
		if i == 0 || benignGoroutine(g) {
			continue // i == 0 is the caller
		}
		out = append(out, g)
	}
	return out
}

// benignGoroutine matches goroutines that live as long as the process
// whatever the tests do.
func benignGoroutine(stack string) bool {
	for _, s := range []string{
		"testing.tRunner", "testing.(*M).", "testing.runTests", // the framework and still-running tests
		"os/signal.signal_recv", "os/signal.loop", // signal.Notify's reader, started once
		"runtime.ensureSigM",
		"runtime/trace.", "runtime/pprof.", // -trace, -cpuprofile
	} {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}
