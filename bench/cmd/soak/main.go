// Command soak is `make soak`: it starts the real bin/hostrelay on free
// loopback ports and runs players of the Go client SDK (real pion peers,
// relay-only through the server's TURN, mDNS off, UDP4) in rooms with churn
// (joins, leaves, resumes of a cut lobby connection, host migrations, rooms
// closing and reopening) and game traffic on both data channels, for a
// fixed time. It samples the server's RSS, open files, goroutines (from the
// -debug-addr pprof listener), sessions, rooms and TURN allocations, prints
// them over time, and judges whether they stayed flat; it also counts what
// players would have noticed. Exit status 0 only if flat, drained and
// without player-visible failures.
//
//	soak -hostrelay bin/hostrelay [-duration 30m] [-players 500] [-room-size 8]
//
// Every flag also reads SOAK_<NAME> (SOAK_DURATION=2m SOAK_PLAYERS=48).
// Method and tolerances: docs/benchmarks.md#soak.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/protocol"
)

type config struct {
	bin        string
	duration   time.Duration
	warmup     time.Duration
	every      time.Duration // sampling interval
	players    int
	roomSize   int
	hz         int
	packet     int
	churnEvery time.Duration
	joinRate   float64
	openBound  time.Duration
	stallBound time.Duration
	drainBound time.Duration
	seatGrace  time.Duration
	turnTCP    bool
	maxLoss    float64
	tol        tolerances
	serverArgs string
	serverLog  string
	probeEvery time.Duration // each player's lobby round-trip probe

	floods      int           // attackers beside the players (issue 24 items 1 and 7)
	floodPhases int           // slices after warm-up, quiet and flood in turn; 1: floods the whole run
	floodRedial time.Duration // an attacker's pause before reconnecting
	floodTol    float64       // how far the flood phase's p99 may exceed the quiet phase's
	floodNice   int           // the flooders' process's nice value
	floodKinds  []attackKind  // the kinds of attacker, in turn
	gcPercent   int           // the soak process's own GOGC
}

