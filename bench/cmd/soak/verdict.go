package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// sample is one reading over time: the server's figures beside the load
// that produced them.
type sample struct {
	At      time.Duration // since the load started
	Players int64         // live lobby sessions on the soak's side
	Peers   int64         // open peer connections, each end counted
	serverFigures
	ServerCPU float64 // cores the server used over the interval before this sample
	SoakCPU   float64 // cores the soak itself used
	GameRate  float64 // game packets received per second over the interval
}

// tolerances are how much the last third of a run may grow over the first
// third (after warm-up) and still be called flat. Why these values is in
// docs/benchmarks.md#soak.
type tolerances struct {
	// Counts: goroutines and open files per player, TURN allocations per
	// open peer connection, sessions per player, rooms. These are functions
	// of the live population plus the handshakes in flight, which a steady
	// churn keeps the same in every third; a leak of one object per few
	// churn events grows them far past this.
	Counts float64
	// RSS is looser than the counts: the heap breathes with GC pacing and
	// the runtime returns freed pages lazily.
	RSS float64
	// Load is how far below its target the live population may sag in a
	// third before the run says nothing (the figures would be flat because
	// the load fell, not because nothing leaked).
	Load float64
}

var defaultTolerances = tolerances{Counts: 0.10, RSS: 0.15, Load: 0.05} //nolint:gochecknoglobals // read-only defaults

// check is one line of the verdict.
type check struct {
	Name        string
	First, Last float64 // medians of the first and last third
	Limit       float64
	OK          bool
	Note        string
}

// errTooShort: not enough samples after warm-up to compare thirds.
var errTooShort = errors.New("soak: too few samples after warm-up to compare the first and last thirds (at least 3 each): run longer or sample more often")

// thirds returns the samples of the first and last thirds of the run after
// warmup, by time.
func thirds(samples []sample, warmup time.Duration) (first, last []sample, err error) {
	if len(samples) == 0 {
		return nil, nil, errTooShort
	}
	end := samples[len(samples)-1].At
	span := end - warmup
	if span <= 0 {
		return nil, nil, errTooShort
	}
	for _, s := range samples {
		switch {
		case s.At < warmup:
		case s.At <= warmup+span/3:
			first = append(first, s)
		case s.At >= end-span/3:
			last = append(last, s)
		}
	}
	if len(first) < 3 || len(last) < 3 {
		return first, last, errTooShort
	}
	return first, last, nil
}

