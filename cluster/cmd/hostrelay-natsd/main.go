// Command hostrelay-natsd runs a single NATS server with JetStream on
// loopback for trying a hostrelay cluster on one machine and for the browser
// tests: it prints its nats:// URL on the first line of stdout and runs until
// SIGINT or SIGTERM (or, with -stdin, until its stdin closes, so a test
// runner that dies takes it along). Production runs NATS itself.
//
//	hostrelay-natsd [-addr 127.0.0.1:4222] [-store DIR] [-stdin]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/hostrelay/hostrelay/cluster/natsd"
)

func main() {
	addr := flag.String("addr", "", "host:port to listen on (empty: 127.0.0.1 on a free port)")
	store := flag.String("store", "", "JetStream directory (empty: a temporary one, removed on exit)")
	watchStdin := flag.Bool("stdin", false, "also stop when stdin closes")
	flag.Parse()
	if err := run(*addr, *store, *watchStdin); err != nil {
		slog.Error("hostrelay-natsd", "err", err)
		os.Exit(1)
	}
}

func run(addr, store string, watchStdin bool) error {
	if store == "" {
		dir, err := os.MkdirTemp("", "hostrelay-natsd-")
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		defer os.RemoveAll(dir)
		store = dir
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := natsd.Start(ctx, natsd.Options{Addr: addr, StoreDir: store})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Println(s.URL()) //nolint:forbidigo // the URL is this command's output
	// A parent that dies closes our stdin: stop with it, leaving no server behind.
	stdinClosed := make(chan struct{})
	if watchStdin {
		go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdinClosed) }()
	}
	select {
	case <-ctx.Done():
	case <-stdinClosed:
	}
	return nil
}
