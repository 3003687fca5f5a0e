// Command hostrelay is the relay server: lobby page, lobby WebSocket and
// embedded TURN in one process. `hostrelay -h` lists the flags; each has a
// HOSTRELAY_* environment variable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hostrelay/hostrelay/server"
)

func main() {
	cfg, err := server.LoadConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := server.NewLogger(cfg, os.Stderr)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	go func() {
		// A second signal means the operator will not wait for the drain.
		<-ctx.Done()
		stop()
		again := make(chan os.Signal, 1)
		signal.Notify(again, syscall.SIGINT, syscall.SIGTERM)
		<-again
		log.Warn("second signal: exiting without waiting", "component", "server")
		os.Exit(1)
	}()

	if err := server.Run(ctx, cfg, log); err != nil {
		log.Error("exit", "component", "server", "err", err)
		os.Exit(1)
	}
}
