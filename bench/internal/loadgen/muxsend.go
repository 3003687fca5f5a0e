package loadgen

import (
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

// muxFlow is a MuxFlow's pacing state and its prebuilt destination.
type muxFlow struct {
	c        *MuxClient
	dst      *unix.RawSockaddrInet4
	interval time.Duration
	next     time.Duration // since start
	seq      uint32
}

// RunMux sends flows through m for d and counts what m receives for the run,
// as Run does for endpoints. quantum is the pacing step: the sender wakes at
// most this often and sends everything due, muxChunk frames to a sendmmsg.
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
	fs, err := muxFlows(flows)
	if err != nil {
		return RunResult{}, err
	}
	if window != nil {
		window(true)
	}
	sent, elapsed, err := m.send(ctx, fs, payload, d, quantum, rs.id)
	select {
	case <-time.After(drain):
	case <-ctx.Done():
	}
	if window != nil {
		window(false)
	}
	if rerr := m.readErr.Load(); rerr != nil {
		err = errors.Join(err, fmt.Errorf("loadgen: mux reader stopped: %w", *rerr))
	}

	return RunResult{Sent: sent, Received: rs.received.Load(), Elapsed: elapsed, Latency: rs.hist}, err
}

// muxFlows prepares the flows' pacing state, each at a random phase.
func muxFlows(flows []MuxFlow) ([]*muxFlow, error) {
	fs := make([]*muxFlow, 0, len(flows))
	dsts := map[string]*unix.RawSockaddrInet4{}
	for _, f := range flows {
		if f.Rate <= 0 {
			continue
		}
		if f.From.Dst == nil {
			return nil, fmt.Errorf("loadgen: mux client %s has no destination", f.From.Addr())
		}
		k := f.From.Dst.String()
		if dsts[k] == nil {
			sa, err := rawSockaddr(f.From.Dst)
			if err != nil {
				return nil, err
			}
			dsts[k] = sa
		}
		mf := &muxFlow{c: f.From, dst: dsts[k], interval: time.Duration(float64(time.Second) / f.Rate)}
		mf.next = time.Duration(rand.Int64N(int64(mf.interval) + 1)) //nolint:gosec // phase, not security
		fs = append(fs, mf)
	}

	return fs, nil
}

// wheel schedules periodic flows in slots one quantum wide: finding what is
// due costs nothing per flow that is not (a heap of thousands of flows cost
// the sender a few per cent of its time in a profile here).
type wheel struct {
	quantum time.Duration
	slots   [][]*muxFlow
	spare   []*muxFlow
	tick    int64 // the next slot to run
}

func newWheel(flows []*muxFlow, quantum time.Duration) *wheel {
	longest := quantum
	for _, f := range flows {
		longest = max(longest, f.interval)
	}
	// Flows are filed at most longest/quantum+1 slots ahead, so less than a
	// turn of the wheel.
	w := &wheel{quantum: quantum, slots: make([][]*muxFlow, int(longest/quantum)+3)}
	for _, f := range flows {
		t := int64(f.next / quantum)
		w.slots[t%int64(len(w.slots))] = append(w.slots[t%int64(len(w.slots))], f)
	}

	return w
}

// run calls emit for every frame due in slots up to and including upto, in
// slot order, and files each flow under its next frame's slot. A flow more
// than a second behind skips ahead rather than bursting to catch up.
func (w *wheel) run(upto int64, emit func(*muxFlow)) {
	n := int64(len(w.slots))
	now := time.Duration(upto) * w.quantum
	for ; w.tick <= upto; w.tick++ {
		i := w.tick % n
		due := w.slots[i]
		w.slots[i] = w.spare[:0]
		for _, f := range due {
			if f.next < now-time.Second {
				f.next = now
			}
			// Several frames when the interval is under a quantum; none when
			// the flow was filed a whole turn of the wheel early (after a
			// skip ahead).
			for int64(f.next/w.quantum) <= w.tick {
				emit(f)
				f.next += f.interval
			}
			t := int64(f.next / w.quantum)
			w.slots[t%n] = append(w.slots[t%n], f)
		}
		w.spare = due
	}
}

// muxChunk is the most frames one sendmmsg carries. Frames are stamped when
// their chunk is built, and the kernel takes a few µs to send each, so a
// chunk adds up to about 50 µs of the generator's own time to the last
// frame's latency; a syscall per 16 frames costs about 2 % more than one per
// quantum.
const muxChunk = 16

// send paces the flows on one locked OS thread sleeping with nanosleep (timer
// slack 1 µs; see sleep) from one quantum to the next. Each wake-up sends every
// frame due by then, muxChunk to a sendmmsg.
func (m *Mux) send(ctx context.Context, flows []*muxFlow, payload int, d, quantum time.Duration, run uint32,
) (uint64, time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)

	w := newWheel(flows, quantum)
	b := newMmsgBatch(muxChunk, headerLen+payload, 0)
	var sent uint64
	var sendErr error
	n := 0
	flush := func() {
		if n == 0 {
			return
		}
		var k int
		err := m.withFD(func(fd int) error {
			var err error
			k, err = b.send(fd, n)

			return err
		})
		sent += uint64(k) //nolint:gosec // k >= 0
		// ENOBUFS is the generator's own shortfall: it shows as sent < offered.
		if err != nil && sendErr == nil && !errors.Is(err, unix.ENOBUFS) {
			sendErr = err
		}
		n = 0
	}
	var wall int64
	emit := func(f *muxFlow) {
		if n == 0 {
			wall = time.Now().UnixNano()
		}
		putFrame(b.bufs[n][:headerLen+payload], f.c.Channel, wall, run, f.seq)
		b.setSend(n, headerLen+payload, f.dst, f.c.oob)
		f.seq++
		if n++; n == muxChunk {
			flush()
		}
	}
	start := time.Now()
	for {
		if ctx.Err() != nil {
			return sent, time.Since(start), ctx.Err()
		}
		now := time.Since(start)
		if now >= d {
			// What fell due before the end still goes (a sleep that ran
			// past it must not cost the step its last frames).
			w.run(int64((d-1)/quantum), emit)
			flush()

			break
		}
		w.run(int64(now/quantum), emit)
		flush()
		if wait := time.Duration(w.tick)*quantum - time.Since(start); wait > 0 {
			sleep(min(wait, d-now))
		}
	}

	return sent, time.Since(start), sendErr
}
