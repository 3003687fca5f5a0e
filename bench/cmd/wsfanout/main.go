// Command wsfanout loads a lobby WebSocket server: idle sessions for memory,
// or rooms whose members chat for fan-out. It speaks hostrelay's lobby
// protocol (-kind ours) or the bare harness's (-kind bare, bench/cmd/wsbare)
// and prints one JSON line per result.
//
//	wsfanout -url ws://127.0.0.1:8080/ws -pid 1234 -n 10000 idle
//	wsfanout -url ws://127.0.0.1:9000/ws -kind bare -pid 1234 -sessions 1000 -rate 2 fanout
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/bench/internal/wsload"
)

func main() {
	url := flag.String("url", "", "WebSocket URL of the server")
	kind := flag.String("kind", "ours", "ours (hostrelay lobby) or bare (wsbare)")
	mem := flag.String("mem", "", "the server's /debug/mem URL, for Go heap figures")
	pid := flag.Int("pid", 0, "server PID to meter")
	n := flag.Int("n", 10000, "idle: sessions")
	sessions := flag.Int("sessions", 1000, "fanout: sessions")
	roomSize := flag.Int("room", 10, "fanout: room size")
	rate := flag.Float64("rate", 1, "fanout: lines per second per session")
	d := flag.Duration("d", 5*time.Second, "fanout: sending time")
	hold := flag.Duration("hold", 0, "idle: keep the sessions open this long after measuring (for profiling)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out := json.NewEncoder(os.Stdout)
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "wsfanout:", err)
		os.Exit(1)
	}
	switch flag.Arg(0) {
	case "idle":
		res, err := wsload.MeasureIdle(ctx, wsload.Kind(*kind), *url, nil, *mem, *pid, *n, *hold)
		if err != nil {
			fail(err)
		}
		_ = out.Encode(res)
	case "fanout":
		f, err := wsload.OpenFanout(ctx, wsload.Kind(*kind), *url, *sessions, *roomSize)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		cpu := &loadgen.CPUMeter{PID: *pid}
		res := f.Run(ctx, *rate, *d, time.Second, cpu.Mark)
		if cpu.Used > 0 {
			res.ServerCPU = cpu.Used.Seconds() / cpu.Wall.Seconds()
			res.PerCPUSec = float64(res.Delivered) / cpu.Used.Seconds()
		}
		_ = out.Encode(res)
	default:
		fail(fmt.Errorf("mode %q: want idle or fanout", flag.Arg(0)))
	}
}
