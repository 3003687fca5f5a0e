package server

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hostrelay/hostrelay/cluster"
	"github.com/hostrelay/hostrelay/metrics"
)

// The metrics listener serves Prometheus metrics (package metrics) on an
// address of its own, off by default. Not on the main port: that port
// faces players, and the figures (rooms, players, refusals, traffic) are
// the operator's, with no key to guard them. hostrelay already needs its
// own ports and a public IP for TURN, so a private port for a scraper costs
// an operator nothing; a single-port platform could not run TURN anyway.

// MetricsConfig is the Prometheus listener.
type MetricsConfig struct {
	Addr string // empty: off
}

func (c *MetricsConfig) bind(b binder) {
	b.add("metrics-addr", "addr", strValue{&c.Addr},
		"address serving Prometheus metrics at /metrics, e.g. 127.0.0.1:9090, or a private interface for a scraper on another host; it has no authentication, so keep it off the internet (a public address is logged as a warning); empty: off").
		checked(func() error {
			if c.Addr == "" {
				return nil
			}
			return hostPort(&c.Addr)()
		}).
		defaultDoc("off").
		link("[metrics](docs/operations.md#metrics)")
}

// metricsSources are the server's figures as the collector reads them.
func (s *Server) metricsSources() metrics.Sources {
	var clusterStats func() cluster.Stats
	if s.cluster != nil {
		clusterStats = s.cluster.Stats
	}
	src := metrics.Sources{
		Cluster: clusterStats,
		Lobby:   s.hub.Metrics,
		Bans:    s.bans.Stats,
		TURN:    s.turn.Stats,
		HTTP: func() metrics.HTTP {
			open, webSockets := s.conns.counts()
			return metrics.HTTP{Open: open, WebSockets: webSockets, Evicted: s.conns.evicted.Load(), Refused: s.conns.refused.Load()}
		},
	}
	if s.auth != nil {
		src.Auth = s.auth.Stats
	}
	if s.webhooks != nil {
		src.Webhook = s.webhooks.Stats
	}
	if s.joinHook != nil {
		src.JoinHook = s.joinHook.Stats
	}
	return src
}

// RegisterMetrics adds this server's metrics (hostrelay_*, not the Go
// runtime's) to reg, for an embedder that serves its own registry.
func (s *Server) RegisterMetrics(reg prometheus.Registerer) error {
	return metrics.Register(reg, s.metricsSources())
}

// startMetrics starts the metrics listener on a registry of this server's
// own, if an address is configured; nil otherwise.
func (s *Server) startMetrics(ctx context.Context, addr string, log *slog.Logger) (*metrics.Server, error) {
	if addr == "" {
		return nil, nil // off: no listener, no error
	}
	reg, err := metrics.NewRegistry(s.metricsSources())
	if err != nil {
		return nil, err
	}
	return metrics.Listen(ctx, addr, reg, log)
}
