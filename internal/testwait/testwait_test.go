package testwait

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestForWaitsForAnotherGoroutine(t *testing.T) {
	var done atomic.Bool
	time.AfterFunc(20*time.Millisecond, func() { done.Store(true) })
	For(t, "the flag", done.Load)
	if !done.Load() {
		t.Fatal("returned before the condition held")
	}
}

// fatalRecorder records Fatalf and, like the real one, ends the goroutine.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, _ ...any) {
	r.msg = format
	runtime.Goexit()
}

func TestFailsWhenTheConditionNeverHolds(t *testing.T) {
	r := &fatalRecorder{TB: t}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		forWithin(r, "never", 50*time.Millisecond, func() bool { return false })
		r.msg = "returned"
	}()
	<-ended
	if r.msg != "timed out waiting for %s" {
		t.Fatalf("got %q, want the timeout failure", r.msg)
	}
}
