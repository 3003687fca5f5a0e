package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/bench/internal/wsload"
	"github.com/hostrelay/hostrelay/internal/testcert"
)

// driver runs the sections. Servers go on serverCPU; the driver itself (the
// load) runs wherever run.sh pinned it.
type driver struct {
	hostrelay string // bin/hostrelay
	bins      string // directory of the bench binaries
	serverCPU int
	loadCPU   int
	quick     bool
	// capacityGen is the capacity run's load generator: "mux" or "sockets".
	capacityGen string
	res         *Results
}

func (d *driver) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// steps scales a duration down for quick (smoke) runs.
func (d *driver) steps(long time.Duration) time.Duration {
	if d.quick {
		return long / 10
	}

	return long
}

// turnTarget is a TURN server under test and how to get credentials for it.
type turnTarget struct {
	name  string
	addr  *net.UDPAddr
	pid   int
	creds func(ctx context.Context, rooms, size int) ([]loadgen.Creds, func(), error)
	stop  func()
}

func (d *driver) startTURN(ctx context.Context, name string) (*turnTarget, error) {
	switch name {
	case "ours", oursMetrics, oursAgain, oursNoGSO:
		var extra []string
		switch name {
		case oursMetrics:
			extra = []string{"-metrics-addr", "127.0.0.1:0"}
		case oursNoGSO:
			extra = []string{"-turn-gso", "off"}
		}
		h, err := startHostrelay(ctx, d.hostrelay, d.serverCPU, extra...)
		if err != nil {
			return nil, err
		}
		addr, _ := net.ResolveUDPAddr("udp4", h.turnUDP)
		url := "ws://" + h.http + "/ws"
		stop := h.stop
		if name == oursMetrics {
			if h.metrics == "" {
				h.stop()

				return nil, fmt.Errorf("benchrun: hostrelay started with -metrics-addr but logged no metrics address")
			}
			scrapeCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); scrape(scrapeCtx, "http://"+h.metrics+"/metrics", scrapeEvery) }()
			stop = func() { cancel(); <-done; h.stop() }
		}

		return &turnTarget{name: name, addr: addr, pid: h.pid, stop: stop,
			creds: func(ctx context.Context, rooms, size int) ([]loadgen.Creds, func(), error) {
				return loadgen.LobbyRooms(ctx, url, rooms, size)
			}}, nil
	case "coturn":
		c, err := startCoturn(ctx, d.serverCPU)
		if err != nil {
			return nil, err
		}
		addr, _ := net.ResolveUDPAddr("udp4", c.addr)
		n := 0

		return &turnTarget{name: name, addr: addr, pid: c.pid, stop: c.stop,
			creds: func(_ context.Context, rooms, size int) ([]loadgen.Creds, func(), error) {
				cs := make([]loadgen.Creds, rooms*size)
				for i := range cs {
					n++
					cs[i] = loadgen.RESTCreds(c.secret, fmt.Sprintf("bench-%d", n), 6*time.Hour)
				}

				return cs, func() {}, nil
			}}, nil
	}

	return nil, fmt.Errorf("unknown TURN target %q", name)
}

// turnPairs sets up n allocation pairs (each pair a room of 2 for ours).
func (t *turnTarget) pairs(ctx context.Context, n int) ([]loadgen.Pair, func(), error) {
	creds, closeCreds, err := t.creds(ctx, n, 2)
	if err != nil {
		return nil, nil, err
	}
	ps, err := loadgen.TURNPairs(ctx, t.addr, n, func(i int) loadgen.Creds { return creds[i] })
	if err != nil {
		closeCreds()

		return nil, nil, err
	}

	return ps, func() { loadgen.ClosePairs(ps); closeCreds() }, nil
}

const pairs = 25

// fanoutRates are the chat lines per second per session of the fan-out
// ladder; 1,000 sessions in rooms of 10 make 10,000 deliveries/s per step.
var fanoutRates = []float64{1, 2, 4, 6, 8, 12, 16, 24, 32} //nolint:gochecknoglobals // a read-only table

var payloads = []int{150, 60} //nolint:gochecknoglobals // a read-only table

// oursMetrics is hostrelay with its Prometheus listener on and scraped
// every scrapeEvery (15 times Prometheus' default 15 s), beside "ours" in
// the forwarding ladder: what metrics cost the fast path.
const (
	oursMetrics = "ours+metrics"
	scrapeEvery = time.Second
)

