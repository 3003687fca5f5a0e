package signaling

import (
	"fmt"
	"testing"
)

func TestReplayRing(t *testing.T) {
	r := replayRing{maxFrames: 4, maxBytes: 100}
	frame := func(i int) []byte { return []byte(fmt.Sprintf("f%02d", i)) } // 3 bytes
	for i := 1; i <= 10; i++ {
		r.push(uint64(i), frame(i))
	}
	// The newest four are kept, oldest first.
	got, ok := r.after(6, 10)
	if !ok || len(got) != 4 || string(got[0]) != "f07" || string(got[3]) != "f10" {
		t.Fatalf("after(6) = %q %v", got, ok)
	}
	if got, ok := r.after(8, 10); !ok || len(got) != 2 || string(got[0]) != "f09" {
		t.Fatalf("after(8) = %q %v", got, ok)
	}
	if _, ok := r.after(5, 10); ok {
		t.Fatal("frame 6 was dropped, but after(5) claims a full replay")
	}
	if got, ok := r.after(10, 10); !ok || got != nil {
		t.Fatalf("after(newest) = %q %v", got, ok)
	}
	if r.bytes != 12 {
		t.Fatalf("bytes %d, want 12", r.bytes)
	}

	// The byte bound drops old frames but always keeps the newest.
	b := replayRing{maxFrames: 100, maxBytes: 10}
	for i := 1; i <= 5; i++ {
		b.push(uint64(i), frame(i))
	}
	if got, ok := b.after(2, 5); !ok || len(got) != 3 || b.bytes != 9 {
		t.Fatalf("byte-bounded after(2) = %q %v, bytes %d", got, ok, b.bytes)
	}
	b.push(6, make([]byte, 50))
	if got, ok := b.after(5, 6); !ok || len(got) != 1 || b.n != 1 {
		t.Fatalf("oversized newest frame: %d kept, %v", b.n, ok)
	}

	// Off: nothing kept, nothing replayable.
	off := replayRing{}
	off.push(1, frame(1))
	if _, ok := off.after(0, 1); ok {
		t.Fatal("a disabled ring replays")
	}
}

// A full ring pushes in constant time and allocation-free.
func TestReplayRingFullDoesNotAllocate(t *testing.T) {
	r := replayRing{maxFrames: 256, maxBytes: 1 << 20}
	f := []byte("frame")
	seq := uint64(0)
	for range 300 {
		seq++
		r.push(seq, f)
	}
	if n := testing.AllocsPerRun(1000, func() { seq++; r.push(seq, f) }); n != 0 {
		t.Fatalf("%.1f allocations per push", n)
	}
}