func parseConfig(args []string, getenv func(string) string, usage io.Writer) (config, error) {
	c := config{tol: defaultTolerances}
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&c.bin, "hostrelay", "bin/hostrelay", "the server binary (started here on loopback ports)")
	fs.DurationVar(&c.duration, "duration", 30*time.Minute, "how long the load runs")
	fs.IntVar(&c.players, "players", 500, "players kept live")
	fs.IntVar(&c.roomSize, "room-size", 8, "players per room, host included")
	fs.IntVar(&c.hz, "hz", 10, "game packets per second on each link, each way (inputs up, snapshots down); one reliable event a second")
	fs.IntVar(&c.packet, "packet", 64, "bytes per game packet")
	fs.DurationVar(&c.churnEvery, "churn-every", 30*time.Second,
		"mean time between churn actions in a room (a client leaves, rejoins, is cut and resumes; the host leaves)")
	fs.Float64Var(&c.joinRate, "join-rate", 20, "new lobby sessions per second at most (the ramp, then churn)")
	fs.DurationVar(&c.warmup, "warmup", 0, "time after the load starts that the verdict ignores (default: a sixth of -duration, at least the ramp + 30s)")
	fs.DurationVar(&c.every, "sample", 0, "sampling interval (default: -duration/90, between 2s and 20s)")
	fs.DurationVar(&c.openBound, "open-bound", 15*time.Second, "data channels must open within this of being due (a join, a new host)")
	fs.DurationVar(&c.stallBound, "stall-bound", 5*time.Second, "an open link silent this long counts as a stall")
	fs.DurationVar(&c.drainBound, "drain-bound", time.Minute, "after the players leave, how long the server has to return to idle")
	fs.DurationVar(&c.seatGrace, "seat-grace", 20*time.Second, "the server's -seat-grace (a cut player must resume within it)")
	fs.BoolVar(&c.turnTCP, "turn-tcp", true, "offer TURN over TCP as well as UDP, as a browser gets it (two allocations per peer connection)")
	fs.Float64Var(&c.maxLoss, "max-loss", 0.001, "game packets that may go missing, as a fraction of those sent")
	fs.Float64Var(&c.tol.Counts, "tolerance", c.tol.Counts, "growth allowed from the first to the last third for goroutines, files, allocations, sessions, rooms")
	fs.Float64Var(&c.tol.RSS, "tolerance-rss", c.tol.RSS, "growth allowed from the first to the last third for RSS")
	fs.StringVar(&c.serverArgs, "server-args", "", "extra flags for the server, space-separated (after the soak's own)")
	fs.StringVar(&c.serverLog, "server-log", "", "write the server's whole log (JSON lines) to this file")
	fs.DurationVar(&c.probeEvery, "probe-every", 2*time.Second, "how often each player in a room times a lobby request (setReady to its current value: an OK, no broadcast); 0: never")
	fs.IntVar(&c.floods, "floods", 0, "attackers beside the players: a third unsolicited-pong flooders, a third endless-message flooders "+
		"(empty continuation frames), a third readers of 90-request bursts (issue 24 items 1 and 7)")
	fs.IntVar(&c.floodPhases, "flood-phases", 2, "with -floods: the time after warm-up is cut into this many slices, quiet and flood in turn "+
		"(quiet first), and the players' p99s are compared; 1: floods for the whole run, nothing compared")
	kinds := "pongs,endless,bursts"
	fs.StringVar(&kinds, "flood-kinds", kinds, "with -floods: the kinds of attacker, taken in turn (pongs, endless, bursts); one kind alone tells what each costs the players")
	fs.DurationVar(&c.floodRedial, "flood-redial", 100*time.Millisecond, "an attacker's pause before it reconnects after the server closed it")
	fs.IntVar(&c.floodNice, "flood-nice", 19, "nice value of the flooders' process: a real attacker's CPU is its own machine's, "+
		"here it would starve the players on the same cores; 0: the players' priority")
	fs.IntVar(&c.gcPercent, "gogc", 400, "the soak process's own GC percent (the server keeps its own): the players' pion stacks allocate for every "+
		"packet, and at Go's default of 100 the collector's assists in the measuring process were most of the players' p99 (lobby 26 against 7 ms)")
	fs.Float64Var(&c.floodTol, "flood-tolerance", 0.10, "how far the flood slices' lobby round-trip and game latency p99 may exceed the quiet slices'")
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := "SOAK_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("%s: %w", name, err))
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.floodKinds, err = parseKinds(kinds); err != nil {
		return c, err
	}
	switch {
	case c.roomSize < 2 || c.roomSize > protocol.MaxPlayers:
		return c, fmt.Errorf("-room-size %d: must be between 2 and %d", c.roomSize, protocol.MaxPlayers)
	case c.players < c.roomSize:
		return c, fmt.Errorf("-players %d: must be at least -room-size %d", c.players, c.roomSize)
	case c.hz < 1 || c.hz > 120:
		return c, fmt.Errorf("-hz %d: must be between 1 and 120", c.hz)
	case c.duration <= 0 || c.joinRate <= 0 || c.churnEvery <= 0:
		return c, errors.New("-duration, -join-rate and -churn-every must be positive")
	case c.floods < 0 || c.floodPhases < 1 || c.probeEvery < 0 || c.floodRedial < 0:
		return c, errors.New("-floods, -probe-every and -flood-redial must not be negative, -flood-phases at least 1")
	}
	if c.warmup == 0 {
		ramp := time.Duration(float64(c.players) / c.joinRate * float64(time.Second))
		c.warmup = max(c.duration/6, ramp+30*time.Second)
	}
	if c.every == 0 {
		c.every = min(max(c.duration/90, 2*time.Second), 20*time.Second)
	}
	if c.floods > 0 && c.floodPhases > 1 && c.warmup >= c.duration {
		return c, fmt.Errorf("-floods with -flood-phases %d: the warm-up %v leaves nothing of -duration %v to compare", c.floodPhases, c.warmup, c.duration)
	}
	return c, nil
}

