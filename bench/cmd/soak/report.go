package main

import (
	"fmt"
	"io"
	"time"
)

// report is the end of a run: the table over time, the verdict, what
// players saw, and what the server and the SDK logged.
type report struct {
	cfg         config
	s           *soak
	srv         *hostrelay
	samples     []sample
	idle, final serverFigures
	drainTook   time.Duration
	exitErr     error
	interrupted bool
	unraised    []string
	// Kernel UDP buffer drops over the run, machine-wide.
	udpRcvbuf, udpSndbuf uint64
}

// write prints the report and returns whether the run passed.
func (r report) write(w io.Writer) bool {
	c := r.s.c
	ok := true
	fmt.Fprintf(w, "\n== soak summary (%d samples; rows spread over the run)\n%s\n", len(r.samples), tableHeader())
	for _, s := range condensed(r.samples, 16) {
		fmt.Fprintln(w, row(s))
	}

	fmt.Fprintf(w, "\n== flatness: the last third against the first, after a %v warm-up\n", r.cfg.warmup)
	checks, err := flatness(r.samples, r.cfg.warmup, r.cfg.tol, r.cfg.players)
	if err != nil {
		fmt.Fprintln(w, "NOT JUDGED:", err)
		ok = false
	} else {
		writeChecks(w, checks)
		ok = ok && allOK(checks)
	}

	fmt.Fprintf(w, "\n== drain: %v after the last player closed (bound %v)\n", r.drainTook.Round(100*time.Millisecond), r.cfg.drainBound)
	dc := drained(r.idle, r.final, r.cfg.tol.Counts)
	writeChecks(w, dc)
	ok = ok && allOK(dc)
	fmt.Fprintf(w, "server RSS idle %.1f MiB, after %.1f MiB (not judged: the runtime returns memory lazily)\n",
		float64(r.idle.RSS)/(1<<20), float64(r.final.RSS)/(1<<20))
	if r.exitErr != nil {
		fmt.Fprintf(w, "FAIL server exit after SIGTERM: %v\n", r.exitErr)
		ok = false
	} else {
		fmt.Fprintln(w, "server exit after SIGTERM: 0")
	}

	fmt.Fprintln(w, "\n== players")
	fmt.Fprintf(w, "churn: %d joins, %d leaves, %d rejoins, %d cuts (%d resumed), %d host migrations, %d rooms closed and reopened\n",
		c.joins.Load(), c.leaves.Load(), c.rejoins.Load(), c.resumesAsked.Load(), c.resumed.Load(), c.migrations.Load(), c.cycles.Load())
	fmt.Fprintf(w, "channels opened when due: %d; time to open: %s\n", c.opens.Load(), &r.s.openTime)
	sent, recv, lost := c.gameSent.Load(), c.gameRecv.Load(), c.gameLost.Load()
	loss := 0.0
	if recv+lost > 0 {
		loss = float64(lost) / float64(recv+lost)
	}
	fmt.Fprintf(w, "game packets: %d sent, %d received, %d missing between arrivals (%.4f%%; limit %.4f%%), %d dropped by the SDK's full queue\n",
		sent, recv, lost, 100*loss, 100*r.cfg.maxLoss, c.sdkDropped.Load())
	fmt.Fprintf(w, "game one-way latency: %s\n", &r.s.latency)
	fmt.Fprintf(w, "lobby round trip (setReady → OK, every %v per player in a room): %s; %d probes failed (a leave racing them; not judged)\n",
		r.cfg.probeEvery, &r.s.lobbyRTT, c.probeErrors.Load())
	d := r.final.Dropped
	fmt.Fprintf(w, "where packets were dropped: TURN queue overflow %d, bandwidth limit %d, peer policy %d, stray %d (server /healthz); "+
		"kernel UDP receive-buffer drops %d, send-buffer %d (the whole machine, /proc/net/snmp)\n",
		d.Overflow-r.idle.Dropped.Overflow, d.Bandwidth-r.idle.Dropped.Bandwidth, d.Policy-r.idle.Dropped.Policy,
		d.Stray-r.idle.Dropped.Stray, r.udpRcvbuf, r.udpSndbuf)
	fmt.Fprintf(w, "reliable events: %d sent, %d received\n", c.eventsSent.Load(), c.eventsRecv.Load())
	fmt.Fprintf(w, "sends to a peer that had just closed (io: closed pipe, then PeerClosed; not a failure): %d\n", c.sendsOnClosing.Load())
	// The server must drop nothing of a room's own traffic for lack of
	// room (overflow) or by a limit honest play stays under (bandwidth).
	// Policy drops are packets still sent to a player who just left the
	// room, which nobody is waiting for.
	serverDrops := (d.Overflow - r.idle.Dropped.Overflow) + (d.Bandwidth - r.idle.Dropped.Bandwidth)
	if serverDrops > 0 {
		fmt.Fprintln(w, "FAIL the TURN server dropped game traffic (queue overflow or bandwidth limit)")
		ok = false
	}
	if loss > r.cfg.maxLoss {
		where := "in the players' own pion stacks: the server and the kernel dropped nothing, so the soak's players " +
			"were short of CPU (see CPU below); run it on a quieter machine or with fewer -players"
		if serverDrops > 0 || r.udpRcvbuf+r.udpSndbuf > 0 {
			where = "see the drops above"
		}
		fmt.Fprintf(w, "FAIL game packet loss over the limit; where: %s\n", where)
		ok = false
	}
	if recv == 0 {
		fmt.Fprintln(w, "FAIL no game packet arrived")
		ok = false
	}
	for _, f := range c.failures() {
		mark := "ok  "
		if f.n > 0 {
			mark, ok = "FAIL", false
		}
		fmt.Fprintf(w, "%s %-40s %d\n", mark, f.name, f.n)
	}
	c.mu.Lock()
	if len(c.refused) > 0 {
		fmt.Fprintf(w, "refusals by code: %v\n", c.refused)
	}
	if len(c.notes) > 0 {
		fmt.Fprintf(w, "first failures:\n")
		for _, n := range c.notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	c.mu.Unlock()

	if r.cfg.floods > 0 {
		ok = r.writeFloods(w) && ok
	}

	fmt.Fprintln(w, "\n== CPU after warm-up")
	fmt.Fprintln(w, cpuSummary(r.samples, r.cfg.warmup))
	r.srv.mu.Lock()
	warnings := topCounts(r.srv.warnings, 10)
	r.srv.mu.Unlock()
	fmt.Fprintf(w, "server warnings and errors: %s\n", orNone(joinNamed(warnings)))
	fmt.Fprintf(w, "SDK warnings: %s\n", orNone(joinNamed(r.s.sdkLogs.top(10))))
	if len(r.unraised) > 0 {
		fmt.Fprintf(w, "per-IP limits not raised: %v\n", r.unraised)
	}

	switch {
	case r.interrupted:
		fmt.Fprintln(w, "\nsoak: INTERRUPTED: figures above are partial")
		ok = false
	case ok:
		fmt.Fprintln(w, "\nsoak: PASS — flat, drained, nothing lost for players")
	default:
		fmt.Fprintln(w, "\nsoak: FAIL — see the lines marked FAIL")
	}
	return ok
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// writeFloods reports the attackers and, when the run has quiet and flood
// slices, compares the players' figures in each; it returns whether both
// passed.
func (r report) writeFloods(w io.Writer) bool {
	ok := true
	f := &r.s.fc
	var span time.Duration
	for _, win := range r.cfg.floodWindows() {
		span += win[1] - win[0]
	}
	fmt.Fprintf(w, "\n== floods: %d attackers (issue 24 items 1 and 7) for %v, %v before each reconnect; the flooders in a process of their own at nice %d, %.2f cores mean over its life\n",
		r.cfg.floods, span, r.cfg.floodRedial, r.cfg.floodNice, r.s.floodCores)
	for k := attackPongs; k <= attackBurst; k++ {
		kc := &f.kinds[k]
		fmt.Fprintf(w, "%ss: %d connections past hello (%.1f a second), %d refused before it", k, kc.conns.Load(),
			float64(kc.conns.Load())/span.Seconds(), kc.dialFailed.Load())
		if k == attackBurst {
			fmt.Fprintf(w, "; %d bursts of %d requests fully answered, %d requests refused, %d bursts late (> %v), %d sessions dropped\n",
				f.bursts.Load(), burstRequests, f.burstRefused.Load(), f.burstLate.Load(), burstBound, f.burstDropped.Load())
			continue
		}
		fmt.Fprintf(w, "; %d frames written (into the socket, until the close frame came); closed with 1008: %d, with no close frame (a reset overtook it): %d, otherwise: %d; served past %v: %d\n",
			kc.frames.Load(), kc.closed1008.Load(), kc.closedBare.Load(), kc.closedElse.Load(), floodBound, kc.servedLong.Load())
	}
	var mustBeZero []namedCount
	for k := attackPongs; k < attackBurst; k++ {
		kc := &f.kinds[k]
		mustBeZero = append(mustBeZero, namedCount{fmt.Sprintf("%ss served past %v", k, floodBound), kc.servedLong.Load()},
			namedCount{fmt.Sprintf("%ss closed otherwise than 1008", k), kc.closedElse.Load()})
	}
	mustBeZero = append(mustBeZero, namedCount{"burst sessions dropped", f.burstDropped.Load()},
		namedCount{"bursts not answered in time", f.burstLate.Load()},
		namedCount{"burst requests refused", f.burstRefused.Load()})
	for _, c := range mustBeZero {
		mark := "ok  "
		if c.n > 0 {
			mark, ok = "FAIL", false
		}
		fmt.Fprintf(w, "%s %-50s %d\n", mark, c.name, c.n)
	}
	for k := attackPongs; k <= attackBurst; k++ {
		if r.cfg.uses(k) && f.kinds[k].conns.Load() == 0 {
			fmt.Fprintf(w, "FAIL no %s got past hello: the flood did not happen\n", k)
			ok = false
		}
	}
	r.srv.mu.Lock()
	fmt.Fprintf(w, "the server's log, players and attackers together: %d lobby connections dropped as slow consumers, %d for no pong within its timeout\n",
		r.srv.slowConsumers, r.srv.pingTimeouts)
	r.srv.mu.Unlock()
	f.mu.Lock()
	if len(f.notes) > 0 {
		fmt.Fprintln(w, "attackers' first notes:")
		for _, n := range f.notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	f.mu.Unlock()
	if !r.cfg.compared() {
		fmt.Fprintln(w, "(floods for the whole run: no quiet phase to compare with)")
		return ok
	}

	fmt.Fprintf(w, "\n== players, quiet against flood (%d slices after the warm-up, quiet first)\n", r.cfg.floodPhases)
	var figs [2]phaseFigures
	for i, name := range []string{"quiet", "flood"} {
		ph := r.s.pooled(i)
		figs[i] = phaseFigures{LobbyRTT: ph.lobbyRTT.quantile(0.99), Game: ph.latency.quantile(0.99),
			LobbyN: ph.lobbyRTT.count(), GameN: ph.latency.count()}
		srv, soak := phaseCPU(r.samples, r.cfg, i)
		fmt.Fprintf(w, "%s: lobby round trip %s; game one-way latency %s; server %.2f cores, soak %.2f cores\n",
			name, &ph.lobbyRTT, &ph.latency, srv, soak)
	}
	r.writeSlices(w)
	cs := floodChecks(figs[0], figs[1], r.cfg.floodTol)
	writeChecksAs(w, cs, "quiet", "flood")
	return allOK(cs) && ok
}

// writeSlices lists each slice's p99s and says how far the flood/quiet
// ratios of the run move when the slices are labelled otherwise (noise.go).
func (r report) writeSlices(w io.Writer) {
	fmt.Fprintln(w, "p99 by slice (lobby round trip / game one-way):")
	for i := range r.s.slices {
		sl := &r.s.slices[i]
		fmt.Fprintf(w, "  %2d %s  %s / %s\n", i+1, [...]string{"quiet", "flood"}[i%2],
			roundDur(sl.lobbyRTT.quantile(0.99)), roundDur(sl.latency.quantile(0.99)))
	}
	for _, f := range []struct {
		name string
		fig  func(*phaseStats) *hist
	}{
		{"lobby round trip p99", func(p *phaseStats) *hist { return &p.lobbyRTT }},
		{"game one-way latency p99", func(p *phaseStats) *hist { return &p.latency }},
	} {
		if n, ok := relabelled(r.s.slices, f.fig, 0.99); ok {
			fmt.Fprintf(w, "%s, %s\n", f.name, n)
		}
	}
}

// phaseCPU is the mean CPU of the server and of the soak over the samples
// of phase (0 quiet, 1 flood), each sample placed by the middle of the
// interval it covers.
func phaseCPU(samples []sample, cfg config, phase int) (srv, soak float64) {
	n := 0
	for _, s := range samples {
		if cfg.phaseAt(s.At-cfg.every/2) == phase {
			srv += s.ServerCPU
			soak += s.SoakCPU
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return srv / float64(n), soak / float64(n)
}
