// Command webhookdown measures webhook delivery across a receiver outage
// against the real binary: it starts a receiver that verifies signatures and
// per-room order, runs hostrelay with -webhook-url pointing at it, keeps a
// steady load of joins and leaves, takes the receiver down (its port closed:
// connections refused) for -down, brings it back, and reports what was
// delivered, dropped and how long the queue took to drain
// (docs/identity.md#webhooks).
//
//	go build -o /tmp/hostrelay ./server/cmd/hostrelay
//	go run ./bench/cmd/webhookdown -bin /tmp/hostrelay -down 30s
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/webhook"
)

const secret = "webhookdown-secret-0123456789abcdef" //nolint:gosec // a loopback measurement's own throwaway secret

func main() {
	bin := flag.String("bin", "", "the hostrelay binary")
	down := flag.Duration("down", 30*time.Second, "how long the receiver is down")
	before := flag.Duration("before", 5*time.Second, "load before the outage")
	rooms := flag.Int("rooms", 10, "rooms, each with a host")
	guests := flag.Int("guests", 20, "guests joining and leaving a room, each in a loop")
	pace := flag.Duration("pace", 100*time.Millisecond, "each guest's pause between a join and a leave")
	queue := flag.Int("queue", 0, "-webhook-queue (0: the default)")
	flag.Parse()
	if err := run(*bin, *down, *before, *rooms, *guests, *pace, *queue); err != nil {
		fmt.Fprintln(os.Stderr, "webhookdown:", err)
		os.Exit(1)
	}
}

// receiver verifies and counts events; Serve on a listener, Close to go down.
type receiver struct {
	mu      sync.Mutex
	taken   map[string]bool
	lastSeq map[string]uint64
	gaps    int // events a room's seq skipped (dropped by the sender)
	bad     []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := webhook.Verify([]byte(secret), req.Header.Get(webhook.SignatureHeader), body, time.Now()); err != nil {
		r.bad = append(r.bad, err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var e webhook.Event
	if err := json.Unmarshal(body, &e); err != nil {
		r.bad = append(r.bad, err.Error())
		return
	}
	if r.taken[e.ID] {
		return
	}
	r.taken[e.ID] = true
	last := r.lastSeq[e.Room]
	switch {
	case e.Seq <= last:
		r.bad = append(r.bad, fmt.Sprintf("room %s: seq %d after %d", e.Room, e.Seq, last))
	case e.Seq > last+1:
		r.gaps += int(e.Seq - last - 1) //nolint:gosec // small
	}
	r.lastSeq[e.Room] = e.Seq
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.taken)
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// metrics reads the hostrelay_webhook samples at the metrics address.
func metrics(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "hostrelay_webhook") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, _ := strconv.ParseFloat(line[i+1:], 64)
		out[line[:i]] = v
	}
	return out, sc.Err()
}

