// Command hostrelay is the relay server: lobby page, lobby WebSocket and
// embedded TURN in one process. `hostrelay -h` lists the flags; each has a
// HOSTRELAY_* environment variable; `hostrelay -version` prints the version.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hostrelay/hostrelay/internal/buildinfo"
	"github.com/hostrelay/hostrelay/server"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "-version" || os.Args[1] == "--version") {
		v := "hostrelay " + buildinfo.Version()
		if c := buildinfo.Commit(); c != "" {
			v += " (" + c + ")"
		}
		fmt.Fprintln(os.Stdout, v)
		return
	}
	cfg, err := server.LoadConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := server.NewLogger(cfg, os.Stderr)

	// One channel, registered before anything runs, sees both signals: the
	// first starts the drain, a second means the operator will not wait for
	// it. (Re-registering after the first would leave a window in which the
	// second is lost or kills the process with the default action.)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		sig := <-sigs
		log.Info("signal: draining", "component", "server", "signal", sig.String(), "grace", cfg.ShutdownGrace)
		cancel()
		<-sigs
		log.Warn("second signal: exiting without waiting", "component", "server")
		os.Exit(1)
	}()

	if err := server.Run(ctx, cfg, log); err != nil {
		log.Error("exit", "component", "server", "err", err)
		os.Exit(1)
	}
}
