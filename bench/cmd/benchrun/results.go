package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/bench/internal/wsload"
)

// Results is everything one run measured; JSON goes next to the table.
type Results struct {
	Started  time.Time `json:"started"`
	Machine  string    `json:"machine"`
	LoadFrom string    `json:"loadBefore"`
	LoadTo   string    `json:"loadAfter"`
	Quick    bool      `json:"quick"`
	Notes    []string  `json:"notes"`

	// Forward[target][payload]
	Forward map[string]map[int]loadgen.Saturation `json:"forward"`
	// Latency[target][percent of saturation]; "direct" is the loopback baseline at ours' rates.
	Latency map[string]map[int]loadgen.Step `json:"latency"`
	// DirectAt[target][percent]: the direct baseline at that target's rates.
	DirectAt map[string]map[int]loadgen.Step `json:"directAt"`
	Cycles   map[string]CyclesResult         `json:"cycles"`
	AllocMem map[string]float64              `json:"allocMemPer1000"` // bytes of RSS per 1000 live allocations
	Idle     map[string]wsload.IdleResult    `json:"idle"`
	Fanout   map[string]FanoutLadder         `json:"fanout"`
	Browser  *BrowserResult                  `json:"browser,omitempty"`
	Capacity *CapacityResult                 `json:"capacity,omitempty"`
	Cluster  *ClusterResult                  `json:"cluster,omitempty"`
}

// CyclesResult is allocation cycles on one server.
type CyclesResult struct {
	Cycles    uint64  `json:"cycles"`
	Failures  uint64  `json:"failures"`
	PerSec    float64 `json:"perSec"`
	PerCPUSec float64 `json:"perCPUSec"`
	Err       string  `json:"err,omitempty"`
}

// FanoutLadder is a fan-out rate ladder and its best step.
type FanoutLadder struct {
	Steps []wsload.FanoutResult `json:"steps"`
	Best  wsload.FanoutResult   `json:"best"`
	Rate  float64               `json:"bestLinesPerSession"`
}

// BrowserResult is the share-link-to-first-packet runs.
type BrowserResult struct {
	Runs        []float64 `json:"runsMs"`
	MedianMs    float64   `json:"medianMs"`
	ChannelMs   float64   `json:"medianChannelOpenMs"`
	JoinMs      float64   `json:"medianJoinClickMs"`
	WelcomeMs   float64   `json:"medianWelcomeMs"`
	JoinedMs    float64   `json:"medianJoinedMs"`
	OfferMs     float64   `json:"medianOfferMs"`
	RelayMs     float64   `json:"medianRelayCandidateMs"`
	AnswerMs    float64   `json:"medianAnswerMs"`
	ScriptMs    float64   `json:"medianScriptStartMs"`
	DOMLoadedMs float64   `json:"medianDomContentLoadedMs"`
	// RemoteRelayMs is when the joining page added the host's first relay candidate.
	RemoteRelayMs float64 `json:"medianRemoteRelayCandidateMs"`
	// HostRelayAfterAnswerMs is, on the host page's clock, its first relay
	// candidate's time less its answer's: ≤ 0 when gathered ahead.
	HostRelayAfterAnswerMs float64 `json:"medianHostRelayAfterAnswerMs"`
	// Unpinned is the same measurement with Chromium free to use both cores.
	Unpinned *BrowserResult `json:"unpinned,omitempty"`
}

