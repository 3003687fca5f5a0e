package loadgen

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/bare"
	"github.com/hostrelay/hostrelay/turn"
)

// Smoke runs of the load generator: a few hundred packets through each kind
// of relay, so the bench tools keep working. No figure is asserted.

// oneRoom puts every session in one room.
type oneRoom struct{}

func (oneRoom) SessionLive(string) bool      { return true }
func (oneRoom) RoomOf(string) (string, bool) { return "bench", true }

func turnServer(t *testing.T) *turn.Server {
	t.Helper()

	return turnServerWith(t, func(*turn.Config) {})
}

// turnServerWith is turnServer with its config changed by set first.
func turnServerWith(t *testing.T, set func(*turn.Config)) *turn.Server {
	t.Helper()
	cfg := turn.DefaultConfig()
	cfg.Secret = []byte("bench-smoke-secret-0123456789")
	cfg.PublicIP = net.IPv4(127, 0, 0, 1)
	cfg.UDPAddr = "127.0.0.1:0"
	cfg.Sessions = oneRoom{}
	cfg.Logger = slog.New(slog.DiscardHandler)
	// Hold and Cycles use more allocations than a browser would.
	cfg.MaxAllocationsPerSession = 1000
	set(&cfg)
	srv, err := turn.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	return srv
}

func smoke(t *testing.T, pairs []Pair) {
	t.Helper()
	t.Cleanup(func() { ClosePairs(pairs) })
	st, err := Measure(t.Context(), pairs, 60, 2000, 150*time.Millisecond, time.Millisecond, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent == 0 || st.Delivered == 0 {
		t.Fatalf("nothing went through: %+v", st)
	}
}

func TestSmokeTURN(t *testing.T) {
	srv := turnServer(t)
	pairs, err := TURNPairs(t.Context(), srv.UDPAddr(), 2, func(i int) Creds {
		c := srv.Credentials("s"+string(rune('a'+i)), time.Now())

		return Creds{Username: c.Username, Password: c.Password}
	})
	if err != nil {
		t.Fatal(err)
	}
	smoke(t, pairs)
}

func TestSmokeBareAndDirect(t *testing.T) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- bare.ServeUDP(conn) }()
	t.Cleanup(func() {
		_ = conn.Close()
		if err := <-done; !errors.Is(err, net.ErrClosed) {
			t.Errorf("ServeUDP: %v", err)
		}
	})
	pairs, err := BarePairs(t.Context(), conn.LocalAddr().(*net.UDPAddr), 2) //nolint:forcetypeassert // a UDP socket
	if err != nil {
		t.Fatal(err)
	}
	smoke(t, pairs)

	direct, err := DirectPairs(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	smoke(t, direct)
}

func TestSmokeCyclesAndHold(t *testing.T) {
	srv := turnServer(t)
	creds := func(int) Creds {
		c := srv.Credentials("cycles", time.Now())

		return Creds{Username: c.Username, Password: c.Password}
	}
	cpu := &CPUMeter{PID: os.Getpid()}
	r := Cycles(t.Context(), srv.UDPAddr(), 2, 200*time.Millisecond, creds, cpu.Mark)
	if r.Cycles == 0 {
		t.Fatalf("no allocation cycle completed: %+v", r)
	}
	h, err := Hold(t.Context(), srv.UDPAddr(), 5, creds)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Stats().Allocations; n != 5 {
		t.Errorf("%d allocations held, want 5", n)
	}
	h.Release()
}

