package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/internal/leakcheck"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/server/servertest"
	"github.com/hostrelay/hostrelay/signaling"
)

// startServer runs a real hostrelay in-process on loopback.
func startServer(t testing.TB) string {
	return startServerWithSecret(t, "client-tests-secret-0123456789")
}

func startServerWithSecret(t testing.TB, secret string, flags ...string) string {
	t.Helper()
	url, _ := startServerHub(t, secret, flags...)
	return url
}

// startServerHub is startServerWithSecret that also returns the server's
// lobby, for a test that reads its metrics.
func startServerHub(t testing.TB, secret string, flags ...string) (string, *signaling.Hub) {
	t.Helper()
	s := servertest.Start(t, secret, flags...)
	return servertest.LobbyURL(s), s.Hub()
}

func dial(t *testing.T, url, name string) *client.Lobby {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := client.Dial(ctx, url, client.Options{Name: name, Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// next waits for an event of type T, skipping other kinds.
func next[T client.Event](t *testing.T, r *client.Room) T {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-r.Events():
			if !ok {
				var zero T
				t.Fatalf("events closed waiting for %T (room err %v)", zero, r.Err())
			}
			if v, ok := e.(T); ok {
				return v
			}
		case <-timeout:
			var zero T
			t.Fatalf("timed out waiting for %T", zero)
		}
	}
}

func recv(t *testing.T, r *client.Room, want string) client.Message {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-r.Messages():
			if string(m.Data) == want {
				return m
			}
		case <-timeout:
			t.Fatalf("no message %q", want)
		}
	}
}