// CapacityResult is the player ladder through our TURN.
type CapacityResult struct {
	Steps []CapacityStep `json:"steps"`
	// Players is the most carried (loss < 0.1 %, ≥ 97 % of the offered rate sent).
	Players int `json:"players"`
	// StoppedBy says what ended the ladder: "generator" (it sent < 97 % of
	// the offered rate, or its own socket dropped), "server" (loss with the
	// server's core ≥ 90 % busy, mostly with the server), "unsaturated" (loss
	// with the generator keeping up but the server's core still < 90 % busy,
	// or ≥ 15 % of it taken by other work: a shared machine, or scheduling),
	// or "" (every step carried: Players is a floor).
	StoppedBy      string `json:"stoppedBy"`
	GeneratorBound bool   `json:"generatorBound"` // StoppedBy == "generator"
	LadderTop      bool   `json:"ladderTop"`      // every step carried
	// At the best carried step: players ÷ the server core's busy fraction
	// (at least the server's own CPU-s/s: /proc/stat's tick-sampled busy
	// time can miss short bursts, and the core is never less busy than the
	// process pinned to it), and players ÷ the server process's CPU-seconds
	// per second. Both extrapolate that step linearly to a whole core; 0
	// when not measured.
	PerCore   float64 `json:"playersPerServerCore"`
	CoreUsed  float64 `json:"serverCoreUsed"` // the divisor of PerCore
	PerCPUSec float64 `json:"playersPerServerCPUSecond"`
	Generator string  `json:"generator"` // "mux" or "sockets"
}

// best records a carried step as the best so far.
func (c *CapacityResult) best(players int, st loadgen.Step) {
	c.Players, c.PerCore, c.PerCPUSec = players, 0, 0
	if c.CoreUsed = max(st.CoreBusy, st.ServerCPU); st.CoreBusy >= 0 && c.CoreUsed > 0 {
		c.PerCore = float64(players) / c.CoreUsed
	}
	if st.ServerCPU > 0 {
		c.PerCPUSec = float64(players) / st.ServerCPU
	}
}

// stoppedBy classifies a step that was not carried (see StoppedBy).
func stoppedBy(st loadgen.Step) string {
	switch {
	case st.Sent < 0.97*st.Offered || st.GenDrops > 0:
		return "generator"
	case st.CoreBusy >= 0 && (max(st.CoreBusy, st.ServerCPU) < 0.9 || st.CoreBusy-st.ServerCPU >= 0.15):
		return "unsaturated"
	}

	return "server"
}

// bestStep is the step Players was measured at: the last at that count (a
// step measured again keeps both).
func (c *CapacityResult) bestStep() (loadgen.Step, bool) {
	for _, s := range slices.Backward(c.Steps) {
		if s.Players == c.Players {
			return s.Step, true
		}
	}

	return loadgen.Step{}, false
}

// CapacityStep is one player count.
type CapacityStep struct {
	Players int          `json:"players"`
	Step    loadgen.Step `json:"step"`
}

func newResults() *Results {
	return &Results{
		Forward:  map[string]map[int]loadgen.Saturation{},
		Latency:  map[string]map[int]loadgen.Step{},
		DirectAt: map[string]map[int]loadgen.Step{},
		Cycles:   map[string]CyclesResult{},
		AllocMem: map[string]float64{},
		Idle:     map[string]wsload.IdleResult{},
		Fanout:   map[string]FanoutLadder{},
	}
}

func kpps(v float64) string {
	if v == 0 {
		return "–"
	}

	return fmt.Sprintf("%.0fk", v/1000)
}

func us(d time.Duration) string {
	if d >= loadgen.HistMax {
		return "≥ 20 ms"
	}

	return fmt.Sprintf("%.0f µs", float64(d)/1e3)
}

func kb(v float64) string {
	if v == 0 {
		return "–"
	}

	return fmt.Sprintf("%.1f KB", v/1024)
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "–"
	}

	return fmt.Sprintf("%.2f×", a/b)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}

	return "**not met**"
}

