// Command benchrun is `make bench`: it starts each server under test pinned
// to one core (taskset), drives it from this process (pinned to the other by
// bench/run.sh), counts work per server CPU-second from /proc/<pid>/stat, and
// prints one markdown table of figures and ratios. Progress goes to stderr.
//
//	benchrun -hostrelay bin/hostrelay -bins bin/bench [-quick] [-sections forward,latency,...]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	hostrelay := flag.String("hostrelay", "bin/hostrelay", "the hostrelay binary")
	bins := flag.String("bins", "bin/bench", "directory of the bench binaries")
	root := flag.String("root", ".", "repository root (for the browser script)")
	serverCPU := flag.Int("server-cpu", 0, "core the servers are pinned to")
	loadCPU := flag.Int("load-cpu", 1, "core the load runs on (this process and the browser)")
	quick := flag.Bool("quick", false, "short steps and small counts: checks the rig, figures meaningless")
	sections := flag.String("sections", "forward,latency,cycles,lobby,browser,capacity,cluster", "sections to run (idle: lobby's idle sessions alone)")
	jsonOut := flag.String("json", "", "also write the results as JSON here")
	capacityGen := flag.String("capacity-generator", "mux",
		"capacity load: mux (every allocation an address of one loopback socket) or sockets (a socket per allocation)")
	flag.Parse()
	runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &driver{hostrelay: *hostrelay, bins: *bins, serverCPU: *serverCPU, loadCPU: *loadCPU, quick: *quick,
		capacityGen: *capacityGen, res: newResults()}
	d.res.Started, d.res.Quick = time.Now(), *quick
	d.res.Machine = machine()
	d.res.LoadFrom = loadavg()
	if la := strings.Fields(d.res.LoadFrom); len(la) > 0 && busy(la[0]) {
		d.res.Notes = append(d.res.Notes, "the machine was busy when the run started (load average "+d.res.LoadFrom+"): other work shares the cores")
	}
	failed := false
	for _, s := range strings.Split(*sections, ",") {
		var err error
		switch strings.TrimSpace(s) {
		case "forward":
			err = d.forward(ctx)
		case "latency":
			err = d.latency(ctx)
		case "cycles":
			err = d.cycles(ctx)
		case "lobby":
			err = d.lobby(ctx)
		case "idle": // lobby's first half alone
			err = d.idle(ctx)
		case "browser":
			err = d.browser(ctx, *root)
		case "capacity":
			err = d.capacity(ctx)
		case "cluster":
			err = d.cluster(ctx)
		case "":
		default:
			err = fmt.Errorf("unknown section %q", s)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", s, err)
			d.res.Notes = append(d.res.Notes, fmt.Sprintf("section %s failed: %v", s, err))
			failed = true
		}
		if ctx.Err() != nil {
			break
		}
	}
	d.res.LoadTo = loadavg()
	d.res.Notes = append(d.res.Notes,
		"† the generator, not the server, stopped the ladder: it could not send the offered rate, or the server's core was still ≥ 10 % idle when loss appeared (each has one core)",
		"CPU is utime+stime of the server process from /proc/<pid>/stat; kernel softirq work for loopback delivery is charged to whichever task sends")
	d.res.Table(os.Stdout)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(d.res, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil { //nolint:gosec // results
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// busy reports a load average of 1 or more.
func busy(load string) bool {
	v, err := strconv.ParseFloat(load, 64)

	return err == nil && v >= 1
}

func machine() string {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))

				break
			}
		}
	}
	return fmt.Sprintf("%d × %s, %s, %s", runtime.NumCPU(), model, kernel(), runtime.Version())
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "linux"
	}

	return "Linux " + strings.TrimSpace(string(b))
}
