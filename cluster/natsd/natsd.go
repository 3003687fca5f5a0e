// Package natsd runs a NATS server with JetStream in this process, on
// loopback: what hostrelay's cluster tests, the browser tests and a local
// two-node try-out need without installing nats-server. Production runs a
// real NATS cluster; hostrelay only ever connects to one (-nats URL).
package natsd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ErrNotReady reports a server that did not accept connections in time.
var ErrNotReady = errors.New("natsd: server not ready")

// Server is a running embedded NATS server.
type Server struct {
	ns *server.Server
}

// Options are the few knobs a test needs.
type Options struct {
	// Addr is host:port to listen on; empty: 127.0.0.1 on a free port.
	Addr string
	// StoreDir holds JetStream's files; required (tests pass t.TempDir()).
	StoreDir string
}

// Start starts a server and waits, until ctx ends, for it to accept clients.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.StoreDir == "" {
		return nil, errors.New("natsd: StoreDir is required")
	}
	host, port := "127.0.0.1", -1 // -1: a random free port
	if o.Addr != "" {
		h, p, err := net.SplitHostPort(o.Addr)
		if err != nil {
			return nil, fmt.Errorf("natsd: addr %q: %w", o.Addr, err)
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("natsd: addr %q: port: %w", o.Addr, err)
		}
		host, port = h, n
		if n == 0 {
			port = -1
		}
	}
	ns, err := server.NewServer(&server.Options{
		Host:      host,
		Port:      port,
		JetStream: true,
		StoreDir:  o.StoreDir,
		NoSigs:    true, // the embedding process owns its signals
		NoLog:     true,
		// No HTTP monitoring, no cluster, no leafnodes: nothing else listens.
	})
	if err != nil {
		return nil, fmt.Errorf("natsd: %w", err)
	}
	go ns.Start()
	wait := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	if !ns.ReadyForConnections(wait) {
		ns.Shutdown()
		return nil, fmt.Errorf("%w after %s", ErrNotReady, wait)
	}
	return &Server{ns: ns}, nil
}

// URL is the nats:// URL clients connect to.
func (s *Server) URL() string { return s.ns.ClientURL() }

// Close shuts the server down and waits for it to stop.
func (s *Server) Close() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// ForTest starts a server for one test, stored in the test's temporary
// directory and closed when the test ends, and returns its URL.
func ForTest(t testing.TB) string {
	t.Helper()
	s, err := Start(t.Context(), Options{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s.URL()
}
