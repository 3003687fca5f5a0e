package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the listener serves the metrics.
const Path = "/metrics"

// scrapeTimeout bounds one scrape; a gather takes well under a millisecond.
const scrapeTimeout = 10 * time.Second

// Handler serves g in the Prometheus text format (or OpenMetrics, if the
// scraper asks), at most a few scrapes at a time.
func Handler(g prometheus.Gatherer, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             scrapeTimeout,
	})
}

// Server is a running metrics listener: Path and nothing else.
type Server struct {
	ln    net.Listener
	http  *http.Server
	serve chan error
}

// Listen serves g on addr until Close. The listener answers anyone who can
// reach it, so addr should be loopback or a private interface: it logs a
// warning when the address it bound is neither.
func Listen(ctx context.Context, addr string, g prometheus.Gatherer, log *slog.Logger) (*Server, error) {
	log = log.With("component", "metrics")
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	if bound, ok := ln.Addr().(*net.TCPAddr); ok && !private(bound.AddrPort().Addr()) {
		log.Warn("metrics listener is not on a loopback or private address: anyone who reaches it sees the server's figures",
			"addr", bound.String(), "hint", "bind 127.0.0.1 or a private interface, or firewall the port")
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, Handler(g, log))
	s := &Server{
		ln: ln,
		http: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			WriteTimeout:      scrapeTimeout + 5*time.Second,
			IdleTimeout:       2 * time.Minute, // Prometheus keeps its connection between scrapes
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
		serve: make(chan error, 1),
	}
	go func() { s.serve <- s.http.Serve(ln) }()
	return s, nil
}

// private reports whether ip is loopback or in a private range: an address
// only this host or its own network reaches.
func private(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()
}

// Addr is the address the listener is bound to.
func (s *Server) Addr() string {
	if s == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops the listener at once: a scrape in progress is cut short.
// Close on a nil Server does nothing, so a server with metrics off can call
// it all the same.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	err := s.http.Close()
	if serr := <-s.serve; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("metrics: close: %w", err)
	}
	return nil
}
