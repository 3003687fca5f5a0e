package loadgen

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// Flow is a stream of data frames from one endpoint at a fixed rate.
type Flow struct {
	From *Endpoint
	Rate float64 // frames per second
}

// RunConfig shapes one measured run.
type RunConfig struct {
	Flows    []Flow
	Payload  int           // bytes after the ChannelData header, >= MinPayload
	Duration time.Duration // sending time
	// Quantum is the pacing step: the sender wakes at most this often and
	// sends whatever is due, batched per socket. Small (50 µs) for latency
	// runs, larger (1 ms) for throughput runs.
	Quantum time.Duration
	// Drain is how long receivers keep counting after the last send.
	Drain time.Duration
	// Receivers are the endpoints whose counts make up the result.
	Receivers []*Endpoint
	// Window, if set, is called when sending starts and again when the
	// drain ends, to bracket server CPU measurements.
	Window func(start bool)
}

// RunResult is what one run measured.
type RunResult struct {
	Sent     uint64
	Received uint64
	Elapsed  time.Duration // sending time actually taken
	Latency  *Hist
}

// Loss is the fraction of sent frames that did not arrive.
func (r RunResult) Loss() float64 {
	if r.Sent == 0 {
		return 0
	}
	if r.Received >= r.Sent {
		return 0
	}

	return float64(r.Sent-r.Received) / float64(r.Sent)
}

type runStats struct {
	id       uint32
	received atomic.Uint64
	hist     *Hist
}

// runIDs numbers Runs across the process, so two at once never share an id.
var runIDs atomic.Uint32 //nolint:gochecknoglobals // shared on purpose: ids unique per process

// Run sends the flows for cfg.Duration and counts what the receivers get.
func Run(ctx context.Context, cfg RunConfig) (RunResult, error) {
	if cfg.Payload < MinPayload {
		return RunResult{}, fmt.Errorf("loadgen: payload %d < %d", cfg.Payload, MinPayload)
	}
	if cfg.Quantum <= 0 {
		cfg.Quantum = time.Millisecond
	}
	rs := &runStats{id: runIDs.Add(1) + 1<<16, hist: new(Hist)}
	for _, e := range cfg.Receivers {
		e.run.Store(rs)
	}
	defer func() {
		for _, e := range cfg.Receivers {
			e.run.CompareAndSwap(rs, nil)
		}
	}()

	if cfg.Window != nil {
		cfg.Window(true)
	}
	sent, elapsed, err := send(ctx, cfg, rs.id)
	select {
	case <-time.After(cfg.Drain):
	case <-ctx.Done():
	}
	if cfg.Window != nil {
		cfg.Window(false)
	}

	return RunResult{Sent: sent, Received: rs.received.Load(), Elapsed: elapsed, Latency: rs.hist}, err
}

type flowState struct {
	ep       *Endpoint
	interval time.Duration
	next     time.Duration // since start
	seq      uint32
	msgs     []ipv4.Message
}

type flowHeap []*flowState

func (h flowHeap) Len() int           { return len(h) }
func (h flowHeap) Less(i, j int) bool { return h[i].next < h[j].next }
func (h flowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *flowHeap) Push(x any)        { *h = append(*h, x.(*flowState)) } //nolint:forcetypeassert // heap of flows
func (h *flowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]

	return x
}

const maxBatch = 64

// send paces every flow on one locked OS thread that sleeps with
// clock_nanosleep (timer slack 1 µs), so the pacing does not depend on the
// Go scheduler's timer granularity. Flows start at random phases.
func send(ctx context.Context, cfg RunConfig, run uint32) (uint64, time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)

	h := make(flowHeap, 0, len(cfg.Flows))
	for _, f := range cfg.Flows {
		if f.Rate <= 0 {
			continue
		}
		fs := &flowState{ep: f.From, interval: time.Duration(float64(time.Second) / f.Rate)}
		fs.next = time.Duration(rand.Int64N(int64(fs.interval) + 1)) //nolint:gosec // phase, not security
		fs.msgs = make([]ipv4.Message, maxBatch)
		for i := range fs.msgs {
			fs.msgs[i].Buffers = [][]byte{make([]byte, headerLen+cfg.Payload)}
			fs.msgs[i].Addr = f.From.Dst
		}
		h = append(h, fs)
	}
	heap.Init(&h)

	var sent uint64
	var sendErr error
	start := time.Now()
	for len(h) > 0 {
		if ctx.Err() != nil {
			return sent, time.Since(start), ctx.Err()
		}
		now := time.Since(start)
		if now >= cfg.Duration {
			break
		}
		top := h[0]
		if top.next > now {
			wait := top.next - now
			if wait < cfg.Quantum {
				wait = cfg.Quantum
			}
			if rest := cfg.Duration - now; wait > rest {
				wait = rest
			}
			ts := unix.NsecToTimespec(int64(wait))
			_ = unix.Nanosleep(&ts, nil)

			continue
		}
		due := int((now-top.next)/top.interval) + 1
		if due > maxBatch {
			due = maxBatch
		}
		wall := time.Now().UnixNano()
		for i := range due {
			putFrame(top.msgs[i].Buffers[0], top.ep.Channel, wall, run, top.seq)
			top.seq++
		}
		n, err := top.ep.pc.WriteBatch(top.msgs[:due], 0)
		if n > 0 {
			sent += uint64(n) //nolint:gosec // n >= 0
		}
		if err != nil && !errors.Is(err, unix.ENOBUFS) && !errors.Is(err, unix.EAGAIN) && sendErr == nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				sendErr = fmt.Errorf("loadgen: send: %w", err)
			}
		}
		top.next += time.Duration(due) * top.interval
		if top.next < now-time.Second {
			top.next = now // the sender fell far behind; do not burst to catch up
		}
		heap.Fix(&h, 0)
	}

	return sent, time.Since(start), sendErr
}
