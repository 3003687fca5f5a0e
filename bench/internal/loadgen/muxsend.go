package loadgen

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// MuxFlow is a stream of data frames from one mux client at a fixed rate.
type MuxFlow struct {
	From *MuxClient
	Rate float64 // frames per second
}

// muxFlow is a MuxFlow's pacing state and its prebuilt message parts.
type muxFlow struct {
	c        *MuxClient
	dst      *unix.RawSockaddrInet4
	interval time.Duration
	next     time.Duration // since start
	seq      uint32
}

type muxHeap []*muxFlow

func (h muxHeap) Len() int           { return len(h) }
func (h muxHeap) Less(i, j int) bool { return h[i].next < h[j].next }
func (h muxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *muxHeap) Push(x any)        { *h = append(*h, x.(*muxFlow)) } //nolint:forcetypeassert // heap of flows
func (h *muxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]

	return x
}

// RunMux sends flows through m for d and counts what m receives for the run,
// as Run does for endpoints. quantum is the pacing step: the sender wakes at
// most this often and sends everything due in one sendmmsg.
func RunMux(ctx context.Context, m *Mux, flows []MuxFlow, payload int, d, quantum, drain time.Duration,
	window func(start bool),
) (RunResult, error) {
	if payload < MinPayload {
		return RunResult{}, fmt.Errorf("loadgen: payload %d < %d", payload, MinPayload)
	}
	if quantum <= 0 {
		quantum = time.Millisecond
	}
	rs := &runStats{id: runIDs.Add(1) + 1<<16, hist: new(Hist)}
	m.run.Store(rs)
	defer m.run.CompareAndSwap(rs, nil)
	h, err := muxFlows(flows)
	if err != nil {
		return RunResult{}, err
	}
	if window != nil {
		window(true)
	}
	sent, elapsed, err := m.send(ctx, h, payload, d, quantum, rs.id)
	select {
	case <-time.After(drain):
	case <-ctx.Done():
	}
	if window != nil {
		window(false)
	}

	return RunResult{Sent: sent, Received: rs.received.Load(), Elapsed: elapsed, Latency: rs.hist}, err
}

// muxFlows prepares the flows' pacing heap, each at a random phase.
func muxFlows(flows []MuxFlow) (muxHeap, error) {
	h := make(muxHeap, 0, len(flows))
	for _, f := range flows {
		if f.Rate <= 0 {
			continue
		}
		if f.From.Dst == nil {
			return nil, fmt.Errorf("loadgen: mux client %s has no destination", f.From.Addr())
		}
		fs := &muxFlow{c: f.From, interval: time.Duration(float64(time.Second) / f.Rate)}
		fs.next = time.Duration(rand.Int64N(int64(fs.interval) + 1)) //nolint:gosec // phase, not security
		h = append(h, fs)
	}
	heap.Init(&h)

	return h, nil
}

// send paces the flows on one locked OS thread sleeping with nanosleep (timer
// slack 1 µs). Each wake-up sends every frame due by then in one sendmmsg
// (several past mmsgMax).
func (m *Mux) send(ctx context.Context, h muxHeap, payload int, d, quantum time.Duration, run uint32,
) (uint64, time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)

	dsts := map[string]*unix.RawSockaddrInet4{}
	for _, f := range h {
		k := f.c.Dst.String()
		if dsts[k] == nil {
			sa, err := rawSockaddr(f.c.Dst)
			if err != nil {
				return 0, 0, err
			}
			dsts[k] = sa
		}
		f.dst = dsts[k]
	}
	b := newMmsgBatch(mmsgMax, headerLen+payload, 0)
	var sent uint64
	var sendErr error
	start := time.Now()
	for len(h) > 0 {
		if ctx.Err() != nil {
			return sent, time.Since(start), ctx.Err()
		}
		now := time.Since(start)
		if now >= d {
			break
		}
		if wait := h[0].next - now; wait > 0 {
			wait = min(max(wait, quantum), d-now)
			ts := unix.NsecToTimespec(int64(wait))
			_ = unix.Nanosleep(&ts, nil)

			continue
		}
		n := 0
		wall := time.Now().UnixNano()
		for n < mmsgMax && h[0].next <= now {
			f := h[0]
			putFrame(b.bufs[n][:headerLen+payload], f.c.Channel, wall, run, f.seq)
			b.setSend(n, headerLen+payload, f.dst, f.c.oob)
			n++
			f.seq++
			f.next += f.interval
			if f.next < now-time.Second {
				f.next = now // the sender fell far behind; do not burst to catch up
			}
			heap.Fix(&h, 0)
		}
		k, err := b.send(m.raw, n)
		sent += uint64(k) //nolint:gosec // k >= 0
		// ENOBUFS is the generator's own shortfall: it shows as sent < offered.
		if err != nil && sendErr == nil && !errors.Is(err, unix.ENOBUFS) {
			sendErr = err
		}
	}

	return sent, time.Since(start), sendErr
}