// compared reports whether the run compares quiet and flood slices.
func (c config) compared() bool { return c.floods > 0 && c.floodPhases > 1 }

// phaseAt is the phase of the comparison at t since the load started: -1
// none (warm-up, or no comparison), 0 quiet, 1 flood.
func (c config) phaseAt(t time.Duration) int {
	if i := c.sliceAt(t); i >= 0 {
		return i % 2
	}
	return -1
}

// sliceAt is the slice of the comparison at t since the load started (even:
// quiet, odd: flood), -1 if none.
func (c config) sliceAt(t time.Duration) int {
	if !c.compared() || t < c.warmup {
		return -1
	}
	slice := (c.duration - c.warmup) / time.Duration(c.floodPhases)
	return min(int((t-c.warmup)/slice), c.floodPhases-1)
}

// floodWindows are the spans, since the load started, in which the
// attackers run.
func (c config) floodWindows() [][2]time.Duration {
	switch {
	case c.floods == 0:
		return nil
	case c.floodPhases == 1:
		return [][2]time.Duration{{0, c.duration}}
	}
	slice := (c.duration - c.warmup) / time.Duration(c.floodPhases)
	var w [][2]time.Duration
	for i := 1; i < c.floodPhases; i += 2 {
		end := c.warmup + time.Duration(i+1)*slice
		if i+1 == c.floodPhases {
			end = c.duration
		}
		w = append(w, [2]time.Duration{c.warmup + time.Duration(i)*slice, end})
	}
	return w
}

// soak is the state the players share.
type soak struct {
	cfg      config
	url      string
	c        *counters
	pace     *rate.Limiter
	nextID   atomic.Int64
	sdkLog   *slog.Logger
	sdkLogs  *logCounter
	openTime hist // from a channel being due to open to PeerOpen
	latency  hist // one way, sender to receiver, game packets
	lobbyRTT hist // a lobby request to its reply (the players' probes)
	start    time.Time
	slices   []phaseStats // one per slice of a flood comparison, quiet first
	fc       floodCounters
	// floodCores is the flooders' process's mean CPU over its life.
	floodCores float64
}

// phaseStats are the players' figures in one phase of a flood comparison.
type phaseStats struct {
	latency, lobbyRTT hist
}

// phase is the slice of the comparison the run is in now, or nil outside
// one.
func (s *soak) phase() *phaseStats {
	if i := s.cfg.sliceAt(time.Since(s.start)); i >= 0 && i < len(s.slices) {
		return &s.slices[i]
	}
	return nil
}

// pooled is phase's slices (0 quiet, 1 flood) together.
func (s *soak) pooled(phase int) *phaseStats {
	var p phaseStats
	for i := phase; i < len(s.slices); i += 2 {
		p.latency.merge(&s.slices[i].latency)
		p.lobbyRTT.merge(&s.slices[i].lobbyRTT)
	}
	return &p
}

