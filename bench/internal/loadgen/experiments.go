package loadgen

import (
	"context"
	"math"
	"os"
	"time"
)

// Step is one measured rate.
type Step struct {
	Offered   float64       `json:"offered"`   // frames/s asked for
	Sent      float64       `json:"sent"`      // frames/s actually sent
	Delivered float64       `json:"delivered"` // frames/s received
	Loss      float64       `json:"loss"`
	ServerCPU float64       `json:"serverCPU"` // server CPU-seconds per second
	CoreBusy  float64       `json:"coreBusy"`  // the server core's busy fraction (-1: not pinned)
	PerCPUSec float64       `json:"perCPUSec"` // frames delivered per server CPU-second
	P50       time.Duration `json:"p50"`
	P99       time.Duration `json:"p99"`
	// Kernel socket drops during the step: on the generator's sockets, and
	// everywhere else on the machine (the server's sockets among them).
	GenDrops   uint64 `json:"genDrops"`
	OtherDrops uint64 `json:"otherDrops"`
	// The generator's own CPU-seconds per second, and its core's busy
	// fraction (-1: not pinned), to tell a generator near its limit.
	GenCPU      float64 `json:"genCPU"`
	GenCoreBusy float64 `json:"genCoreBusy"`
}

// SendingBusy scales a meter's core-busy fraction from its whole window
// (sending plus the drain after it) to the sending time alone, the time the
// server had work; -1 stays -1.
func SendingBusy(m *CPUMeter, sending time.Duration) float64 {
	if m.CoreBusy < 0 || sending <= 0 {
		return m.CoreBusy
	}

	return min(1, m.CoreBusy*m.Wall.Seconds()/sending.Seconds())
}

// GeneratorLimited reports whether the generator, rather than the server,
// is what a failed step ran into: it could not send the offered rate, or the
// server's core still had idle time.
func (s Step) GeneratorLimited() bool {
	return s.Sent < 0.97*s.Offered || (s.CoreBusy >= 0 && s.CoreBusy < 0.9)
}

// MaxLoss is the loss a rate may show and still count as carried.
const MaxLoss = 0.001

// Measure runs every pair both ways at rate frames/s in total.
func Measure(ctx context.Context, pairs []Pair, payload int, rate float64, d, quantum time.Duration, pid int) (Step, error) {
	flows := make([]Flow, 0, 2*len(pairs))
	recv := make([]*Endpoint, 0, 2*len(pairs))
	per := rate / float64(2*len(pairs))
	for _, p := range pairs {
		flows = append(flows, Flow{From: p.A, Rate: per}, Flow{From: p.B, Rate: per})
		recv = append(recv, p.A, p.B)
	}

	return measureFlows(ctx, flows, recv, payload, rate, d, quantum, pid)
}

func measureFlows(ctx context.Context, flows []Flow, recv []*Endpoint, payload int, rate float64, d, quantum time.Duration,
	pid int,
) (Step, error) {
	ports := make(map[int]bool, len(recv))
	for _, e := range recv {
		ports[e.Addr().Port] = true
	}

	return measureStep(rate, ports, pid, func(window func(bool)) (RunResult, error) {
		return Run(ctx, RunConfig{
			Flows: flows, Payload: payload, Duration: d, Quantum: quantum,
			Drain: 300 * time.Millisecond, Receivers: recv, Window: window,
		})
	})
}

// measureStep makes a Step of one run offered at rate: the generator's
// sockets are those on ports, the server's CPU is pid's.
func measureStep(rate float64, ports map[int]bool, pid int, run func(window func(bool)) (RunResult, error)) (Step, error) {
	cpu, gen := &CPUMeter{PID: pid}, &CPUMeter{PID: os.Getpid()}
	gen0, other0 := UDPDrops(ports)
	res, err := run(func(start bool) { cpu.Mark(start); gen.Mark(start) })
	if res.Latency == nil || res.Elapsed <= 0 {
		return Step{Offered: rate}, err // the run never started
	}
	st := Step{
		Offered:   rate,
		Sent:      float64(res.Sent) / res.Elapsed.Seconds(),
		Delivered: float64(res.Received) / res.Elapsed.Seconds(),
		Loss:      res.Loss(),
		P50:       res.Latency.Quantile(0.50),
		P99:       res.Latency.Quantile(0.99),
	}
	gen1, other1 := UDPDrops(ports)
	st.GenDrops, st.OtherDrops = gen1-gen0, other1-other0
	if cpu.Wall > 0 {
		st.ServerCPU = cpu.Used.Seconds() / cpu.Wall.Seconds()
	}
	st.CoreBusy = SendingBusy(cpu, res.Elapsed)
	if gen.Wall > 0 {
		st.GenCPU = gen.Used.Seconds() / gen.Wall.Seconds()
	}
	st.GenCoreBusy = SendingBusy(gen, res.Elapsed)
	if cpu.Used > 0 {
		st.PerCPUSec = float64(res.Received) / cpu.Used.Seconds()
	}

	return st, err
}