// oursNoGSO is hostrelay with -turn-gso off: what segmented sends bring,
// measured beside ours in the same run.
const oursNoGSO = "ours-gso-off"

// oursAgain is ours measured a second time, right after oursMetrics: metrics
// are judged against both runs of ours around them (A-B-A), and the two runs
// of ours show how much a ladder moves on its own. A single ours, minutes
// before, moved more (±4 %) than the 3 % the target allows.
const oursAgain = "ours-again"

// scrape fetches url every interval until ctx ends, reading each answer
// whole as Prometheus does.
func scrape(ctx context.Context, url string, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
}

// forward: the rate ladder for each target and payload size (hostrelay with
// metrics, again without, and with GSO off, at 150 B only: none depends on
// the size).
func (d *driver) forward(ctx context.Context) error {
	for _, name := range []string{"ours", oursMetrics, oursAgain, oursNoGSO, "coturn", "bare"} {
		var ps []loadgen.Pair
		var closePairs, stop func()
		pid := 0
		if name == "bare" {
			var addr string
			p, err := start(ctx, "bareudp", d.serverCPU, listeningAddr(&addr), filepath.Join(d.bins, "bareudp"))
			if err != nil {
				return err
			}
			stop, pid = p.stop, p.pid
			ua, _ := net.ResolveUDPAddr("udp4", addr)
			if ps, err = loadgen.BarePairs(ctx, ua, pairs); err != nil {
				stop()

				return err
			}
			closePairs = func() { loadgen.ClosePairs(ps) }
		} else {
			t, err := d.startTURN(ctx, name)
			if err != nil {
				return err
			}
			stop, pid = t.stop, t.pid
			if ps, closePairs, err = t.pairs(ctx, pairs); err != nil {
				stop()

				return err
			}
		}
		d.res.Forward[name] = map[int]loadgen.Saturation{}
		for _, size := range payloads {
			if (name == oursMetrics || name == oursAgain || name == oursNoGSO) && size != payloads[0] {
				continue
			}
			d.logf("forward: %s, %d B", name, size)
			sat, err := loadgen.Saturate(ctx, loadgen.SaturateConfig{
				Pairs: ps, Payload: size, Start: 20000, Factor: 1.25, Limit: 600000,
				Step: d.steps(2 * time.Second), PID: pid, Fixed: []float64{40000},
				Log: func(s loadgen.Step) {
					d.logf("  %s %dB offered %.0f sent %.0f delivered %.0f loss %.4f%% cpu %.2f core %.2f perCPUs %.0f",
						name, size, s.Offered, s.Sent, s.Delivered, 100*s.Loss, s.ServerCPU, s.CoreBusy, s.PerCPUSec)
				},
			})
			if err != nil {
				closePairs()
				stop()

				return err
			}
			d.res.Forward[name][size] = sat
		}
		closePairs()
		stop()
	}

	return nil
}

