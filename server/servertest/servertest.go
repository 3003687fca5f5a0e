// Package servertest starts a real hostrelay server in-process on loopback
// for the tests of packages that talk to one (the Go client, the bot).
package servertest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/server"
)

// Start runs a server with the lobby, TURN over UDP and TCP on free
// loopback ports, secret as its TURN secret and flags after those; it is
// shut down when the test ends.
func Start(t testing.TB, secret string, flags ...string) *server.Server {
	t.Helper()
	cfg, err := server.LoadConfig(append([]string{
		"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-public-ip", "127.0.0.1", "-turn-secret", secret,
	}, flags...), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

// LobbyURL is s's lobby WebSocket URL.
func LobbyURL(s *server.Server) string { return "ws://" + s.Addrs().HTTP + "/ws" }
