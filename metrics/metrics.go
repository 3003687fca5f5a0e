// Package metrics shows a running hostrelay to Prometheus: lobby sessions and
// rooms, joins and refusals, TURN allocations, relayed traffic and drops,
// auth failures, HTTP connections, and the Go runtime and process.
//
// Nothing here is updated where the work happens. The lobby and the relay
// keep their own counters (atomics, and the figures /healthz shows); the
// collector reads them when Prometheus scrapes, so a game packet costs no
// more with metrics on than off. Every label value comes from a fixed set
// (protocol request types and error codes, reasons, paths), never from a
// room code, an address or a player.
//
// Each server gets its own prometheus.Registry, passed in: two servers in one
// process (tests, an embedder) never share or collide in the global one.
package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/bans"
	"github.com/hostrelay/hostrelay/cluster"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/turn"
	"github.com/hostrelay/hostrelay/webhook"
)

// Sources are what the collector reads at each scrape. Lobby and TURN are
// required; HTTP may be nil.
type Sources struct {
	Lobby func() signaling.Metrics
	TURN  func() turn.Stats
	HTTP  func() HTTP
	// Cluster is nil on a single node: the cluster families are then not
	// sent at all.
	Cluster func() cluster.Stats
	// Auth is nil with -auth off: the token family is then not sent.
	Auth func() auth.Stats
	// Webhook and JoinHook are nil when off (no -webhook-url, no
	// -join-hook-url): their families are then not sent.
	Webhook  func() webhook.Stats
	JoinHook func() webhook.JoinHookStats
	// Bans is the server-wide ban list; nil: its families are not sent.
	Bans func() bans.Stats
}

// HTTP is the HTTP server's connections.
type HTTP struct {
	Open       int    // open connections, lobby WebSockets included
	WebSockets int    // open lobby WebSockets
	Evicted    uint64 // idle connections closed to make room at the connection cap
	Refused    uint64 // connections closed at once: at the cap with none idle
}

// Register adds hostrelay's metrics, read from src, to reg. It does not add
// the Go runtime and process collectors, which an embedder's registry
// usually has already; NewRegistry does.
func Register(reg prometheus.Registerer, src Sources) error {
	if src.Lobby == nil || src.TURN == nil {
		return ErrNoSource
	}
	if err := reg.Register(newCollector(src)); err != nil {
		return fmt.Errorf("metrics: register: %w", err)
	}
	return nil
}

// NewRegistry returns a registry of its own holding hostrelay's metrics,
// read from src, and the Go runtime and process collectors (go_*,
// process_*: heap, goroutines, GC, CPU seconds, resident memory, open file
// descriptors against their limit).
func NewRegistry(src Sources) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := Register(reg, src); err != nil {
		return nil, err
	}
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register: %w", err)
		}
	}
	return reg, nil
}