// latency: one-way delay at 10, 50 and 80 % of each target's 150 B
// saturation rate, and the direct loopback path at the same rates. The bare
// relay runs at ours' rates: the floor a Go relay on this machine sets.
func (d *driver) latency(ctx context.Context) error {
	for _, name := range []string{"ours", "coturn", "bare"} {
		rateOf := name
		if name == "bare" {
			rateOf = "ours"
		}
		sat := d.res.Forward[rateOf][150].Best.Offered
		if sat == 0 {
			sat = map[string]float64{"ours": 100000, "coturn": 60000}[rateOf]
			d.res.Notes = append(d.res.Notes, fmt.Sprintf("latency: no saturation measured for %s; assumed %.0f packets/s", rateOf, sat))
		}
		var ps []loadgen.Pair
		var closePairs, stop func()
		pid := 0
		if name == "bare" {
			var addr string
			p, err := start(ctx, "bareudp", d.serverCPU, listeningAddr(&addr), filepath.Join(d.bins, "bareudp"))
			if err != nil {
				return err
			}
			stop, pid = p.stop, p.pid
			ua, _ := net.ResolveUDPAddr("udp4", addr)
			if ps, err = loadgen.BarePairs(ctx, ua, pairs); err != nil {
				stop()

				return err
			}
			closePairs = func() { loadgen.ClosePairs(ps) }
		} else {
			t, err := d.startTURN(ctx, name)
			if err != nil {
				return err
			}
			stop, pid = t.stop, t.pid
			if ps, closePairs, err = t.pairs(ctx, pairs); err != nil {
				stop()

				return err
			}
		}
		direct, err := loadgen.DirectPairs(ctx, pairs)
		if err != nil {
			closePairs()
			stop()

			return err
		}
		d.res.Latency[name] = map[int]loadgen.Step{}
		d.res.DirectAt[name] = map[int]loadgen.Step{}
		for _, pct := range []int{10, 50, 80} {
			rate := sat * float64(pct) / 100
			st, err := loadgen.LatencyAt(ctx, ps, 150, rate, d.steps(3*time.Second), pid)
			if err != nil {
				return err
			}
			ds, err := loadgen.LatencyAt(ctx, direct, 150, rate, d.steps(3*time.Second), 0)
			if err != nil {
				return err
			}
			d.logf("latency: %s %d%% (%.0f/s): p50 %v p99 %v loss %.4f%%; direct p50 %v p99 %v",
				name, pct, rate, st.P50, st.P99, 100*st.Loss, ds.P50, ds.P99)
			d.res.Latency[name][pct], d.res.DirectAt[name][pct] = st, ds
		}
		loadgen.ClosePairs(direct)
		closePairs()
		stop()
	}

	return nil
}

// cycles: allocation cycles per server CPU-second, then the memory of 1,000
// live allocations on a fresh server.
func (d *driver) cycles(ctx context.Context) error {
	const workers = 16
	for _, name := range []string{"ours", "coturn"} {
		t, err := d.startTURN(ctx, name)
		if err != nil {
			return err
		}
		creds, closeCreds, err := t.creds(ctx, workers, 1)
		if err != nil {
			t.stop()

			return err
		}
		cpu := &loadgen.CPUMeter{PID: t.pid}
		r := loadgen.Cycles(ctx, t.addr, workers, d.steps(5*time.Second), func(i int) loadgen.Creds { return creds[i] }, cpu.Mark)
		cr := CyclesResult{Cycles: r.Cycles, Failures: r.Failures, PerSec: float64(r.Cycles) / r.Elapsed.Seconds()}
		if cpu.Used > 0 {
			cr.PerCPUSec = float64(r.Cycles) / cpu.Used.Seconds()
		}
		if r.FirstErr != nil {
			cr.Err = r.FirstErr.Error()
		}
		d.logf("cycles: %s %d cycles (%d failed), %.0f/s, %.0f per CPU-second %s", name, cr.Cycles, cr.Failures, cr.PerSec, cr.PerCPUSec, cr.Err)
		d.res.Cycles[name] = cr
		closeCreds()
		t.stop()

		n := 1000
		if d.quick {
			n = 100
		}
		if t, err = d.startTURN(ctx, name); err != nil {
			return err
		}
		creds, closeCreds, err = t.creds(ctx, 10, 1)
		if err != nil {
			t.stop()

			return err
		}
		time.Sleep(500 * time.Millisecond)
		before, _ := loadgen.RSS(t.pid)
		held, err := loadgen.Hold(ctx, t.addr, n, func(i int) loadgen.Creds { return creds[i%len(creds)] })
		if err != nil {
			closeCreds()
			t.stop()

			return err
		}
		time.Sleep(time.Second)
		after, _ := loadgen.RSS(t.pid)
		held.Release()
		d.res.AllocMem[name] = float64(after-before) * 1000 / float64(n)
		d.logf("allocations: %s %d live: RSS %d -> %d", name, n, before, after)
		closeCreds()
		t.stop()
	}

	return nil
}

// lobby: idle sessions' memory, then the fan-out ladder.
func (d *driver) lobby(ctx context.Context) error {
	if err := d.idle(ctx); err != nil {
		return err
	}
	return d.fanout(ctx)
}

