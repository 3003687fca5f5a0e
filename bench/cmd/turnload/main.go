// Command turnload is the TURN load generator: it allocates pairs of TURN
// allocations with pion/turn's client, binds channels between them and sends
// ChannelData both ways at stepped rates, printing one JSON line per result.
//
//	turnload -server 127.0.0.1:3478 -secret S forward      # coturn, or any TURN REST server
//	turnload -server 127.0.0.1:3478 -lobby ws://127.0.0.1:8080/ws forward   # hostrelay
//	turnload -bare 127.0.0.1:9999 forward                   # bench/cmd/bareudp
//
// Modes: forward (rate ladder), latency (-rate), cycles (allocation cycles),
// hold (memory of -n live allocations), game (-players at 30/20 Hz; -mux for
// the capacity run's generator).
// -pid names the server process whose CPU time is metered.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
)

func main() {
	server := flag.String("server", "", "TURN server UDP address")
	bare := flag.String("bare", "", "bare relay address (instead of -server)")
	direct := flag.Bool("direct", false, "send straight between the pair's sockets (latency baseline)")
	secret := flag.String("secret", "", "TURN REST shared secret (coturn static-auth-secret)")
	lobby := flag.String("lobby", "", "hostrelay lobby WebSocket URL for credentials")
	pid := flag.Int("pid", 0, "server PID to meter")
	pairs := flag.Int("pairs", 25, "allocation pairs")
	payload := flag.Int("payload", 150, "payload bytes per packet")
	start := flag.Float64("start", 20000, "forward: first rate (packets/s)")
	limit := flag.Float64("limit", 400000, "forward: highest rate")
	step := flag.Duration("step", 3*time.Second, "time per rate")
	fixed := flag.String("fixed", "", "forward: comma-separated rates measured first")
	rate := flag.Float64("rate", 10000, "latency: rate (packets/s)")
	workers := flag.Int("workers", 16, "cycles: concurrent clients")
	n := flag.Int("n", 1000, "hold: allocations")
	players := flag.Int("players", 100, "game: players (client-host links)")
	mux := flag.Bool("mux", false, "game: every allocation an address of one loopback socket (loadgen.Mux), as make bench's capacity run")
	flag.Parse()
	runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out := json.NewEncoder(os.Stdout)
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "turnload:", err)
		os.Exit(1)
	}
	mode := flag.Arg(0)
	t := target{server: *server, bare: *bare, direct: *direct, secret: *secret, lobby: *lobby}
	switch mode {
	case "forward", "latency":
		ps, closeAll, err := t.pairs(ctx, *pairs)
		if err != nil {
			fail(err)
		}
		defer closeAll()
		if mode == "latency" {
			st, err := loadgen.LatencyAt(ctx, ps, *payload, *rate, *step, *pid)
			if err != nil {
				fail(err)
			}
			_ = out.Encode(st)

			return
		}
		sat, err := loadgen.Saturate(ctx, loadgen.SaturateConfig{
			Pairs: ps, Payload: *payload, Start: *start, Factor: 1.25, Limit: *limit, Step: *step, PID: *pid,
			Fixed: parseRates(*fixed), Log: func(s loadgen.Step) { _ = out.Encode(s) },
		})
		if err != nil {
			fail(err)
		}
		_ = out.Encode(sat)
	case "cycles":
		creds, closeAll, err := t.creds(ctx, *workers)
		if err != nil {
			fail(err)
		}
		defer closeAll()
		cpu := &loadgen.CPUMeter{PID: *pid}
		res := loadgen.Cycles(ctx, t.serverAddr(), *workers, *step, func(i int) loadgen.Creds { return creds[i] }, cpu.Mark)
		_ = out.Encode(map[string]any{
			"cycles": res.Cycles, "failures": res.Failures, "perSec": float64(res.Cycles) / res.Elapsed.Seconds(),
			"perCPUSec": float64(res.Cycles) / cpu.Used.Seconds(), "err": fmt.Sprint(res.FirstErr),
		})
	case "hold":
		creds, closeAll, err := t.creds(ctx, (*n+29)/30)
		if err != nil {
			fail(err)
		}
		defer closeAll()
		before, _ := loadgen.RSS(*pid)
		h, err := loadgen.Hold(ctx, t.serverAddr(), *n, func(i int) loadgen.Creds { return creds[i/30] })
		if err != nil {
			fail(err)
		}
		time.Sleep(time.Second)
		after, _ := loadgen.RSS(*pid)
		h.Release()
		_ = out.Encode(map[string]any{"allocations": *n, "rssBefore": before, "rssAfter": after,
			"bytesPer1000": float64(after-before) * 1000 / float64(*n)})
	case "game":
		measure, closeAll, err := t.game(ctx, *players, *mux)
		if err != nil {
			fail(err)
		}
		defer closeAll()
		st, err := measure(*payload, *step, *pid)
		if err != nil {
			fail(err)
		}
		_ = out.Encode(st)
	default:
		fail(fmt.Errorf("unknown mode %q (forward, latency, cycles, hold, game)", mode))
	}
}