func run(bin string, down, before time.Duration, rooms, guests int, pace time.Duration, queue int) error {
	if bin == "" {
		return fmt.Errorf("-bin is required")
	}
	rcvAddr, err := freePort()
	if err != nil {
		return err
	}
	httpAddr, _ := freePort()
	metricsAddr, _ := freePort()
	rcv := &receiver{taken: map[string]bool{}, lastSeq: map[string]uint64{}}
	listen := func() (*http.Server, error) {
		ln, err := net.Listen("tcp", rcvAddr)
		if err != nil {
			return nil, err
		}
		srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		return srv, nil
	}
	srv, err := listen()
	if err != nil {
		return err
	}

	args := []string{"-http", httpAddr, "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0", "-public-ip", "127.0.0.1",
		"-metrics-addr", metricsAddr, "-webhook-url", "http://" + rcvAddr + "/hook", "-webhook-secret", secret,
		"-joins-per-minute", "1000000", "-rooms-per-minute", "1000", "-log-level", "warn"}
	if queue > 0 {
		args = append(args, "-webhook-queue", strconv.Itoa(queue))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // the server binary the operator named (-bin)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	stopped := false
	stopServer := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}
	defer stopServer()
	url := "ws://" + httpAddr + "/ws"
	for range 100 {
		if _, err = metrics(metricsAddr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	codes := make([]string, rooms)
	for i := range rooms {
		host, _, err := lobbytest.Connect(ctx, url, fmt.Sprintf("host%d", i), lobbytest.Options{})
		if err != nil {
			return err
		}
		var rj protocol.RoomJoined
		if err := host.Call(ctx, protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "load", MaxPlayers: 16}, &rj); err != nil {
			return err
		}
		host.SetRaw(func([]byte) bool { return true }) // the hosts' events are not what is measured
		codes[i] = rj.Room.Code
	}

	var ops atomic.Int64
	var latMu sync.Mutex
	var lats []time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range guests {
		g, _, err := lobbytest.Connect(ctx, url, fmt.Sprintf("guest%d", i), lobbytest.Options{})
		if err != nil {
			return err
		}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, req := range []struct {
					typ  string
					body any
				}{{protocol.TypeJoinRoom, &protocol.JoinRoom{Code: codes[i%rooms]}}, {protocol.TypeLeaveRoom, &protocol.LeaveRoom{}}} {
					t0 := time.Now()
					rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
					_, err := g.Request(rctx, req.typ, req.body)
					rcancel()
					if err != nil {
						fmt.Fprintln(os.Stderr, "request:", err)
						return
					}
					latMu.Lock()
					lats = append(lats, time.Since(t0))
					latMu.Unlock()
					ops.Add(1)
					time.Sleep(pace)
				}
			}
		})
	}

	time.Sleep(before)
	upOps, upTaken := ops.Load(), rcv.count()
	_ = srv.Close() // down: connections refused
	downAt := time.Now()
	maxQueue := 0.0
	for time.Since(downAt) < down {
		time.Sleep(250 * time.Millisecond)
		if m, err := metrics(metricsAddr); err == nil {
			maxQueue = max(maxQueue, m["hostrelay_webhook_queue_events"])
		}
	}
	downOps := ops.Load() - upOps
	close(stop) // load stops as the receiver comes back, so the drain is what was queued
	wg.Wait()
	if srv, err = listen(); err != nil {
		return err
	}
	defer srv.Close()
	upAt := time.Now()
	var m map[string]float64
	for {
		if m, err = metrics(metricsAddr); err != nil {
			return err
		}
		if m["hostrelay_webhook_queue_events"] == 0 {
			break
		}
		if time.Since(upAt) > 2*time.Minute {
			return fmt.Errorf("not drained after 2 minutes: %v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	drain := time.Since(upAt)
	// Shut down while the receiver is up: the hosts' rooms close and are
	// delivered in the flush.
	stopServer()

	slices.Sort(lats)
	pct := func(p float64) time.Duration { return lats[int(p*float64(len(lats)-1))] }
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	fmt.Fprintf(os.Stdout, "load: %d rooms, %d guests, a join or leave each %v; %d lobby requests in all, %d while the receiver was down for %v\n",
		rooms, guests, pace, ops.Load(), downOps, down)
	fmt.Fprintf(os.Stdout, "lobby request latency: p50 %v, p99 %v, max %v\n", pct(0.5), pct(0.99), lats[len(lats)-1])
	fmt.Fprintf(os.Stdout, "receiver took %d events before the outage; %d in all (rooms' created and closed included); seq gaps %d; problems %d %v\n",
		upTaken, len(rcv.taken), rcv.gaps, len(rcv.bad), rcv.bad[:min(len(rcv.bad), 3)])
	fmt.Fprintf(os.Stdout, "queue at most %.0f events during the outage; drained %v after the receiver came back; figures before shutdown:\n", maxQueue, drain.Round(time.Millisecond))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(os.Stdout, "  %s %.0f\n", k, m[k])
	}
	return nil
}