// Table writes the results as one markdown table plus notes.
func (r *Results) Table(w io.Writer) {
	row := func(cells ...string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	fmt.Fprintf(w, "hostrelay benchmarks, %s, %s\n", r.Started.Format("2006-01-02 15:04 MST"), r.Machine)
	fmt.Fprintf(w, "load average before %s, after %s%s\n\n", r.LoadFrom, r.LoadTo, map[bool]string{true: " (quick run: figures are not meaningful)"}[r.Quick])
	row("measure", "ours", "coturn", "bare", "ours/coturn", "ours/bare", "target")
	row("---", "---:", "---:", "---:", "---:", "---:", "---")

	for _, size := range []int{150, 60} {
		o, c, b := r.Forward["ours"][size], r.Forward["coturn"][size], r.Forward["bare"][size]
		if o.Best.Offered == 0 && c.Best.Offered == 0 {
			continue
		}
		// Issue 16's goal, at both sizes (issue 7's was 1.2×).
		target := fmt.Sprintf("ours ≥ 3× coturn: %s", verdict(c.Best.PerCPUSec > 0 && o.Best.PerCPUSec >= 3*c.Best.PerCPUSec))
		row(fmt.Sprintf("TURN forwarding %d B: packets per server CPU-second, at the best rate", size),
			kpps(o.Best.PerCPUSec), kpps(c.Best.PerCPUSec), kpps(b.Best.PerCPUSec),
			ratio(o.Best.PerCPUSec, c.Best.PerCPUSec), ratio(o.Best.PerCPUSec, b.Best.PerCPUSec), target)
		row(fmt.Sprintf("TURN forwarding %d B: highest rate with < 0.1 %% loss (packets/s)", size),
			boundMark(o), boundMark(c), boundMark(b),
			ratio(o.Best.Offered, c.Best.Offered), ratio(o.Best.Offered, b.Best.Offered), "")
		if g := r.Forward[oursNoGSO][size]; g.Best.Offered > 0 {
			// How much of ours/coturn segmented sends make: the same server
			// sending one datagram per message.
			row(fmt.Sprintf("TURN forwarding %d B with GSO off (-turn-gso off): packets per server CPU-second", size),
				kpps(g.Best.PerCPUSec), "", "", ratio(g.Best.PerCPUSec, c.Best.PerCPUSec), ratio(g.Best.PerCPUSec, b.Best.PerCPUSec),
				fmt.Sprintf("ours with GSO: %s of this", ratio(o.Best.PerCPUSec, g.Best.PerCPUSec)))
		}
		if m := r.Forward[oursMetrics][size]; m.Best.Offered > 0 {
			// The same server with its Prometheus listener scraped every second,
			// against ours before and after it (A-B-A), at the highest rate all
			// of them carried: per CPU-second improves with the rate (fuller
			// batches), so only the same rate compares.
			row(fmt.Sprintf("TURN forwarding %d B with metrics scraped every %s: packets per server CPU-second", size, scrapeEvery),
				metricsCost(o, m, r.Forward[oursAgain][size]))
		}
		if len(o.Fixed) > 0 && len(c.Fixed) > 0 && len(b.Fixed) > 0 {
			row(fmt.Sprintf("TURN forwarding %d B: packets per server CPU-second at %s/s offered", size, kpps(o.Fixed[0].Offered)),
				kpps(o.Fixed[0].PerCPUSec), kpps(c.Fixed[0].PerCPUSec), kpps(b.Fixed[0].PerCPUSec),
				ratio(o.Fixed[0].PerCPUSec, c.Fixed[0].PerCPUSec), ratio(o.Fixed[0].PerCPUSec, b.Fixed[0].PerCPUSec), "")
		}
	}
	for _, pct := range []int{10, 50, 80} {
		o, c, b := r.Latency["ours"][pct], r.Latency["coturn"][pct], r.Latency["bare"][pct]
		do, dc, db := r.DirectAt["ours"][pct], r.DirectAt["coturn"][pct], r.DirectAt["bare"][pct]
		if o.Offered == 0 {
			continue
		}
		target := ""
		if pct == 50 && b.Offered > 0 {
			// Issue 16: batching must add no tail the bare relay does not have.
			target = "ours p99 ≤ bare's at the same rate: " + verdict(o.P99-do.P99 <= b.P99-db.P99)
		}
		cell := func(s, d loadgen.Step) string {
			if s.Offered == 0 {
				return ""
			}

			return fmt.Sprintf("%s / %s (%s/s; direct %s / %s)", us(s.P50-d.P50), us(s.P99-d.P99), kpps(s.Offered), us(d.P50), us(d.P99))
		}
		row(fmt.Sprintf("added one-way latency at %d %% of saturation, p50 / p99 (bare: at ours' rate)", pct),
			cell(o, do), cell(c, dc), cell(b, db), "", "", target)
	}
	if o, c := r.Cycles["ours"], r.Cycles["coturn"]; o.PerCPUSec > 0 || c.PerCPUSec > 0 {
		row("allocation cycles (401, Allocate, CreatePermission, ChannelBind, Refresh 0) per server CPU-second",
			fmt.Sprintf("%.0f", o.PerCPUSec), fmt.Sprintf("%.0f", c.PerCPUSec), "", ratio(o.PerCPUSec, c.PerCPUSec), "", "")
	}
	if o, c := r.AllocMem["ours"], r.AllocMem["coturn"]; o > 0 || c > 0 {
		row("RSS per 1,000 live allocations (permission + channel each)", mb(o), mb(c), "", ratio(o, c), "", "")
	}
	for _, over := range []string{"", "-tls"} {
		o, b := r.Idle["ours"+over], r.Idle["bare"+over]
		if o.Sessions == 0 {
			continue
		}
		how := "plain HTTP"
		if over != "" {
			how = "TLS terminated by the server"
		}
		bareRSS, bareMem, vs := "", "", ""
		if b.Sessions > 0 {
			bareRSS, vs = kb(b.RSSPerSession), ratio(o.RSSPerSession, b.RSSPerSession)
			bareMem = fmt.Sprintf("%s + %s (%.0f)", kb(b.HeapPerSession), kb(b.StackPerSession), b.GoroutinesPer)
		}
		row(fmt.Sprintf("idle lobby session over %s, %d sessions: RSS per session", how, o.Sessions),
			kb(o.RSSPerSession), "", bareRSS, "", vs, "≤ 12 KB: "+verdict(o.RSSPerSession <= 12*1024))
		row("idle lobby session over "+how+": Go heap + stacks per session (goroutines)",
			fmt.Sprintf("%s + %s (%.0f)", kb(o.HeapPerSession), kb(o.StackPerSession), o.GoroutinesPer), "", bareMem, "", "", "")
	}
	for _, over := range []string{"", "-tls"} {
		if h := r.Idle["hostrelay"+over]; h.Sessions > 0 {
			how := "plain HTTP"
			if over != "" {
				how = "its own TLS"
			}
			row("idle lobby session in bin/hostrelay over "+how+" (echo, TURN, everything): RSS per session", kb(h.RSSPerSession), "", "", "", "", "")
		}
	}
	if o, b := r.Fanout["ours"], r.Fanout["bare"]; len(o.Steps) > 0 {
		row("lobby fan-out, 1,000 sessions in rooms of 10: deliveries/s with < 0.1 % dropped",
			fanoutMax(o), "", fanoutMax(b), "", ratio(o.Best.PerSecond, b.Best.PerSecond), "")
		if oc, bc, ok := commonStep(o, b); ok {
			row(fmt.Sprintf("lobby fan-out at %.0f deliveries/s (the highest rate both carried): deliveries per server CPU-second; p99 delivery latency", oc.PerSecond),
				fmt.Sprintf("%.0f; %s", oc.PerCPUSec, ms(oc.P99)), "", fmt.Sprintf("%.0f; %s", bc.PerCPUSec, ms(bc.P99)), "",
				ratio(oc.PerCPUSec, bc.PerCPUSec), "≥ 1.0× bare per CPU-second: "+verdict(oc.PerCPUSec >= bc.PerCPUSec))
		}
	}
	if b := r.Browser; b != nil && len(b.Runs) > 0 {
		row(fmt.Sprintf("browser (Chromium on the load core): share link opened → first game packet, median of %d", len(b.Runs)),
			fmt.Sprintf("%.0f ms", b.MedianMs), "", "", "", "", "≤ 400 ms: "+verdict(b.MedianMs <= 400))
		row("browser: where the time goes (medians, ms from navigation start)",
			fmt.Sprintf("script runs %.0f, DOM loaded %.0f, lobby welcome %.0f, join sent %.0f, offer set %.0f, first relay candidate %.0f, join reply %.0f, answer applied %.0f, host's relay candidate added %.0f, channel open %.0f, first packet %.0f",
				b.ScriptMs, b.DOMLoadedMs, b.WelcomeMs, b.JoinMs, b.OfferMs, b.RelayMs, b.JoinedMs, b.AnswerMs, b.RemoteRelayMs, b.ChannelMs, b.MedianMs), "", "", "", "", "")
		row("browser: the host's first relay candidate after its answer is set (median, ms; ≤ 0: gathered ahead)",
			fmt.Sprintf("%.0f", b.HostRelayAfterAnswerMs), "", "", "", "", "")
		if u := b.Unpinned; u != nil && len(u.Runs) > 0 {
			row("browser with Chromium on both cores (server still pinned): link → first packet; channel open",
				fmt.Sprintf("%.0f ms; %.0f ms", u.MedianMs, u.ChannelMs), "", "", "", "", "")
		}
	}
	if c := r.Capacity; c != nil && len(c.Steps) > 0 {
		v := fmt.Sprintf("%d", c.Players)
		last := c.Steps[len(c.Steps)-1]
		switch {
		case c.LadderTop:
			v = "≥ " + v + " (the ladder's top)"
		case c.StoppedBy == "generator":
			v = "≥ " + v + " (generator-bound)"
		case c.StoppedBy == "unsaturated":
			v = fmt.Sprintf("≥ %s (loss at %d with the server at %.2f CPU-s/s, its core %.0f %% busy: not the server's limit)",
				v, last.Players, last.Step.ServerCPU, 100*last.Step.CoreBusy)
		}
		row("capacity: players at 30 Hz inputs + 20 Hz snapshots, 100 B, through TURN, < 0.1 % loss", v, "", "", "", "", "")
		if st, ok := c.bestStep(); ok && c.PerCore > 0 {
			row(fmt.Sprintf("capacity: players per server core = players carried ÷ the server core's busy fraction at that step, at least the server's CPU-s/s (%d ÷ %.2f); per server CPU-second (÷ %.2f CPU-s/s); load generator %s, its core busy %.2f",
				c.Players, c.CoreUsed, st.ServerCPU, c.Generator, st.GenCoreBusy),
				fmt.Sprintf("%.0f; %.0f", c.PerCore, c.PerCPUSec), "", "", "", "",
				"≥ 3,000 players per server core: "+verdict(c.PerCore >= 3000))
		}
	}
	if c := r.Cluster; c != nil && c.Joins > 0 {
		row(fmt.Sprintf("cluster: join by code, dial to roomJoined, p50 / p99 of %d: on the room's node; through another node (room_elsewhere, then the room's node)", c.Joins),
			fmt.Sprintf("%s / %s; %s / %s", millis(c.LocalP50), millis(c.LocalP99), millis(c.RemoteP50), millis(c.RemoteP99)), "", "", "",
			"remote/local p50 "+ratio(c.RemoteP50.Seconds(), c.LocalP50.Seconds()), "")
	}
	if c := r.Cluster; c != nil && c.Rooms > 0 {
		row(fmt.Sprintf("cluster directory, %d public rooms renamed %.0f times/s on one node: entries written to NATS per second (lag p50 / p99); per CPU-second of that node; rooms updated per second on the other node's list (lag p50 / p99)", c.Rooms, c.Offered),
			fmt.Sprintf("%.0f/s (%s / %s); %.0f; %.0f/s (%s / %s)", c.Carried, millis(c.LagP50), millis(c.LagP99), c.PerCPUSec,
				c.Listed, millis(c.ListLagP50), millis(c.ListLagP99)), "", "", "", "", "")
	}
	fmt.Fprintln(w)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
}

// fanoutMax is the best rate, marked † when the server's core still had
// 10 % idle in the step that failed (the generator gave out first).
func fanoutMax(l FanoutLadder) string {
	v := fmt.Sprintf("%.0f", l.Best.PerSecond)
	if n := len(l.Steps); n > 0 && l.Steps[n-1].Drops >= loadgen.MaxLoss && l.Steps[n-1].CoreBusy < 0.9 {
		v = "≥ " + v + "†"
	}

	return v
}

// commonStep returns both ladders' steps at the highest rate both carried.
func commonStep(a, b FanoutLadder) (wsload.FanoutResult, wsload.FanoutResult, bool) {
	var ra, rb wsload.FanoutResult
	found := false
	for _, x := range a.Steps {
		if x.Drops >= loadgen.MaxLoss {
			break
		}
		for _, y := range b.Steps {
			if y.Rate == x.Rate && y.Drops < loadgen.MaxLoss {
				ra, rb, found = x, y, true
			}
		}
	}

	return ra, rb, found
}

func boundMark(s loadgen.Saturation) string {
	v := kpps(s.Best.Offered)
	if s.GeneratorBound {
		v = "≥ " + v + "†"
	}

	return v
}

func mb(v float64) string {
	if v == 0 {
		return "–"
	}

	return fmt.Sprintf("%.1f MB", v/(1<<20))
}

func ms(d time.Duration) string {
	if d >= loadgen.HistMax {
		return "≥ 20 ms"
	}

	return fmt.Sprintf("%.1f ms", float64(d)/1e6)
}

// metricsCost is the metrics row's cells after its measure: ours with
// metrics against ours without, at the highest ladder rate the runs all
// carried (without: the mean of the runs before and after, when there was
// one after), and how far the two runs without were apart.
func metricsCost(ours, metrics, again loadgen.Saturation) string {
	runs := []loadgen.Saturation{ours, metrics}
	if again.Best.Offered > 0 {
		runs = append(runs, again)
	}
	at, ok := commonRate(runs...)
	if !ok {
		return strings.Join([]string{kpps(metrics.Best.PerCPUSec), "", "", "", "", "no rate carried by every run"}, " | ")
	}
	without := at[0].PerCPUSec
	spread := ""
	if len(at) == 3 {
		without = (at[0].PerCPUSec + at[2].PerCPUSec) / 2
		spread = fmt.Sprintf("; ours' two runs %s apart", pct(math.Abs(at[0].PerCPUSec-at[2].PerCPUSec)/without))
	}
	target := fmt.Sprintf("≥ 0.97× ours without, at %s/s (%s%s): %s", kpps(at[1].Offered), ratio(at[1].PerCPUSec, without), spread,
		verdict(without > 0 && at[1].PerCPUSec >= 0.97*without))

	return strings.Join([]string{kpps(at[1].PerCPUSec), "", "", "", "", target}, " | ")
}

// commonRate finds the highest ladder rate that each run carried with under
// the ladder's loss and returns each run's step there, in order.
func commonRate(runs ...loadgen.Saturation) ([]loadgen.Step, bool) {
	var best []loadgen.Step
	for _, cand := range runs[0].Steps {
		if !loadgen.Carried(cand) || (best != nil && cand.Offered <= best[0].Offered) {
			continue
		}
		found := []loadgen.Step{cand}
		for _, other := range runs[1:] {
			st, ok := stepAt(other, cand.Offered)
			if !ok {
				break
			}
			found = append(found, st)
		}
		if len(found) == len(runs) {
			best = found
		}
	}

	return best, best != nil
}

// stepAt is a run's carried step at rate (ladders share their rates; a
// bisection's rates are its own).
func stepAt(s loadgen.Saturation, rate float64) (loadgen.Step, bool) {
	for _, st := range s.Steps {
		if math.Abs(st.Offered-rate) <= 0.001*rate && loadgen.Carried(st) {
			return st, true
		}
	}

	return loadgen.Step{}, false
}

func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }
