package main

import (
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// steady is a run of n samples, one every 10s, of a server holding players
// with 10 goroutines and 11 files per player, 2 allocations per peer, and
// 200 MiB, with a small wobble; f may change each sample.
func steady(n, players int, f func(i int, s *sample)) []sample {
	out := make([]sample, n)
	for i := range out {
		wobble := i % 3 // 0, 1, 2
		s := sample{At: time.Duration(i) * 10 * time.Second, Players: int64(players), Peers: int64(players) * 7 / 4}
		s.Goroutines = 10*players + wobble
		s.Files = 11*players + wobble
		s.Allocations = 2*int(s.Peers) + wobble
		s.Sessions, s.Rooms = players, players/8
		s.RSS = 200<<20 + int64(wobble)<<20
		if f != nil {
			f(i, &s)
		}
		out[i] = s
	}
	return out
}

func checkNamed(t *testing.T, cs []check, prefix string) check {
	t.Helper()
	for _, c := range cs {
		if strings.HasPrefix(c.Name, prefix) {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", prefix, cs)
	return check{}
}

func failing(cs []check) []string {
	var names []string
	for _, c := range cs {
		if !c.OK {
			names = append(names, c.Name)
		}
	}
	return names
}

func TestFlatnessSteadyRunPasses(t *testing.T) {
	cs, err := flatness(steady(60, 500, nil), 100*time.Second, defaultTolerances, 500)
	if err != nil {
		t.Fatal(err)
	}
	if f := failing(cs); len(f) > 0 {
		t.Fatalf("a steady run failed %v", f)
	}
}

// TestFlatnessCatchesEachLeak: goroutines, files, allocations, sessions or
// rooms that keep growing (a leak per churn action) fail their figure and
// only it; so does RSS growing 1 MiB a sample.
func TestFlatnessCatchesEachLeak(t *testing.T) {
	for name, leak := range map[string]func(i int, s *sample){
		"server goroutines": func(i int, s *sample) { s.Goroutines += 30 * i },
		"server open files": func(i int, s *sample) { s.Files += 30 * i },
		"TURN allocations":  func(i int, s *sample) { s.Allocations += 10 * i },
		"lobby sessions":    func(i int, s *sample) { s.Sessions += 2 * i },
		"rooms":             func(i int, s *sample) { s.Rooms += i },
		"server RSS":        func(i int, s *sample) { s.RSS += int64(i) << 20 },
	} {
		cs, err := flatness(steady(60, 500, leak), 100*time.Second, defaultTolerances, 500)
		if err != nil {
			t.Fatal(err)
		}
		if f := failing(cs); len(f) != 1 || !strings.HasPrefix(f[0], name) {
			t.Errorf("leak in %s: failing %v", name, f)
		}
	}
}

// TestFlatnessLoadMustHold: a run whose players fell away says nothing
// about leaks, whatever its other figures.
func TestFlatnessLoadMustHold(t *testing.T) {
	samples := steady(60, 500, func(i int, s *sample) { s.Players -= int64(3 * i) })
	cs, err := flatness(samples, 100*time.Second, defaultTolerances, 500)
	if err != nil {
		t.Fatal(err)
	}
	if c := checkNamed(t, cs, "players live"); c.OK || c.Limit != 475 {
		t.Fatalf("%+v", c)
	}
}

// TestFlatnessIsPerPlayer: goroutines that follow the live population are
// not a leak, even when the population differs between the thirds.
func TestFlatnessIsPerPlayer(t *testing.T) {
	samples := steady(60, 420, func(i int, s *sample) {
		if i >= 40 {
			*s = steady(1, 500, nil)[0]
			s.At = time.Duration(i) * 10 * time.Second
		}
	})
	cs, err := flatness(samples, 100*time.Second, defaultTolerances, 400)
	if err != nil {
		t.Fatal(err)
	}
	if f := failing(cs); len(f) != 1 || f[0] != "rooms" {
		// Rooms are counted as they are: 19 % more players, 19 % more rooms.
		t.Fatalf("failing %v, want only rooms", f)
	}
	if g := checkNamed(t, cs, "server goroutines"); math.Abs(g.First-g.Last) > 0.01 {
		t.Fatalf("goroutines per player %v → %v", g.First, g.Last)
	}
}

// TestFlatnessAtTheTolerance: exactly at the limit passes, past it fails.
func TestFlatnessAtTheTolerance(t *testing.T) {
	for _, tc := range []struct {
		last int
		ok   bool
	}{{5500, true}, {5501, false}} {
		samples := steady(60, 500, func(i int, s *sample) {
			s.Goroutines = 5000
			if s.At >= 400*time.Second {
				s.Goroutines = tc.last
			}
		})
		cs, err := flatness(samples, 100*time.Second, defaultTolerances, 500)
		if err != nil {
			t.Fatal(err)
		}
		if g := checkNamed(t, cs, "server goroutines"); g.OK != tc.ok || g.Limit != 11 {
			t.Errorf("goroutines 5000 → %d: %+v, want ok=%v at limit 11 per player", tc.last, g, tc.ok)
		}
	}
}

// TestFlatnessIgnoresWarmup: the ramp (figures far off) is not judged.
func TestFlatnessIgnoresWarmup(t *testing.T) {
	// Half the run is warm-up, with figures far below the steady state.
	samples := steady(60, 500, func(i int, s *sample) {
		if s.At < 300*time.Second {
			s.Goroutines, s.RSS = 1, 1
		}
	})
	cs, err := flatness(samples, 300*time.Second, defaultTolerances, 500)
	if err != nil || len(failing(cs)) > 0 {
		t.Fatalf("%v %v", failing(cs), err)
	}
	// Judged from the start, the ramp looks like growth.
	cs, err = flatness(samples, 0, defaultTolerances, 500)
	if err != nil || len(failing(cs)) == 0 {
		t.Fatalf("the ramp judged and passed: %v", err)
	}
}

// TestFlatnessFallIsNoLeak: a figure that falls passes, with a note.
func TestFlatnessFallIsNoLeak(t *testing.T) {
	samples := steady(60, 500, func(i int, s *sample) {
		if s.At >= 400*time.Second {
			s.RSS /= 2
		}
	})
	cs, err := flatness(samples, 100*time.Second, defaultTolerances, 500)
	if err != nil {
		t.Fatal(err)
	}
	if c := checkNamed(t, cs, "server RSS"); !c.OK || !strings.Contains(c.Note, "fell") {
		t.Fatalf("%+v", c)
	}
}

func TestFlatnessNeedsThreeSamplesPerThird(t *testing.T) {
	// Samples at 0, 10s, … 160s with a 100s warm-up: thirds of 20s, 100–120s
	// and 140–160s, 3 samples each.
	if _, err := flatness(steady(17, 500, nil), 100*time.Second, defaultTolerances, 500); err != nil {
		t.Fatalf("3 per third refused: %v", err)
	}
	// Up to 150s: thirds of 16.7s, 2 samples each.
	if _, err := flatness(steady(16, 500, nil), 100*time.Second, defaultTolerances, 500); !errors.Is(err, errTooShort) {
		t.Fatalf("2 per third: %v", err)
	}
	for _, n := range []int{0, 5} { // nothing, or nothing after warm-up
		if _, err := flatness(steady(n, 500, nil), 100*time.Second, defaultTolerances, 500); !errors.Is(err, errTooShort) {
			t.Fatalf("%d samples: %v", n, err)
		}
	}
}

func TestDrained(t *testing.T) {
	idle := serverFigures{Goroutines: 100, Files: 20}
	clean := serverFigures{Goroutines: 115, Files: 27} // at the limit: ×1.1 + 5
	if f := failing(drained(idle, clean, 0.10)); len(f) > 0 {
		t.Fatalf("a clean drain failed %v", f)
	}
	for name, left := range map[string]serverFigures{
		"lobby sessions left":   {Goroutines: 100, Files: 20, Sessions: 1},
		"rooms left":            {Goroutines: 100, Files: 20, Rooms: 1},
		"TURN allocations left": {Goroutines: 100, Files: 20, Allocations: 1},
		"server goroutines":     {Goroutines: 116, Files: 20},
		"server open files":     {Goroutines: 100, Files: 28},
	} {
		if f := failing(drained(idle, left, 0.10)); len(f) != 1 || !strings.HasPrefix(f[0], name) {
			t.Errorf("%s: failing %v", name, f)
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	var h hist
	if h.quantile(0.5) != 0 || h.String() != "none" {
		t.Fatal("empty histogram")
	}
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	h.add(-time.Second) // a clock step: counted in the first bucket
	for q, want := range map[float64]time.Duration{0.5: 500 * time.Millisecond, 0.99: 990 * time.Millisecond, 1: time.Second} {
		got := h.quantile(q)
		// A bucket is 1/16 of a doubling wide: within 4.5 % above.
		if got < want || float64(got) > float64(want)*1.045 {
			t.Errorf("q%v = %v, want %v to +4.5%%", q, got, want)
		}
	}
}

func TestPacketRoundTrip(t *testing.T) {
	now := time.Now()
	b := packet(64, kindEvents, 0xdeadbeef, 42, now)
	kind, stream, seq, sent, ok := parsePacket(b)
	if len(b) != 64 || !ok || kind != kindEvents || stream != 0xdeadbeef || seq != 42 || !sent.Equal(now) {
		t.Fatalf("%d bytes: %v %x %d %v %v", len(b), kind, stream, seq, sent, ok)
	}
	if len(packet(4, kindGame, 1, 1, now)) != headerLen {
		t.Fatal("a packet smaller than its header")
	}
	for _, bad := range [][]byte{nil, b[:headerLen-1], append([]byte("SOAX"), b[4:]...)} {
		if _, _, _, _, ok := parsePacket(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseConfig(t *testing.T) {
	env := map[string]string{"SOAK_DURATION": "2m", "SOAK_PLAYERS": "48"}
	c, err := parseConfig([]string{"-hz", "20"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// 48 players at 20/s ramp in 2.4s: warm-up is that plus 30s, more
	// than a sixth of 2m; samples every 2s (the floor).
	if c.duration != 2*time.Minute || c.players != 48 || c.hz != 20 || c.warmup != 32400*time.Millisecond || c.every != 2*time.Second {
		t.Fatalf("%+v", c)
	}
	c, err = parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil || c.players != 500 || c.roomSize != 8 || c.warmup != 5*time.Minute || c.every != 20*time.Second {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for _, bad := range [][]string{{"-room-size", "1"}, {"-players", "7"}, {"-hz", "0"}, {"-duration", "0s"}} {
		if _, err := parseConfig(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := parseConfig(nil, func(k string) string {
		if k == "SOAK_PLAYERS" {
			return "many"
		}
		return ""
	}, io.Discard); err == nil || !strings.Contains(err.Error(), "SOAK_PLAYERS") {
		t.Errorf("bad env: %v", err)
	}
}

// The flood comparison's slices: quiet and flood in turn after the
// warm-up, the last running to the end; the attackers run in the flood
// slices only.
func TestFloodPhases(t *testing.T) {
	c := config{floods: 3, floodPhases: 4, warmup: 60 * time.Second, duration: 260 * time.Second}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{0, -1}, {59 * time.Second, -1}, {60 * time.Second, 0}, {109 * time.Second, 0}, {110 * time.Second, 1},
		{160 * time.Second, 0}, {210 * time.Second, 1}, {300 * time.Second, 1}} {
		if got := c.phaseAt(tc.at); got != tc.want {
			t.Errorf("phaseAt(%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
	w := c.floodWindows()
	want := [][2]time.Duration{{110 * time.Second, 160 * time.Second}, {210 * time.Second, 260 * time.Second}}
	if len(w) != len(want) || w[0] != want[0] || w[1] != want[1] {
		t.Fatalf("floodWindows() = %v, want %v", w, want)
	}
	c.floodPhases = 1
	if got := c.phaseAt(100 * time.Second); got != -1 {
		t.Errorf("one phase: phaseAt = %d, want -1 (nothing compared)", got)
	}
	if w := c.floodWindows(); len(w) != 1 || w[0] != [2]time.Duration{0, c.duration} {
		t.Errorf("one phase: floodWindows() = %v, want the whole run", w)
	}
	c.floods = 0
	if w := c.floodWindows(); w != nil || c.phaseAt(100*time.Second) != -1 {
		t.Errorf("no floods: windows %v", w)
	}
}

// The flood phase's p99s may exceed the quiet phase's by the tolerance;
// past it, or with too few timings, the check fails.
func TestFloodChecks(t *testing.T) {
	quiet := phaseFigures{LobbyRTT: 10 * time.Millisecond, Game: 100 * time.Millisecond, LobbyN: 1000, GameN: 1000}
	for _, tc := range []struct {
		name  string
		flood phaseFigures
		fail  []string
	}{
		{"same", quiet, nil},
		{"faster", phaseFigures{LobbyRTT: time.Millisecond, Game: time.Millisecond, LobbyN: 1000, GameN: 1000}, nil},
		{"at the limit", phaseFigures{LobbyRTT: 11 * time.Millisecond, Game: 110 * time.Millisecond, LobbyN: 1000, GameN: 1000}, nil},
		{"lobby past", phaseFigures{LobbyRTT: 12 * time.Millisecond, Game: 100 * time.Millisecond, LobbyN: 1000, GameN: 1000},
			[]string{"lobby round trip p99 (ms)"}},
		{"game past", phaseFigures{LobbyRTT: 10 * time.Millisecond, Game: 111 * time.Millisecond, LobbyN: 1000, GameN: 1000},
			[]string{"game one-way latency p99 (ms)"}},
		{"too few", phaseFigures{LobbyRTT: 10 * time.Millisecond, Game: 100 * time.Millisecond, LobbyN: 10, GameN: 1000},
			[]string{"lobby round trip p99 (ms)"}},
	} {
		got := failing(floodChecks(quiet, tc.flood, 0.10))
		if strings.Join(got, ",") != strings.Join(tc.fail, ",") {
			t.Errorf("%s: failing %v, want %v", tc.name, got, tc.fail)
		}
	}
}

// -flood-kinds chooses the attackers' kinds, taken in turn; a word that
// names no kind is refused.
func TestFloodKinds(t *testing.T) {
	c, err := parseConfig([]string{"-floods", "4", "-flood-kinds", "bursts, pongs"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := []attackKind{c.kindOf(0), c.kindOf(1), c.kindOf(2), c.kindOf(3)}
	if want := []attackKind{attackBurst, attackPongs, attackBurst, attackPongs}; !slices.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	if !c.uses(attackPongs) || !c.uses(attackBurst) || c.uses(attackEndless) {
		t.Fatalf("uses: %v %v %v", c.uses(attackPongs), c.uses(attackEndless), c.uses(attackBurst))
	}
	if kindsArg(c.floodKinds) != "bursts,pongs" {
		t.Fatalf("kindsArg %q", kindsArg(c.floodKinds))
	}
	c, err = parseConfig([]string{"-floods", "1"}, func(string) string { return "" }, io.Discard)
	if err != nil || c.uses(attackEndless) || c.uses(attackBurst) || !c.uses(attackPongs) {
		t.Fatalf("one attacker of the default kinds: %v %v", c.floodKinds, err)
	}
	if _, err := parseConfig([]string{"-flood-kinds", "pongs,pings"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), `"pings"`) {
		t.Fatalf("an unknown kind: %v", err)
	}
}
