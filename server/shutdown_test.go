package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/internal/slowclient"
	"github.com/hostrelay/hostrelay/internal/testwait"
)

// Issue 24, finding 6: a request trickling its body does not hold the
// shutdown. When Run's context ends, lobby sessions are told at once (close
// 1001), the trickling connection is closed after httpDrainBound, and Run
// returns nil well within -shutdown-grace: a clean stop, exit status 0.
func TestShutdownWithTricklingRequest(t *testing.T) {
	cfg, err := LoadConfig([]string{"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-public-ip", "127.0.0.1", "-turn-secret", "0123456789abcdef0123456789abcdef", "-shutdown-grace", "10s"},
		noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Run, in two steps, so the test can see the request in progress.
	s, err := New(t.Context(), cfg, slog.New(slog.NewTextHandler(testLog{t}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- s.serveUntil(ctx) }()
	t.Cleanup(func() { // whatever failed, no server outlives the test
		cancel()
		if err := <-ran; err != nil {
			t.Logf("serve: %v", err)
		}
	})
	addr := s.Addrs().HTTP

	conn := dialLobby(t, addr, "Ada")
	trickled := slowclient.Trickle(t, addr)
	testwait.For(t, "the trickling request to be in progress", func() bool {
		open, webSockets := s.conns.counts()
		return open == 2 && webSockets == 1 && s.conns.waitingLen() == 0
	})

	start := time.Now()
	cancel()
	// Before the fix the lobby heard nothing until the grace ran out.
	wctx, wcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer wcancel()
	err = conn.WaitClosed(wctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway {
		t.Fatalf("lobby close %v after %v, want 1001 within 2s", err, time.Since(start).Round(time.Millisecond))
	}
	told := time.Since(start)
	select {
	case err := <-ran:
		ran <- err // for the cleanup
		if err != nil {
			t.Fatalf("Run after %v: %v, want nil", time.Since(start).Round(time.Millisecond), err)
		}
	case <-time.After(httpDrainBound + 4*time.Second):
		t.Fatalf("Run had not returned %v after its context ended", httpDrainBound+4*time.Second)
	}
	returned := time.Since(start)
	select {
	case <-trickled:
	case <-time.After(2 * time.Second):
		t.Fatal("the trickling connection is still open after Run returned")
	}
	t.Logf("lobby told after %v, Run returned nil after %v", told.Round(time.Millisecond), returned.Round(time.Millisecond))
}
