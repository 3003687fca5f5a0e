package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/bench/internal/wsload"
)

// The table renders every section and its targets from made-up results.
func TestTable(t *testing.T) {
	r := newResults()
	r.Started, r.Machine, r.LoadFrom, r.LoadTo = time.Unix(0, 0), "test box", "0.1", "0.2"
	for name, per := range map[string]float64{"ours": 150000, "coturn": 75000, "bare": 200000} {
		r.Forward[name] = map[int]loadgen.Saturation{}
		for _, size := range payloads {
			r.Forward[name][size] = loadgen.Saturation{
				Best:  loadgen.Step{Offered: per, PerCPUSec: per},
				Fixed: []loadgen.Step{{Offered: 40000, PerCPUSec: per / 2}},
			}
		}
	}
	r.Forward["bare"][150] = loadgen.Saturation{Best: loadgen.Step{Offered: 1, PerCPUSec: 1}, GeneratorBound: true}
	// Metrics against ours before and after, at the highest rate all three carried (125k).
	ok := func(rate, per float64) loadgen.Step { return loadgen.Step{Offered: rate, Sent: rate, PerCPUSec: per} }
	lost := loadgen.Step{Offered: 156250, Sent: 156250, Loss: 0.01}
	o := r.Forward["ours"][150]
	o.Steps = []loadgen.Step{ok(100000, 150000), ok(125000, 160000), lost}
	r.Forward["ours"][150] = o
	r.Forward[oursMetrics] = map[int]loadgen.Saturation{150: {Best: ok(140000, 180000),
		Steps: []loadgen.Step{ok(100000, 140000), ok(125000, 152000), lost, ok(140000, 180000)}}}
	r.Forward[oursAgain] = map[int]loadgen.Saturation{150: {Best: ok(125000, 150000),
		Steps: []loadgen.Step{ok(100000, 148000), ok(125000, 150000), lost}}}
	for _, name := range []string{"ours", "coturn", "bare"} {
		r.Latency[name] = map[int]loadgen.Step{}
		r.DirectAt[name] = map[int]loadgen.Step{}
		for _, pct := range []int{10, 50, 80} {
			r.Latency[name][pct] = loadgen.Step{Offered: 1000, P50: 30 * time.Microsecond, P99: time.Hour}
			r.DirectAt[name][pct] = loadgen.Step{P50: 5 * time.Microsecond, P99: 10 * time.Microsecond}
		}
	}
	r.Cycles["ours"], r.Cycles["coturn"] = CyclesResult{PerCPUSec: 8000}, CyclesResult{PerCPUSec: 4000}
	r.AllocMem["ours"], r.AllocMem["coturn"] = 20<<20, 28<<20
	r.Idle["ours"] = wsload.IdleResult{Sessions: 10000, RSSPerSession: 15 << 10}
	r.Idle["bare"] = wsload.IdleResult{Sessions: 10000, RSSPerSession: 30 << 10}
	r.Idle["ours-tls"] = wsload.IdleResult{Sessions: 10000, RSSPerSession: 11 << 10}
	step := func(rate, perCPU float64) wsload.FanoutResult {
		return wsload.FanoutResult{Rate: rate, PerSecond: rate * 10000, PerCPUSec: perCPU}
	}
	r.Fanout["ours"] = FanoutLadder{Steps: []wsload.FanoutResult{step(1, 90), step(2, 95)}, Best: step(2, 95)}
	r.Fanout["bare"] = FanoutLadder{Steps: []wsload.FanoutResult{step(1, 80), step(2, 70), {Rate: 4, Drops: 0.5, ServerCPU: 0.5}}, Best: step(2, 70)}
	r.Latency["bare"][50] = loadgen.Step{Offered: 1000, P50: 30 * time.Microsecond, P99: 2 * time.Millisecond}
	r.Browser = &BrowserResult{Runs: []float64{200, 210}, MedianMs: 205}
	r.Cluster = &ClusterResult{Joins: 300, LocalP50: 600 * time.Microsecond, LocalP99: time.Millisecond,
		RemoteP50: 1500 * time.Microsecond, RemoteP99: 2 * time.Millisecond, Rooms: 500, Offered: 10000, Carried: 3500,
		LagP50: 27 * time.Millisecond, LagP99: 53 * time.Millisecond, PerCPUSec: 6400, Listed: 360,
		ListLagP50: 117 * time.Millisecond, ListLagP99: 210 * time.Millisecond}
	r.Capacity = &CapacityResult{Steps: []CapacityStep{{Players: 7, Step: loadgen.Step{CoreBusy: 0.5, ServerCPU: 0.25, GenCoreBusy: 0.4}}},
		StoppedBy: "generator", GeneratorBound: true, Generator: "mux"}
	r.Capacity.best(7, r.Capacity.Steps[0].Step)
	r.Notes = []string{"a note"}

	var b bytes.Buffer
	r.Table(&b)
	out := b.String()
	for _, want := range []string{
		"| 150k | 75k | 0k | 2.00× | 150000.00× | ours ≥ 3× coturn: **not met** |", "| 75k | 38k | 100k | 2.00× | 0.75× |",
		"≥ 0k†", "≥ 20 ms", "ours p99 ≤ bare's at the same rate: **not met**",
		"0.6 ms / 1.0 ms; 1.5 ms / 2.0 ms", "remote/local p50 2.50×", "3500/s (27.0 ms / 53.0 ms); 6400; 360/s (117.0 ms / 210.0 ms)",
		"| TURN forwarding 150 B with metrics scraped every 1s: packets per server CPU-second | 152k |  |  |  |  | ≥ 0.97× ours without, at 125k/s (0.98×; ours' two runs 6.5 % apart): met |", "8000 | 4000", "≤ 12 KB: **not met**",
		"| idle lobby session over TLS terminated by the server, 10000 sessions: RSS per session | 11.0 KB |  |  |  |  | ≤ 12 KB: met |",
		"lobby fan-out at 20000 deliveries/s", "95; 0.0 ms |  | 70; 0.0 ms |  | 1.36× | ≥ 1.0× bare per CPU-second: met", "≥ 20000†", "≤ 400 ms: met", "≥ 7 (generator-bound)", "- a note",
		"players carried ÷ the server core's busy fraction at that step, at least the server's CPU-s/s (7 ÷ 0.50); per server CPU-second (÷ 0.25 CPU-s/s); load generator mux, its core busy 0.40 | 14; 28 |",
		"≥ 3,000 players per server core: **not met**",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// The metrics row compares runs at one rate: the highest every run carried,
// never a bisection's rate only one run tried, nor a step with loss.
func TestCommonRate(t *testing.T) {
	ok := func(rate, per float64) loadgen.Step { return loadgen.Step{Offered: rate, Sent: rate, PerCPUSec: per} }
	lossy := func(rate float64) loadgen.Step { return loadgen.Step{Offered: rate, Sent: rate, Loss: 0.5} }
	a := loadgen.Saturation{Steps: []loadgen.Step{ok(100, 1), ok(125, 2), ok(156.25, 3), lossy(195.3125), ok(170, 4)}}
	b := loadgen.Saturation{Steps: []loadgen.Step{ok(100, 5), ok(125, 6), lossy(156.25), ok(140, 7)}}
	at, found := commonRate(a, b)
	if !found || at[0].Offered != 125 || at[0].PerCPUSec != 2 || at[1].PerCPUSec != 6 {
		t.Fatalf("common rate = %+v, %v; want both runs' 125/s steps", at, found)
	}
	if _, found := commonRate(a, loadgen.Saturation{Steps: []loadgen.Step{ok(90, 1), lossy(100)}}); found {
		t.Fatal("found a common rate where none was carried by both")
	}
	if got := metricsCost(a, loadgen.Saturation{Best: ok(90, 1)}, loadgen.Saturation{}); !strings.Contains(got, "no rate carried by every run") {
		t.Fatalf("metrics row without a common rate: %q", got)
	}
}

// A capacity ladder's end is put down to what stopped it.
func TestCapacityStoppedBy(t *testing.T) {
	for _, c := range []struct {
		st   loadgen.Step
		want string
	}{
		{loadgen.Step{Offered: 100, Sent: 96, Loss: 0.01, CoreBusy: 1}, "generator"},
		{loadgen.Step{Offered: 100, Sent: 100, Loss: 0.01, CoreBusy: 1, GenDrops: 3}, "generator"},
		{loadgen.Step{Offered: 100, Sent: 100, Loss: 0.01, CoreBusy: 0.8}, "unsaturated"},
		{loadgen.Step{Offered: 100, Sent: 100, Loss: 0.01, CoreBusy: 0.95, ServerCPU: 0.9}, "server"},
		{loadgen.Step{Offered: 100, Sent: 100, Loss: 0.01, CoreBusy: 0.96, ServerCPU: 0.4}, "unsaturated"}, // others on its core
		{loadgen.Step{Offered: 100, Sent: 100, Loss: 0.01, CoreBusy: -1}, "server"},
	} {
		if got := stoppedBy(c.st); got != c.want {
			t.Errorf("stoppedBy(%+v) = %q, want %q", c.st, got, c.want)
		}
	}

	r := newResults()
	r.Capacity = &CapacityResult{Steps: []CapacityStep{
		{Players: 2520, Step: loadgen.Step{CoreBusy: 0.9, ServerCPU: 0.3, Loss: 0.1}}, // measured again:
		{Players: 2520, Step: loadgen.Step{CoreBusy: 0.6, ServerCPU: 0.7}},            // busy undercounted: 0.7 it is
		{Players: 3024, Step: loadgen.Step{CoreBusy: 0.86, ServerCPU: 0.8, Loss: 0.02}},
	}, StoppedBy: "unsaturated", Generator: "mux"}
	r.Capacity.best(2520, r.Capacity.Steps[1].Step)
	var b bytes.Buffer
	r.Table(&b)
	for _, want := range []string{"≥ 2520 (loss at 3024 with the server at 0.80 CPU-s/s, its core 86 % busy: not the server's limit)", "(2520 ÷ 0.70); per server CPU-second (÷ 0.70 CPU-s/s)", "| 3600; 3600 |", "players per server core: met"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
