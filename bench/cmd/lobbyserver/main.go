// Command lobbyserver serves hostrelay's lobby (signaling.Hub) on /ws the way
// the server does, with no TURN and no web app, so the lobby benchmarks can
// read its Go heap (/debug/mem) and profile it (/debug/pprof/). The
// per-session chat and message limits can be raised for fan-out runs.
//
//	lobbyserver -listen 127.0.0.1:0   # prints "listening <addr>"
//	lobbyserver -tls-cert cert.pem -tls-key key.pem   # the same over TLS
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/memstat"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
)

func main() {
	cfg := signaling.DefaultConfig()
	listen := flag.String("listen", "127.0.0.1:0", "HTTP listen address")
	flag.Float64Var(&cfg.ChatPerSecond, "chat-rate", cfg.ChatPerSecond, "chat lines per second per session")
	flag.IntVar(&cfg.ChatBurst, "chat-burst", cfg.ChatBurst, "chat burst per session")
	flag.Float64Var(&cfg.MessagesPerSecond, "message-rate", cfg.MessagesPerSecond, "messages per second per session")
	flag.IntVar(&cfg.MessageBurst, "message-burst", cfg.MessageBurst, "message burst per session")
	flag.IntVar(&cfg.QueueSize, "queue", cfg.QueueSize, "outgoing frames queued per session")
	certFile := flag.String("tls-cert", "", "serve HTTPS (wss://) with this PEM certificate, as hostrelay's own TLS does")
	keyFile := flag.String("tls-key", "", "the private key of -tls-cert")
	profileRate := flag.Int("memprofilerate", 0, "runtime.MemProfileRate (0: Go's default; 1: every allocation)")
	flag.Parse()
	if *profileRate > 0 {
		runtime.MemProfileRate = *profileRate
	}

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.ICE = func(string, string) protocol.ICE {
		return protocol.ICE{Servers: []protocol.ICEServer{{URLs: []string{"turn:127.0.0.1:3478"}}}, TTL: 3600}
	}
	// Every load connection comes from 127.0.0.1.
	cfg.MaxConnsPerIP, cfg.JoinsPerMinute = 1<<30, 1<<30
	cfg.Logger = log
	hub, err := signaling.NewHub(cfg)
	if err != nil {
		log.Error("hub", "err", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			http.Error(w, "bad remote address", http.StatusBadRequest)

			return
		}
		hub.ServeWebSocket(w, r, ap.Addr())
	})
	mux.Handle("/debug/mem", memstat.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening %s\n", ln.Addr()) //nolint:forbidigo // the driver reads it
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = hub.Close(sctx)
	}()
	if *certFile != "" {
		err = srv.ServeTLS(ln, *certFile, *keyFile)
	} else {
		err = srv.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "err", err)
	}
}