// SaturateConfig is a search for the highest rate carried with loss under MaxLoss.
type SaturateConfig struct {
	Pairs   []Pair
	Payload int
	Start   float64       // first rate, frames/s
	Factor  float64       // ladder step, e.g. 1.25
	Limit   float64       // never offer more
	Step    time.Duration // time per rate
	PID     int           // server to meter
	// Fixed rates measured before the ladder (for side-by-side efficiency).
	Fixed []float64
	Log   func(Step)
}

// Saturation is the ladder and its best rate.
type Saturation struct {
	Steps []Step `json:"steps"`
	Fixed []Step `json:"fixed"`
	Best  Step   `json:"best"`
	// GeneratorBound is set when the generator, not the server, stopped the
	// ladder (it could not send the offered rate).
	GeneratorBound bool `json:"generatorBound"`
}

// Saturate climbs the rate ladder until loss exceeds MaxLoss, then bisects
// twice between the last good and the first bad rate.
func Saturate(ctx context.Context, cfg SaturateConfig) (Saturation, error) {
	// Warm up (allocations, caches, socket buffers) without counting.
	if _, err := Measure(ctx, cfg.Pairs, cfg.Payload, cfg.Start, time.Second, time.Millisecond, 0); err != nil {
		return Saturation{}, err
	}

	return climb(cfg, func(rate float64) (Step, error) {
		st, err := Measure(ctx, cfg.Pairs, cfg.Payload, rate, cfg.Step, time.Millisecond, cfg.PID)
		if cfg.Log != nil {
			cfg.Log(st)
		}

		return st, err
	})
}

// climb is Saturate's ladder over measure. A rate the generator could not
// send is measured once more before the ladder ends there (and the gap below
// it is bisected, as for loss): the generator
// shares its core with the machine's other work, and one hiccup at a rate
// it can send otherwise cut a ladder a step short (at 150 B: 149k instead of
// 186k packets/s, and per CPU-second, which grows with the rate as batches
// fill, 10 % lower than the same server's next run).
func climb(cfg SaturateConfig, measure func(rate float64) (Step, error)) (Saturation, error) {
	var s Saturation
	for _, r := range cfg.Fixed {
		st, err := measure(r)
		if err != nil {
			return s, err
		}
		s.Fixed = append(s.Fixed, st)
	}
	var bad float64
	for r := cfg.Start; r <= cfg.Limit; r *= cfg.Factor {
		st, err := measure(r)
		if err != nil {
			return s, err
		}
		s.Steps = append(s.Steps, st)
		if !Carried(st) && st.Sent < 0.97*st.Offered {
			if st, err = measure(r); err != nil {
				return s, err
			}
			s.Steps = append(s.Steps, st)
		}
		if !Carried(st) {
			s.GeneratorBound = st.GeneratorLimited()
			bad = r

			break
		}
		s.Best = st
	}
	if bad == 0 {
		return s, nil
	}
	// The gap between the last rate carried and the first that was not is
	// bisected twice, whichever side stopped the ladder: a server's limit,
	// or the generator's ceiling (a rate it cannot send at all does not
	// count, but one it can, inside the gap, does: per CPU-second grows
	// with the rate as batches fill, so a ladder cut at the last full step
	// understated the servers the generator cannot saturate by ≈ 4 %).
	lo, hi := s.Best.Offered, bad
	for range 2 {
		mid := math.Round((lo + hi) / 2)
		st, err := measure(mid)
		if err != nil {
			return s, err
		}
		s.Steps = append(s.Steps, st)
		if Carried(st) {
			lo, s.Best = mid, st
		} else {
			hi = mid
		}
	}

	return s, nil
}

// Carried reports a step within the ladders' rules (Saturate's and the
// capacity ladder's): loss under MaxLoss, and at least 97 % of the offered
// rate sent.
func Carried(st Step) bool { return st.Loss < MaxLoss && st.Sent >= 0.97*st.Offered }

// LatencyAt measures one-way latency at rate with fine pacing (50 µs quantum).
func LatencyAt(ctx context.Context, pairs []Pair, payload int, rate float64, d time.Duration, pid int) (Step, error) {
	return Measure(ctx, pairs, payload, rate, d, 50*time.Microsecond, pid)
}

// GamePair is one player's link to the host through the relay: inputs go
// from Client to Host, snapshots from Host to Client.
type GamePair struct {
	Client, Host *Endpoint
}

// MeasureGame runs inputs at inHz and snapshots at outHz for every pair.
func MeasureGame(ctx context.Context, pairs []GamePair, payload int, inHz, outHz float64, d time.Duration, pid int) (Step, error) {
	flows := make([]Flow, 0, 2*len(pairs))
	recv := make([]*Endpoint, 0, 2*len(pairs))
	for _, p := range pairs {
		flows = append(flows, Flow{From: p.Client, Rate: inHz}, Flow{From: p.Host, Rate: outHz})
		recv = append(recv, p.Client, p.Host)
	}

	return measureFlows(ctx, flows, recv, payload, float64(len(pairs))*(inHz+outHz), d, 200*time.Microsecond, pid)
}