func parseRates(s string) []float64 {
	var rs []float64
	for f := range strings.SplitSeq(s, ",") {
		if r, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil {
			rs = append(rs, r)
		}
	}

	return rs
}

type target struct {
	server, bare  string
	direct        bool
	secret, lobby string
}

func (t target) serverAddr() *net.UDPAddr {
	a, err := net.ResolveUDPAddr("udp4", t.server)
	if err != nil {
		fmt.Fprintln(os.Stderr, "turnload: -server:", err)
		os.Exit(2)
	}

	return a
}

// creds returns n credentials: REST ones from -secret, or those of n lobby
// sessions (each hosting its own room) from -lobby.
func (t target) creds(ctx context.Context, n int) ([]loadgen.Creds, func(), error) {
	if t.lobby != "" {
		return loadgen.LobbyRooms(ctx, t.lobby, n, 1)
	}
	cs := make([]loadgen.Creds, n)
	for i := range cs {
		cs[i] = loadgen.RESTCreds(t.secret, fmt.Sprintf("bench-%d", i), time.Hour)
	}

	return cs, func() {}, nil
}

func (t target) pairs(ctx context.Context, n int) ([]loadgen.Pair, func(), error) {
	switch {
	case t.direct:
		ps, err := loadgen.DirectPairs(ctx, n)

		return ps, func() { loadgen.ClosePairs(ps) }, err
	case t.bare != "":
		a, err := net.ResolveUDPAddr("udp4", t.bare)
		if err != nil {
			return nil, nil, err
		}
		ps, err := loadgen.BarePairs(ctx, a, n)

		return ps, func() { loadgen.ClosePairs(ps) }, err
	}
	var creds []loadgen.Creds
	closeLobby := func() {}
	if t.lobby != "" {
		var err error
		if creds, closeLobby, err = loadgen.LobbyRooms(ctx, t.lobby, n, 2); err != nil {
			return nil, nil, err
		}
	} else {
		creds, _, _ = t.creds(ctx, 2*n)
	}
	ps, err := loadgen.TURNPairs(ctx, t.serverAddr(), n, func(i int) loadgen.Creds { return creds[i] })
	if err != nil {
		closeLobby()

		return nil, nil, err
	}

	return ps, func() { loadgen.ClosePairs(ps); closeLobby() }, nil
}

// game sets up players in rooms of 8: each room's host session holds one
// allocation per player, as a browser host holds one per peer connection.
// With mux, every allocation is a client of one loadgen.Mux.
func (t target) game(ctx context.Context, players int, mux bool) (
	measure func(payload int, d time.Duration, pid int) (loadgen.Step, error), closeAll func(), err error,
) {
	const roomSize = 8
	rooms := (players + roomSize - 2) / (roomSize - 1)
	var creds []loadgen.Creds
	closeLobby := func() {}
	if t.lobby != "" {
		if creds, closeLobby, err = loadgen.LobbyRooms(ctx, t.lobby, rooms, roomSize); err != nil {
			return nil, nil, err
		}
	} else {
		creds, _, _ = t.creds(ctx, rooms*roomSize)
	}
	credsFor := func(room, member int) loadgen.Creds { return creds[room*roomSize+member] }
	if mux {
		m, err := loadgen.NewMux(loadgen.MuxConfig{Clients: 2 * players})
		if err != nil {
			closeLobby()

			return nil, nil, err
		}
		gp, closePairs, err := loadgen.MuxGamePairs(ctx, m, t.serverAddr(), players, roomSize, credsFor)
		if err != nil {
			_ = m.Close()
			closeLobby()

			return nil, nil, err
		}

		return func(payload int, d time.Duration, pid int) (loadgen.Step, error) {
			return loadgen.MeasureGameMux(ctx, m, gp, payload, 30, 20, d, pid)
		}, func() { closePairs(); _ = m.Close(); closeLobby() }, nil
	}
	gp, closePairs, err := loadgen.GamePairs(ctx, t.serverAddr(), players, roomSize, credsFor)
	if err != nil {
		closeLobby()

		return nil, nil, err
	}

	return func(payload int, d time.Duration, pid int) (loadgen.Step, error) {
		return loadgen.MeasureGame(ctx, gp, payload, 30, 20, d, pid)
	}, func() { closePairs(); closeLobby() }, nil
}