// idle: the memory of idle lobby sessions, over plain HTTP and over TLS
// terminated by the server itself (-tls-cert): the lobby alone (ours, for
// Go heap figures), a bare coder/websocket server, and the whole binary.
func (d *driver) idle(ctx context.Context) error {
	n := 10000
	if d.quick {
		n = 500
	}
	dir, err := os.MkdirTemp("", "hostrelay-bench-tls")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	certs, err := testcert.Write(dir, 24*time.Hour, "127.0.0.1")
	if err != nil {
		return err
	}
	tlsArgs := []string{"-tls-cert", certs.CertFile, "-tls-key", certs.KeyFile}
	tr := &http.Transport{TLSClientConfig: certs.ClientConfig("127.0.0.1")}
	defer tr.CloseIdleConnections()
	trusting := &http.Client{Transport: tr}
	for _, name := range []string{"ours", "ours-tls", "bare", "hostrelay", "hostrelay-tls"} {
		secure := strings.HasSuffix(name, "-tls")
		scheme, wsScheme, client := "http", "ws", (*http.Client)(nil)
		if secure {
			scheme, wsScheme, client = "https", "wss", trusting
		}
		var url, memURL string
		var p *proc
		var err error
		switch name {
		case "ours", "ours-tls", "bare":
			bin := map[string]string{"ours": "lobbyserver", "ours-tls": "lobbyserver", "bare": "wsbare"}[name]
			args := []string{filepath.Join(d.bins, bin)}
			if secure {
				args = append(args, tlsArgs...)
			}
			var addr string
			if p, err = start(ctx, bin, d.serverCPU, listeningAddr(&addr), args...); err != nil {
				return err
			}
			url, memURL = wsScheme+"://"+addr+"/ws", scheme+"://"+addr+"/debug/mem"
		case "hostrelay", "hostrelay-tls":
			var extra []string
			if secure {
				extra = append(tlsArgs, "-turn-tls", "127.0.0.1:0")
			}
			h, err := startHostrelay(ctx, d.hostrelay, d.serverCPU, extra...)
			if err != nil {
				return err
			}
			p, url = h.proc, wsScheme+"://"+h.http+"/ws"
		}
		kind := wsload.Ours
		if name == "bare" {
			kind = wsload.Bare
		}
		time.Sleep(300 * time.Millisecond)
		r, err := wsload.MeasureIdle(ctx, kind, url, client, memURL, p.pid, n, 0)
		p.stop()
		if err != nil {
			return fmt.Errorf("idle %s: %w", name, err)
		}
		d.logf("idle: %s %d sessions: RSS %.1f KB, heap %.1f KB, stacks %.1f KB, %.1f goroutines per session",
			name, n, r.RSSPerSession/1024, r.HeapPerSession/1024, r.StackPerSession/1024, r.GoroutinesPer)
		d.res.Idle[name] = r
	}
	return nil
}

// fanout: the lobby's chat fan-out ladder, ours against the bare harness.
func (d *driver) fanout(ctx context.Context) error {
	sessions := 1000
	if d.quick {
		sessions = 100
	}
	for _, name := range []string{"ours", "bare"} {
		var addr string
		var p *proc
		var err error
		if name == "ours" {
			// The chat limit (1 line/s per session) is policy, not capacity:
			// raise it to find the capacity.
			p, err = start(ctx, "lobbyserver", d.serverCPU, listeningAddr(&addr), filepath.Join(d.bins, "lobbyserver"),
				"-chat-rate", "1000", "-chat-burst", "1000", "-message-rate", "1000", "-message-burst", "1000")
		} else {
			p, err = start(ctx, "wsbare", d.serverCPU, listeningAddr(&addr), filepath.Join(d.bins, "wsbare"))
		}
		if err != nil {
			return err
		}
		kind := map[string]wsload.Kind{"ours": wsload.Ours, "bare": wsload.Bare}[name]
		f, err := wsload.OpenFanout(ctx, kind, "ws://"+addr+"/ws", sessions, 10)
		if err != nil {
			p.stop()

			return fmt.Errorf("fanout %s: %w", name, err)
		}
		var ladder FanoutLadder
		for _, rate := range fanoutRates {
			cpu := &loadgen.CPUMeter{PID: p.pid}
			r := f.Run(ctx, rate, d.steps(4*time.Second), time.Second, cpu.Mark)
			if cpu.Used > 0 {
				r.ServerCPU = cpu.Used.Seconds() / cpu.Wall.Seconds()
				r.PerCPUSec = float64(r.Delivered) / cpu.Used.Seconds()
			}
			r.CoreBusy = loadgen.SendingBusy(cpu, d.steps(4*time.Second))
			d.logf("fanout: %s %.0f lines/s/session: %.0f deliveries/s, p99 %v, dropped %.3f%%, refused %d, closed %d, cpu %.2f core %.2f",
				name, rate, r.PerSecond, r.P99, 100*r.Drops, r.Refused, r.Closed, r.ServerCPU, r.CoreBusy)
			r.Rate = rate
			ladder.Steps = append(ladder.Steps, r)
			if r.Drops >= loadgen.MaxLoss || r.Refused > 0 || r.Closed > 0 || r.SendErrors > 0 {
				break
			}
			ladder.Best, ladder.Rate = r, rate
		}
		f.Close()
		p.stop()
		d.res.Fanout[name] = ladder
	}

	return nil
}