// TestHostWithFourClients: a Go host, four Go clients, every pair relay/relay,
// messages both ways on both channels, and clients leaving and rejoining.
func TestHostWithFourClients(t *testing.T) {
	url := startServer(t)
	ctx := t.Context()

	hostL := dial(t, url, "Host")
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "go room", MaxPlayers: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !host.IsHost() || len(host.Code()) != protocol.RoomCodeLength {
		t.Fatalf("host room %+v", host.Info())
	}

	lobbies := make([]*client.Lobby, 4)
	rooms := make([]*client.Room, 4)
	for i := range rooms {
		lobbies[i] = dial(t, url, fmt.Sprintf("Bot%d", i))
		if rooms[i], err = lobbies[i].JoinRoom(ctx, strings.ToLower(host.Code()), ""); err != nil {
			t.Fatal(err)
		}
		if rooms[i].IsHost() || rooms[i].Info().Host != host.You() {
			t.Fatalf("client %d sees host %q", i, rooms[i].Info().Host)
		}
	}
	for i, r := range rooms {
		next[client.PeerOpen](t, r)
		local, remote, err := r.SelectedPair(host.You())
		if err != nil || local != "relay" || remote != "relay" {
			t.Fatalf("client %d pair %s/%s %v", i, local, remote, err)
		}
	}
	opened := map[string]bool{}
	for len(opened) < 4 {
		opened[next[client.PeerOpen](t, host).ID] = true
	}
	if got := len(host.OpenPeers()); got != 4 {
		t.Fatalf("host has %d open peers", got)
	}

	for i, r := range rooms {
		if err := r.Send(host.You(), client.Events, []byte(fmt.Sprintf("hello %d", i))); err != nil {
			t.Fatal(err)
		}
		m := recv(t, host, fmt.Sprintf("hello %d", i))
		if m.From != r.You() || m.Channel != client.Events {
			t.Fatalf("message %+v", m)
		}
	}
	if err := host.Broadcast(client.Events, []byte("snapshot")); err != nil {
		t.Fatal(err)
	}
	for _, r := range rooms {
		if m := recv(t, r, "snapshot"); m.From != host.You() {
			t.Fatalf("snapshot from %s", m.From)
		}
	}
	// Game channel: unreliable, so send until one arrives.
	deadline := time.Now().Add(5 * time.Second)
	for got := false; !got; {
		if time.Now().After(deadline) {
			t.Fatal("no game packet arrived")
		}
		_ = rooms[0].Send(host.You(), client.Game, []byte("input"))
		select {
		case m := <-host.Messages():
			got = m.Channel == client.Game && string(m.Data) == "input"
		case <-time.After(100 * time.Millisecond):
		}
	}

	// Client 0 leaves: the host sees it go; then it rejoins and reconnects.
	leaver := rooms[0].You()
	if err := rooms[0].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if left := next[client.PlayerLeft](t, host); left.ID != leaver || left.Reason != protocol.ReasonLeft {
		t.Fatalf("PlayerLeft %+v", left)
	}
	if err := rooms[0].Send(host.You(), client.Events, []byte("x")); err == nil {
		t.Fatal("send after leaving succeeded")
	}
	again, err := lobbies[0].JoinRoom(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	next[client.PeerOpen](t, again)
	if joined := next[client.PlayerJoined](t, host); joined.Player.ID != again.You() {
		t.Fatalf("PlayerJoined %+v", joined)
	}

	// Client 1's whole lobby connection drops.
	dropped := rooms[1].You()
	lobbies[1].Close()
	if left := next[client.PlayerLeft](t, host); left.ID != dropped || left.Reason != protocol.ReasonDisconnect {
		t.Fatalf("PlayerLeft %+v", left)
	}

	// The host leaves: every client's room closes.
	hostL.Close()
	for _, r := range []*client.Room{again, rooms[2], rooms[3]} {
		next[client.RoomClosed](t, r)
		<-r.Done()
	}

	for _, l := range lobbies {
		l.Close()
	}
	checkNoLeaks(t)
}

func TestJoinErrors(t *testing.T) {
	url := startServer(t)
	ctx := t.Context()
	l := dial(t, url, "Bot")
	if _, err := l.JoinRoom(ctx, "2345678", ""); !client.IsCode(err, protocol.CodeRoomNotFound) {
		t.Fatalf("unknown code: %v", err)
	}
	if _, err := l.JoinRoom(ctx, "not a code", ""); err == nil {
		t.Fatal("malformed code accepted")
	}
	host := dial(t, url, "Host")
	r, err := host.CreateRoom(ctx, protocol.CreateRoom{Name: "locked", MaxPlayers: 2, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.JoinRoom(ctx, r.Code(), "wrong"); !client.IsCode(err, protocol.CodeWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := host.CreateRoom(ctx, protocol.CreateRoom{Name: "second", MaxPlayers: 2}); !client.IsCode(err, protocol.CodeAlreadyInRoom) {
		t.Fatalf("second room: %v", err)
	}
	if _, err := client.Dial(ctx, url, client.Options{Name: ""}); err == nil {
		t.Fatal("empty name accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := client.Dial(cctx, url, client.Options{Name: "x"}); err == nil {
		t.Fatal("Dial ignored a cancelled context")
	}
}

// checkNoLeaks waits until no goroutine of the SDK or of its WebRTC stack is
// left: Close must stop them all. The in-process server's own goroutines
// (lobby sessions, TURN allocations that expire on their own) are not the
// SDK's and are not counted.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	if left := leakcheck.Wait(10*time.Second, sdkGoroutine); len(left) > 0 {
		t.Fatalf("%d SDK goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// sdkMarkers name the SDK and the libraries it runs: pion/ice v4.4 gathers
// relay candidates with pion/turn/v5's client (the server is on v4), and
// ice's mDNS is off but would be a leak if it ran.
var sdkMarkers = []string{"hostrelay/client.", "pion/webrtc", "pion/ice", "pion/sctp", "pion/dtls",
	"pion/datachannel", "pion/srtp", "pion/interceptor", "pion/turn/v5", "pion/mdns"}

// sdkGoroutine reports whether a goroutine's stack (frames and "created
// by") is the SDK's or its WebRTC stack's. coder/websocket serves both ends
// in these tests; the server's goroutines run in or were started by
// signaling or server code, so any other is the SDK's.
func sdkGoroutine(stack string) bool {
	if strings.Contains(stack, "client_test.checkNoLeaks") {
		return false
	}
	for _, marker := range sdkMarkers {
		if strings.Contains(stack, marker) {
			return true
		}
	}
	return strings.Contains(stack, "github.com/coder/websocket") &&
		!strings.Contains(stack, "hostrelay/hostrelay/signaling") && !strings.Contains(stack, "hostrelay/hostrelay/server")
}

// TestSDKGoroutineMarkers holds sdkGoroutine to stacks of the kinds it must
// tell apart, so a renamed package cannot silently blind the leak check.
func TestSDKGoroutineMarkers(t *testing.T) {
	for stack, want := range map[string]bool{
		"goroutine 7 [select]:\ngithub.com/pion/turn/v5/internal/client.(*PeriodicTimer).Start.func1()\n" +
			"created by github.com/pion/turn/v5/internal/client.(*PeriodicTimer).Start in goroutine 5": true,
		"goroutine 8 [IO wait]:\ninternal/poll.(*FD).Read()\ncreated by github.com/pion/ice/v4.(*Agent).gatherCandidatesRelay": true,
		"goroutine 9 [chan receive]:\ngithub.com/hostrelay/hostrelay/client.(*Lobby).readLoop()":                               true,
		"goroutine 10 [IO wait]:\ngithub.com/coder/websocket.(*Conn).CloseRead.func1()\n" +
			"created by github.com/coder/websocket.(*Conn).CloseRead in goroutine 9": true,
		"goroutine 11 [IO wait]:\ngithub.com/coder/websocket.(*Conn).Read()\n" +
			"github.com/hostrelay/hostrelay/signaling.(*session).readLoop()": false,
		"goroutine 12 [select]:\ngithub.com/pion/turn/v4.(*Server).readLoop()":              false,
		"goroutine 13 [select]:\ngithub.com/pion/transport/v4/vnet.(*Router).Start.func1()": false,
		"goroutine 14 [running]:\ngithub.com/hostrelay/hostrelay/client_test.checkNoLeaks()\n" +
			"github.com/hostrelay/hostrelay/client_test.TestX()": false,
	} {
		if got := sdkGoroutine(stack); got != want {
			t.Errorf("sdkGoroutine = %v, want %v for\n%s", got, want, stack)
		}
	}
}

// TestDialFailuresLeaveNothing: every way Dial can fail, before or after the
// WebSocket opens, returns an error and leaves no goroutine behind.
func TestDialFailuresLeaveNothing(t *testing.T) {
	url := startServer(t)
	// A WebSocket server that accepts and then never answers hello, or
	// closes at once; it reads so the SDK's close handshake completes.
	var handlers sync.WaitGroup
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		if r.URL.Path == "/close" {
			_ = conn.Close(websocket.StatusPolicyViolation, "go away")
			return
		}
		for {
			if _, _, err := conn.Read(context.Background()); err != nil {
				return
			}
		}
	}))
	defer fake.Close()
	fakeURL := "ws" + strings.TrimPrefix(fake.URL, "http")

	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for name, c := range map[string]struct {
		url  string
		ctx  context.Context
		opts client.Options
	}{
		"cancelled context": {url, cancelled, client.Options{Name: "x"}},
		"not a WebSocket":   {strings.TrimSuffix(url, "/ws") + "/nope", t.Context(), client.Options{Name: "x"}},
		"refused origin": {url, t.Context(), client.Options{Name: "x",
			Header: http.Header{"Origin": []string{"https://evil.example"}}}},
		"no answer to hello":  {fakeURL + "/silent", nil, client.Options{Name: "x"}},
		"closed before hello": {fakeURL + "/close", t.Context(), client.Options{Name: "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := c.ctx
			if ctx == nil {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(t.Context(), 300*time.Millisecond)
				defer cancel()
			}
			c.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			l, err := client.Dial(ctx, c.url, c.opts)
			if err == nil {
				l.Close()
				t.Fatal("Dial succeeded")
			}
			t.Log(err)
		})
	}
	// The fake server's goroutines use coder/websocket too; they must be gone
	// before the check, or they would count as the SDK's. They end when the
	// SDK closes its side, so one still running is itself a leak.
	gone := make(chan struct{})
	go func() { handlers.Wait(); close(gone) }()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("a failed Dial left its WebSocket open: the fake server is still reading")
	}
	checkNoLeaks(t)
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
