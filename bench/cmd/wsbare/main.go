// Command wsbare serves the bare coder/websocket fan-out (bare.Fanout) that
// the lobby benchmarks compare hostrelay's lobby with, plus /debug/mem and
// /debug/pprof/.
//
//	wsbare -listen 127.0.0.1:0   # prints "listening <addr>"
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/bare"
	"github.com/hostrelay/hostrelay/bench/internal/memstat"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "HTTP listen address")
	queue := flag.Int("queue", 64, "messages queued per subscriber")
	flag.Parse()
	mux := http.NewServeMux()
	mux.Handle("/ws", &bare.Fanout{Queue: *queue})
	mux.Handle("/debug/mem", memstat.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening %s\n", ln.Addr()) //nolint:forbidigo // the driver reads it
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Print(err)
		os.Exit(1)
	}
}