// browser: share link → first game packet in headless Chromium, by the
// bench/browser script against a pinned hostrelay: Chromium on the load core,
// then free to use both.
func (d *driver) browser(ctx context.Context, root string) error {
	h, err := startHostrelay(ctx, d.hostrelay, d.serverCPU)
	if err != nil {
		return err
	}
	defer h.stop()
	runs := "10"
	if d.quick {
		runs = "2"
	}
	run := func(pin bool) (*BrowserResult, error) {
		out := filepath.Join(os.TempDir(), "bench-browser-"+randomHex(4)+".json")
		defer os.Remove(out)
		argv := []string{filepath.Join(root, "node_modules/.bin/vitest"), "run", "--config", "bench/browser/vitest.config.ts"}
		if pin {
			argv = append([]string{"taskset", "-c", fmt.Sprint(d.loadCPU)}, argv...)
		} else {
			// Let Chromium and node use every core (this process is pinned).
			argv = append([]string{"taskset", "-c", fmt.Sprintf("0-%d", runtime.NumCPU()-1)}, argv...)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...) //nolint:gosec // our own script
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "BENCH_URL=http://"+h.http, "BENCH_OUT="+out, "BENCH_RUNS="+runs)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("browser bench: %w", err)
		}
		b, err := os.ReadFile(out) //nolint:gosec // the file the browser bench was told to write
		if err != nil {
			return nil, err
		}
		var br BrowserResult
		if err := json.Unmarshal(b, &br); err != nil {
			return nil, fmt.Errorf("browser bench output: %w", err)
		}

		return &br, nil
	}
	pinned, err := run(true)
	if err != nil {
		return err
	}
	d.logf("browser (pinned): runs %v ms, median %.0f ms", pinned.Runs, pinned.MedianMs)
	d.res.Browser = pinned
	if pinned.Unpinned, err = run(false); err != nil {
		return err
	}
	d.logf("browser (both cores): runs %v ms, median %.0f ms", pinned.Unpinned.Runs, pinned.Unpinned.MedianMs)

	return nil
}