// rewriteICE keeps TURN over UDP only, unless -turn-tcp.
func (s *soak) rewriteICE(ice protocol.ICE) protocol.ICE {
	if s.cfg.turnTCP {
		return ice
	}
	out := ice
	out.Servers = nil
	for _, srv := range ice.Servers {
		var urls []string
		for _, u := range srv.URLs {
			if strings.HasSuffix(u, "transport=udp") {
				urls = append(urls, u)
			}
		}
		srv.URLs = urls
		out.Servers = append(out.Servers, srv)
	}
	return out
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == floodChildArg {
		if err := runFloodChild(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "soak "+floodChildArg+":", err)
			os.Exit(2)
		}
		return
	}
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, out io.Writer) (bool, error) {
	defer debug.SetGCPercent(debug.SetGCPercent(cfg.gcPercent))
	names, err := flagNames(ctx, cfg.bin)
	if err != nil {
		return false, err
	}
	var args []string
	for _, f := range serverFlags(cfg.players, cfg.floods) {
		if !names[strings.TrimPrefix(f[0], "-")] {
			return false, fmt.Errorf("%s has no %s flag: rebuild it (make soak does)", cfg.bin, f[0])
		}
		args = append(args, f[0], f[1])
	}
	args = append(args, "-seat-grace", cfg.seatGrace.String())
	args = append(args, strings.Fields(cfg.serverArgs)...)
	var unraised []string
	for n := range names {
		if strings.Contains(n, "per-ip") && !raisedPerIP[n] && !strings.Contains(cfg.serverArgs, "-"+n) {
			unraised = append(unraised, "-"+n)
		}
	}

	var serverLog io.Writer
	if cfg.serverLog != "" {
		f, err := os.Create(cfg.serverLog)
		if err != nil {
			return false, err
		}
		defer f.Close()
		serverLog = f
	}
	srv, err := startHostrelay(ctx, cfg.bin, args, serverLog)
	if err != nil {
		return false, err
	}
	defer srv.stop() //nolint:errcheck // stopped and reported below; this is for early returns
	fmt.Fprintf(out, "soak: %d players in rooms of %d for %v, %d Hz × %d B each way per link, churn every %v per room (mean), TURN over UDP%s\n",
		cfg.players, cfg.roomSize, cfg.duration, cfg.hz, cfg.packet, cfg.churnEvery, map[bool]string{true: " and TCP", false: ""}[cfg.turnTCP])
	fmt.Fprintf(out, "soak: server pid %d, http %s, debug %s; warm-up %v, a sample every %v\n", srv.pid, srv.http, srv.debug, cfg.warmup, cfg.every)
	if cfg.floods > 0 {
		var ws []string
		for _, w := range cfg.floodWindows() {
			ws = append(ws, fmt.Sprintf("%v–%v", w[0].Round(time.Second), w[1].Round(time.Second)))
		}
		fmt.Fprintf(out, "soak: %d attackers (pong flooders, endless-message flooders, 90-request burst readers in turn) at %s\n",
			cfg.floods, strings.Join(ws, ", "))
	}
	if len(unraised) > 0 {
		fmt.Fprintf(out, "soak: WARNING: the server has per-IP limits the soak does not raise: %s (pass them with SOAK_SERVER_ARGS)\n", strings.Join(unraised, ", "))
	}
	idle, err := srv.read(ctx)
	if err != nil {
		return false, err
	}
	rcvbuf0, sndbuf0 := udpErrors()

	sdkLogs := newLogCounter()
	s := &soak{cfg: cfg, url: "ws://" + srv.http + "/ws", c: newCounters(), sdkLogs: sdkLogs, sdkLog: slog.New(sdkLogs),
		pace: rate.NewLimiter(rate.Limit(cfg.joinRate), 1)}
	if cfg.compared() {
		s.slices = make([]phaseStats, cfg.floodPhases)
	}

	loadCtx, cancelLoad := context.WithTimeout(ctx, cfg.duration)
	defer cancelLoad()
	start := time.Now()
	s.start = start
	var samples []sample
	var sampleErr error
	sampling := make(chan struct{})
	// Sampling ends with the load: rows taken while players close would
	// drag the last third down.
	go func() {
		defer close(sampling)
		samples, sampleErr = s.sampleLoop(loadCtx, srv, start, out)
	}()

	var wg sync.WaitGroup
	for i := 0; i*cfg.roomSize < cfg.players; i++ {
		d := &roomDriver{s: s, migrate: i%2 == 0, size: min(cfg.roomSize, cfg.players-i*cfg.roomSize),
			rng: rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))} //nolint:gosec // load shape, not secrets
		if d.size < 2 {
			break
		}
		wg.Add(1)
		go func() { defer wg.Done(); d.run(loadCtx) }()
	}
	floodsDone := make(chan struct{})
	var floodErr error
	go func() { defer close(floodsDone); s.floodCores, floodErr = s.floods(loadCtx) }()
	<-loadCtx.Done()
	<-floodsDone
	interrupted := ctx.Err() != nil
	<-sampling // out is the sampler's until it ends
	fmt.Fprintf(out, "soak: load over after %v; closing every player\n", time.Since(start).Round(time.Second))
	wg.Wait()
	if err := errors.Join(sampleErr, floodErr); err != nil {
		return false, err
	}

	// Drain: every player has closed; the server must let go of everything.
	final, took, err := waitDrained(context.WithoutCancel(ctx), srv, idle, cfg.drainBound)
	if err != nil {
		select {
		case <-srv.done:
			return false, fmt.Errorf("the server exited during the drain (%s): %w\n%s", fmt.Sprint(srv.exitErr()), err, srv.output())
		default:
			return false, err
		}
	}
	rcvbuf1, sndbuf1 := udpErrors()
	exitErr := srv.stop()

	r := report{cfg: cfg, s: s, srv: srv, samples: samples, idle: idle, final: final, drainTook: took,
		exitErr: exitErr, interrupted: interrupted, unraised: unraised,
		udpRcvbuf: rcvbuf1 - rcvbuf0, udpSndbuf: sndbuf1 - sndbuf0}
	return r.write(out), nil
}

