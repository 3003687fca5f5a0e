package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"time"
)

// The debug listener serves net/http/pprof for soak runs and profiling. It is
// off by default and may only bind a loopback address: profiles show every
// goroutine's stack (room codes, session ids in arguments) and a CPU profile
// costs the server CPU on demand, so it must never face the network. An
// operator reaches it from the host itself (or through an SSH tunnel).

// checkDebugAddr accepts "" (off) or a loopback IP literal with a port. A
// host name is refused even if it is "localhost": what it resolves to is not
// ours to check at start.
func checkDebugAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() {
		return errors.New("must be a loopback address such as 127.0.0.1:6060 or [::1]:6060 (pprof must not face the network)")
	}
	return nil
}

// debugServer is the running debug listener.
type debugServer struct {
	ln    net.Listener
	http  *http.Server
	serve chan error
}

func startDebug(ctx context.Context, addr string, log *slog.Logger) (*debugServer, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server: listen -debug-addr %s: %w", addr, err)
	}
	// Our own mux: net/http/pprof's init also registers on
	// http.DefaultServeMux, which nothing of ours serves.
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	d := &debugServer{
		ln: ln,
		http: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
		serve: make(chan error, 1),
	}
	go func() { d.serve <- d.http.Serve(ln) }()
	return d, nil
}

// close stops it at once: a CPU profile in progress is cut short rather
// than holding up shutdown for its 30 seconds.
func (d *debugServer) close() error {
	if d == nil {
		return nil
	}
	err := d.http.Close()
	<-d.serve //nolint:errcheck // Serve returns http.ErrServerClosed after Close: nothing to report
	if err != nil {
		return fmt.Errorf("debug: %w", err)
	}
	return nil
}

func (d *debugServer) addr() string {
	if d == nil {
		return ""
	}
	return d.ln.Addr().String()
}
