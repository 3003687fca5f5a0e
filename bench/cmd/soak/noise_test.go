package main

import (
	"testing"
	"time"
)

func slicesOf(lat ...time.Duration) []phaseStats {
	sl := make([]phaseStats, len(lat))
	for i, d := range lat {
		for range 200 {
			sl[i].lobbyRTT.add(d)
		}
	}
	return sl
}

func lobbyOf(p *phaseStats) *hist { return &p.lobbyRTT }

// Slices alike: every labelling gives the same ratio, 1, so the run's own
// is no sign of a flood.
func TestRelabelledAlike(t *testing.T) {
	ms := time.Millisecond
	n, ok := relabelled(slicesOf(ms, ms, ms, ms, ms, ms, ms, ms, ms, ms), lobbyOf, 0.99)
	if !ok || n.Labellings != 252 || n.Lo != 1 || n.Hi != 1 || n.AtLeast != 1 {
		t.Fatalf("got %+v, %v; want 252 labellings, all 1", n, ok)
	}
}

// Flood slices (odd-numbered) ten times slower: only the run's own
// labelling reaches its ratio.
func TestRelabelledFloodStandsOut(t *testing.T) {
	q, f := time.Millisecond, 10*time.Millisecond
	n, ok := relabelled(slicesOf(q, f, q, f, q, f, q, f, q, f), lobbyOf, 0.99)
	if !ok || n.AtLeast != 1.0/252 {
		t.Fatalf("got %+v, %v; want only the run's own labelling at its ratio (1/252)", n, ok)
	}
	if n.Hi >= 10 {
		t.Fatalf("the 95th percentile %v reaches the run's own ratio", n.Hi)
	}
}

// An odd number of slices keeps as many quiet as the run had (quiet
// first); too few or too many slices are not judged.
func TestRelabelledSliceCounts(t *testing.T) {
	ms := time.Millisecond
	if n, ok := relabelled(slicesOf(ms, ms, ms, ms, ms), lobbyOf, 0.99); !ok || n.Labellings != 10 {
		t.Fatalf("5 slices: %+v, %v; want C(5,3) = 10 labellings", n, ok)
	}
	if _, ok := relabelled(slicesOf(ms, ms, ms), lobbyOf, 0.99); ok {
		t.Fatal("3 slices judged")
	}
	if _, ok := relabelled(make([]phaseStats, maxRelabelSlices+1), lobbyOf, 0.99); ok {
		t.Fatal("more slices than the enumeration's bound judged")
	}
}