func TestSmokeGame(t *testing.T) {
	srv := turnServer(t)
	gp, closeAll, err := GamePairs(t.Context(), srv.UDPAddr(), 7, 8, func(room, member int) Creds {
		c := srv.Credentials("g"+string(rune('a'+room))+string(rune('a'+member)), time.Now())

		return Creds{Username: c.Username, Password: c.Password}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	st, err := MeasureGame(t.Context(), gp, 100, 30, 20, 200*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Delivered == 0 {
		t.Fatalf("no game packet arrived: %+v", st)
	}
}

func TestHist(t *testing.T) {
	var h Hist
	for i := range 100 {
		h.Add(time.Duration(i) * time.Microsecond)
	}
	h.Add(-time.Second)
	h.Add(time.Hour)
	if h.Count() != 102 {
		t.Fatalf("count %d", h.Count())
	}
	if q := h.Quantile(0.5); q < 45*time.Microsecond || q > 55*time.Microsecond {
		t.Fatalf("median %v", q)
	}
	if q := h.Quantile(1); q != histMax {
		t.Fatalf("max %v", q)
	}
}

func TestProcStat(t *testing.T) {
	if _, err := CPUTime(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if rss, err := RSS(os.Getpid()); err != nil || rss <= 0 {
		t.Fatalf("RSS %d %v", rss, err)
	}
}

// coreIdle reads the idle time /proc/stat keeps for a core.
func TestCoreIdle(t *testing.T) {
	if coreIdle(0) == 0 {
		t.Error("core 0 has no idle time in /proc/stat")
	}
	if coreIdle(1<<20) != 0 {
		t.Error("a core that does not exist has idle time")
	}
}

// fakeServer answers a ladder's steps: carried up to capacity, lossy past
// it, and the generator short of the offered rate on the steps listed in
// hiccups (each once, in order of measurement).
func fakeServer(capacity float64, hiccups map[float64]int) (func(rate float64) (Step, error), *[]float64) {
	var measured []float64
	return func(rate float64) (Step, error) {
		measured = append(measured, rate)
		st := Step{Offered: rate, Sent: rate, CoreBusy: 1}
		if hiccups[rate] > 0 {
			hiccups[rate]--
			st.Sent = 0.8 * rate
		}
		if rate > capacity {
			st.Loss = 0.01
		}

		return st, nil
	}, &measured
}

// A rate the generator could not send once is measured again and the ladder
// goes on; one it cannot send twice ends the ladder as generator-bound; loss
// is not retried.
func TestClimbRetriesAGeneratorHiccup(t *testing.T) {
	cfg := SaturateConfig{Start: 100, Factor: 2, Limit: 1000}

	measure, measured := fakeServer(1000, map[float64]int{400: 1})
	s, err := climb(cfg, measure)
	if err != nil {
		t.Fatal(err)
	}
	if s.Best.Offered != 800 || s.GeneratorBound {
		t.Fatalf("best %v, generator-bound %v; want 800 after one hiccup at 400", s.Best.Offered, s.GeneratorBound)
	}
	if want := []float64{100, 200, 400, 400, 800}; !slices.Equal(*measured, want) {
		t.Fatalf("measured %v, want %v", *measured, want)
	}

	measure, measured = fakeServer(1000, map[float64]int{400: 2})
	if s, _ = climb(cfg, measure); s.Best.Offered != 350 || !s.GeneratorBound {
		t.Fatalf("best %v, generator-bound %v; want the bisection's 350, bound, after two failures at 400", s.Best.Offered, s.GeneratorBound)
	}
	if want := []float64{100, 200, 400, 400, 300, 350}; !slices.Equal(*measured, want) {
		t.Fatalf("measured %v, want %v", *measured, want)
	}

	measure, measured = fakeServer(300, nil)
	if s, _ = climb(cfg, measure); s.Best.Offered != 300 || s.GeneratorBound {
		t.Fatalf("best %v, generator-bound %v; want the bisection's 300", s.Best.Offered, s.GeneratorBound)
	}
	if want := []float64{100, 200, 400, 300, 350}; !slices.Equal(*measured, want) {
		t.Fatalf("measured %v, want %v (loss is not measured twice)", *measured, want)
	}
}

// A generator whose ceiling is inside the ladder's last gap: the ladder
// ends generator-bound, and the bisection finds the highest rate it can
// send, which the server carries, rather than stopping a whole step below.
func TestClimbBisectsTheGeneratorsCeiling(t *testing.T) {
	cfg := SaturateConfig{Start: 100, Factor: 2, Limit: 1000}
	var measured []float64
	measure := func(rate float64) (Step, error) {
		measured = append(measured, rate)
		return Step{Offered: rate, Sent: min(rate, 510), CoreBusy: 0.6}, nil
	}
	s, err := climb(cfg, measure)
	if err != nil {
		t.Fatal(err)
	}
	if s.Best.Offered != 500 || !s.GeneratorBound {
		t.Fatalf("best %v, generator-bound %v; want 500, bound", s.Best.Offered, s.GeneratorBound)
	}
	if want := []float64{100, 200, 400, 800, 800, 600, 500}; !slices.Equal(measured, want) {
		t.Fatalf("measured %v, want %v", measured, want)
	}
}