// median of f over the samples where it is defined (ok).
func median(ss []sample, f func(sample) (float64, bool)) float64 {
	var v []float64
	for _, s := range ss {
		if x, ok := f(s); ok {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func perPlayer(n func(sample) int) func(sample) (float64, bool) {
	return func(s sample) (float64, bool) { return float64(n(s)) / float64(s.Players), s.Players > 0 }
}

// flatness compares the last third of the run with the first, after warmup:
// each figure's median may grow by at most its tolerance. A figure that
// falls is not a leak and passes (the note says so).
func flatness(samples []sample, warmup time.Duration, tol tolerances, players int) ([]check, error) {
	first, last, err := thirds(samples, warmup)
	if err != nil {
		return nil, err
	}
	var checks []check
	// The load must have held, or flat figures mean nothing.
	load := func(s sample) (float64, bool) { return float64(s.Players), true }
	f, l, floor := median(first, load), median(last, load), float64(players)*(1-tol.Load)
	checks = append(checks, check{Name: "players live (soak side)", First: f, Last: l, Limit: floor,
		OK: f >= floor && l >= floor, Note: fmt.Sprintf("each third ≥ %.0f%% of %d", 100*(1-tol.Load), players)})

	for _, m := range []struct {
		name string
		f    func(sample) (float64, bool)
		tol  float64
	}{
		{"server RSS (MiB)", func(s sample) (float64, bool) { return float64(s.RSS) / (1 << 20), true }, tol.RSS},
		{"server goroutines per player", perPlayer(func(s sample) int { return s.Goroutines }), tol.Counts},
		{"server open files per player", perPlayer(func(s sample) int { return s.Files }), tol.Counts},
		{"TURN allocations per open peer connection", func(s sample) (float64, bool) {
			return float64(s.Allocations) / float64(s.Peers), s.Peers > 0
		}, tol.Counts},
		{"lobby sessions per player", perPlayer(func(s sample) int { return s.Sessions }), tol.Counts},
		{"rooms", func(s sample) (float64, bool) { return float64(s.Rooms), true }, tol.Counts},
	} {
		f, l := median(first, m.f), median(last, m.f)
		c := check{Name: m.name, First: f, Last: l, Limit: f * (1 + m.tol), OK: l <= f*(1+m.tol),
			Note: fmt.Sprintf("last ≤ first +%.0f%%", 100*m.tol)}
		if l < f*(1-m.tol) {
			c.Note += "; fell, which is no leak"
		}
		checks = append(checks, c)
	}
	return checks, nil
}

// drained checks the server after every player closed: no session, room
// or allocation left, and goroutines and open files back near what the
// idle server had before the load (the soak's own /healthz connection is
// in both).
func drained(idle, final serverFigures, slack float64) []check {
	exact := func(name string, v int) check {
		return check{Name: name, First: 0, Last: float64(v), Limit: 0, OK: v == 0, Note: "must be 0"}
	}
	near := func(name string, before, after int) check {
		limit := float64(before)*(1+slack) + 5
		return check{Name: name, First: float64(before), Last: float64(after), Limit: limit, OK: float64(after) <= limit,
			Note: fmt.Sprintf("≤ idle +%.0f%% + 5", 100*slack)}
	}
	return []check{
		exact("lobby sessions left", final.Sessions),
		exact("rooms left", final.Rooms),
		exact("TURN allocations left", final.Allocations),
		near("server goroutines (idle → after)", idle.Goroutines, final.Goroutines),
		near("server open files (idle → after)", idle.Files, final.Files),
	}
}

func allOK(cs []check) bool {
	for _, c := range cs {
		if !c.OK {
			return false
		}
	}
	return true
}

func writeChecks(w io.Writer, cs []check) { writeChecksAs(w, cs, "first", "last") }

// writeChecksAs prints checks with first and last named as the columns.
func writeChecksAs(w io.Writer, cs []check, first, last string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "figure\t%s\t%s\tlimit\t\trule\n", first, last)
	for _, c := range cs {
		mark := "ok"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, num(c.First), num(c.Last), num(c.Limit), mark, c.Note)
	}
	_ = tw.Flush()
}

func num(v float64) string {
	switch {
	case v == float64(int64(v)) && v < 1e7:
		return fmt.Sprintf("%d", int64(v))
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// tableHeader and row print the table over time.
func tableHeader() string {
	return fmt.Sprintf("%8s %7s %6s %8s %6s %7s %10s %6s %8s %7s %7s %8s",
		"t", "players", "peers", "sessions", "rooms", "allocs", "goroutines", "files", "rss MiB", "srv cpu", "soak cpu", "game/s")
}

func row(s sample) string {
	return fmt.Sprintf("%8s %7d %6d %8d %6d %7d %10d %6d %8.1f %6.0f%% %7.0f%% %8.0f",
		s.At.Round(time.Second), s.Players, s.Peers, s.Sessions, s.Rooms, s.Allocations, s.Goroutines, s.Files,
		float64(s.RSS)/(1<<20), 100*s.ServerCPU, 100*s.SoakCPU, s.GameRate)
}

// condensed picks at most n rows spread evenly over the samples, the last
// always included.
func condensed(samples []sample, n int) []sample {
	if len(samples) <= n || n < 2 {
		return samples
	}
	out := make([]sample, 0, n)
	for i := range n {
		out = append(out, samples[i*(len(samples)-1)/(n-1)])
	}
	return out
}

// cpuSummary is the mean and the peak of the server's and the soak's CPU
// over the samples after warm-up, in cores.
func cpuSummary(samples []sample, warmup time.Duration) string {
	var n int
	var srv, soak, srvPeak, soakPeak float64
	for _, s := range samples {
		if s.At < warmup {
			continue
		}
		n++
		srv += s.ServerCPU
		soak += s.SoakCPU
		srvPeak, soakPeak = max(srvPeak, s.ServerCPU), max(soakPeak, s.SoakCPU)
	}
	if n == 0 {
		return "no samples after warm-up"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "server %.2f cores mean (peak %.2f), soak players %.2f cores mean (peak %.2f), together %.2f",
		srv/float64(n), srvPeak, soak/float64(n), soakPeak, (srv+soak)/float64(n))
	return b.String()
}

// phaseFigures are what a flood comparison judges in one phase: the p99 of
// the players' lobby round trip and of their game packets' one-way latency,
// with how many of each were timed.
type phaseFigures struct {
	LobbyRTT, Game time.Duration
	LobbyN, GameN  uint64
}

// minPhaseSamples: a p99 over fewer timings than this says little.
const minPhaseSamples = 200

// floodChecks compares the flood phase with the quiet one: each p99 may
// exceed the quiet phase's by at most tol. A p99 that falls passes.
func floodChecks(quiet, flood phaseFigures, tol float64) []check {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	one := func(name string, q, f time.Duration, qn, fn uint64) check {
		c := check{Name: name, First: ms(q), Last: ms(f), Limit: ms(q) * (1 + tol), OK: ms(f) <= ms(q)*(1+tol),
			Note: fmt.Sprintf("flood ≤ quiet +%.0f%%", 100*tol)}
		if q > 0 {
			c.Note += fmt.Sprintf(" (ratio %.2f)", float64(f)/float64(q))
		}
		if qn < minPhaseSamples || fn < minPhaseSamples {
			c.OK = false
			c.Note = fmt.Sprintf("too few timings to judge (%d quiet, %d flood; at least %d each)", qn, fn, minPhaseSamples)
		}
		return c
	}
	return []check{
		one("lobby round trip p99 (ms)", quiet.LobbyRTT, flood.LobbyRTT, quiet.LobbyN, flood.LobbyN),
		one("game one-way latency p99 (ms)", quiet.Game, flood.Game, quiet.GameN, flood.GameN),
	}
}