// sampleLoop reads the server and the soak's counters every cfg.every and
// prints each row as it comes.
func (s *soak) sampleLoop(ctx context.Context, srv *hostrelay, start time.Time, out io.Writer) ([]sample, error) {
	var samples []sample
	tick := time.NewTicker(s.cfg.every)
	defer tick.Stop()
	fmt.Fprintln(out, tableHeader())
	prevAt, prevRecv := time.Now(), s.c.gameRecv.Load()
	prevSrv, _ := loadgen.CPUTime(srv.pid)
	prevSelf, _ := loadgen.CPUTime(os.Getpid())
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return samples, nil
		case <-tick.C:
		}
		f, err := srv.read(ctx)
		if ctx.Err() != nil {
			return samples, nil // the players are already closing
		}
		if err != nil {
			// One slow read under load is not the end of the run; a server
			// that stops answering is.
			if failures++; failures >= 3 {
				return samples, fmt.Errorf("reading the server: %w", err)
			}
			continue
		}
		failures = 0
		now := time.Now()
		self, _ := loadgen.CPUTime(os.Getpid())
		recv := s.c.gameRecv.Load()
		secs := now.Sub(prevAt).Seconds()
		sm := sample{At: now.Sub(start), Players: s.c.players.Load(), Peers: s.c.peers.Load(), serverFigures: f,
			ServerCPU: (f.CPU - prevSrv).Seconds() / secs, SoakCPU: (self - prevSelf).Seconds() / secs,
			GameRate: float64(recv-prevRecv) / secs}
		prevAt, prevRecv, prevSrv, prevSelf = now, recv, f.CPU, self
		samples = append(samples, sm)
		fmt.Fprintln(out, row(sm))
	}
}

// waitDrained polls the server until nothing of the players is left or
// bound passes, and returns the last reading and how long it took.
func waitDrained(ctx context.Context, srv *hostrelay, idle serverFigures, bound time.Duration) (serverFigures, time.Duration, error) {
	start := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		f, err := srv.read(ctx)
		if err != nil {
			return f, 0, err
		}
		if allOK(drained(idle, f, defaultTolerances.Counts)) || time.Since(start) > bound {
			return f, time.Since(start), nil
		}
		<-tick.C
	}
}
