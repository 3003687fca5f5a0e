package wsload

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/bench/internal/memstat"
)

// IdleResult is the memory n idle sessions cost the server.
type IdleResult struct {
	Sessions      int     `json:"sessions"`
	RSSPerSession float64 `json:"rssPerSession"` // bytes
	// Go runtime figures, when the server serves /debug/mem (0 otherwise).
	HeapPerSession  float64 `json:"heapPerSession"`
	StackPerSession float64 `json:"stackPerSession"`
	GoroutinesPer   float64 `json:"goroutinesPerSession"`
}

// ReadMem fetches a /debug/mem snapshot through client (nil: Go's default).
func ReadMem(ctx context.Context, client *http.Client, url string) (memstat.Mem, error) {
	if client == nil {
		client = http.DefaultClient
	}
	var m memstat.Mem
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return m, fmt.Errorf("wsload: %w", err)
	}
	res, err := client.Do(req)
	if err != nil {
		return m, fmt.Errorf("wsload: %w", err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		return m, fmt.Errorf("wsload: /debug/mem: %w", err)
	}

	return m, nil
}

// MeasureIdle opens n idle sessions and reports what each costs the server
// pid in RSS and, if memURL is set, in Go heap and stacks.
func MeasureIdle(ctx context.Context, kind Kind, url string, client *http.Client, memURL string, pid, n int, hold time.Duration) (IdleResult, error) {
	res := IdleResult{Sessions: n}
	var m0, m1 memstat.Mem
	var err error
	if memURL != "" {
		if m0, err = ReadMem(ctx, client, memURL); err != nil {
			return res, err
		}
	}
	rss0, err := loadgen.RSS(pid)
	if err != nil {
		return res, err
	}
	g, err := Idle(ctx, kind, url, client, n)
	if err != nil {
		return res, err
	}
	defer g.Close()
	time.Sleep(2 * time.Second) // let handshakes finish and the server settle
	if memURL != "" {
		if m1, err = ReadMem(ctx, client, memURL); err != nil {
			return res, err
		}
	}
	rss1, err := loadgen.RSS(pid)
	if err != nil {
		return res, err
	}
	per := func(a, b uint64) float64 { return (float64(b) - float64(a)) / float64(n) }
	res.RSSPerSession = (float64(rss1) - float64(rss0)) / float64(n)
	if memURL != "" {
		res.HeapPerSession = per(m0.HeapInuse, m1.HeapInuse)
		res.StackPerSession = per(m0.StackInuse, m1.StackInuse)
		res.GoroutinesPer = (float64(m1.Goroutines) - float64(m0.Goroutines)) / float64(n)
	}
	select {
	case <-time.After(hold):
	case <-ctx.Done():
	}

	return res, nil
}