// capacity: players in rooms of 8 (a host and 7 players, the host holding one
// allocation per player) at 30 Hz inputs and 20 Hz snapshots of 100 B, more
// each step, until loss reaches 0.1 % or the generator cannot keep up. Every
// allocation is an emulated client of one loopback socket (loadgen.Mux) with
// its own 127.x.y.z address; -capacity-generator sockets uses a socket per
// allocation instead, as before (the generator then gives out near 2,000
// players).
func (d *driver) capacity(ctx context.Context) error {
	t, err := d.startTURN(ctx, "ours")
	if err != nil {
		return err
	}
	defer t.stop()
	const roomSize = 8
	ladder := []int{252, 504, 1008, 1512, 2016, 2520, 3024, 3528, 4032}
	if d.quick {
		ladder = []int{14, 28}
	}
	var closers []func()
	defer func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}()
	gen, err := d.capacityGenerator(ctx, t, roomSize, 2*ladder[len(ladder)-1])
	if err != nil {
		return err
	}
	// Deferred after the closers: the allocations go before the lobby
	// sessions that own them, as before.
	defer gen.close()
	res := &CapacityResult{Generator: d.capacityGen}
	d.res.Capacity = res
	have := 0
	for _, players := range ladder {
		add := players - have
		rooms := add / (roomSize - 1)
		creds, closeCreds, err := t.creds(ctx, rooms, roomSize)
		if err != nil {
			return err
		}
		closers = append(closers, closeCreds)
		if err := gen.add(add, func(room, member int) loadgen.Creds { return creds[room*roomSize+member] }); err != nil {
			return err
		}
		have = players
		st, err := gen.measure(d.steps(4 * time.Second))
		if err != nil {
			return err
		}
		if !loadgen.Carried(st) && stoppedBy(st) == "unsaturated" {
			// The server had room on its core, or shared it: once more
			// before calling it, as other work on a shared machine can cost
			// a step its loss.
			d.logf("capacity: %d players: loss %.4f%% with the server at %.2f CPU-s/s, its core %.2f busy; measuring again",
				players, 100*st.Loss, st.ServerCPU, st.CoreBusy)
			res.Steps = append(res.Steps, CapacityStep{Players: players, Step: st})
			if st, err = gen.measure(d.steps(4 * time.Second)); err != nil {
				return err
			}
		}
		d.logf("capacity: %d players: offered %.0f sent %.0f delivered %.0f loss %.4f%% cpu %.2f core %.2f p99 %v; generator cpu %.2f core %.2f; socket drops generator %d other %d",
			players, st.Offered, st.Sent, st.Delivered, 100*st.Loss, st.ServerCPU, st.CoreBusy, st.P99, st.GenCPU, st.GenCoreBusy, st.GenDrops, st.OtherDrops)
		res.Steps = append(res.Steps, CapacityStep{Players: players, Step: st})
		if !loadgen.Carried(st) {
			res.StoppedBy = stoppedBy(st)
			res.GeneratorBound = res.StoppedBy == "generator"

			break
		}
		res.best(players, st)
	}
	res.LadderTop = res.Players == ladder[len(ladder)-1]

	return nil
}

// capacityLoad is the capacity run's load: it adds players and measures them all.
type capacityLoad struct {
	add     func(players int, creds func(room, member int) loadgen.Creds) error
	measure func(d time.Duration) (loadgen.Step, error)
	close   func()
}

func (d *driver) capacityGenerator(ctx context.Context, t *turnTarget, roomSize, clients int) (*capacityLoad, error) {
	switch d.capacityGen {
	case "mux":
		m, err := loadgen.NewMux(loadgen.MuxConfig{Clients: clients})
		if err != nil {
			return nil, err
		}

		return pairLoad(func() { _ = m.Close() },
			func(n int, creds func(room, member int) loadgen.Creds) ([]loadgen.MuxGamePair, func(), error) {
				return loadgen.MuxGamePairs(ctx, m, t.addr, n, roomSize, creds)
			},
			func(all []loadgen.MuxGamePair, dur time.Duration) (loadgen.Step, error) {
				return loadgen.MeasureGameMux(ctx, m, all, 100, 30, 20, dur, t.pid)
			}), nil
	case "sockets":
		return pairLoad(func() {},
			func(n int, creds func(room, member int) loadgen.Creds) ([]loadgen.GamePair, func(), error) {
				return loadgen.GamePairs(ctx, t.addr, n, roomSize, creds)
			},
			func(all []loadgen.GamePair, dur time.Duration) (loadgen.Step, error) {
				return loadgen.MeasureGame(ctx, all, 100, 30, 20, dur, t.pid)
			}), nil
	}

	return nil, fmt.Errorf("unknown capacity generator %q (mux or sockets)", d.capacityGen)
}

// pairLoad is a capacityLoad on one generator's pairs: add opens more,
// measure runs all of them, close closes them, newest first, then the
// generator (closeGenerator).
func pairLoad[P any](closeGenerator func(),
	open func(n int, creds func(room, member int) loadgen.Creds) ([]P, func(), error),
	run func(all []P, d time.Duration) (loadgen.Step, error),
) *capacityLoad {
	var all []P
	closers := []func(){closeGenerator}

	return &capacityLoad{
		add: func(n int, creds func(room, member int) loadgen.Creds) error {
			ps, closePairs, err := open(n, creds)
			if err != nil {
				return err
			}
			closers = append(closers, closePairs)
			all = append(all, ps...)

			return nil
		},
		measure: func(d time.Duration) (loadgen.Step, error) { return run(all, d) },
		close: func() {
			for _, c := range slices.Backward(closers) {
				c()
			}
		},
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}

	return strings.Join(strings.Fields(string(b))[:3], " ")
}
