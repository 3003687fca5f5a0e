package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/webhook"
)

const hookSecret = "webhook-secret-for-tests-0123456789"

// eventReceiver is a real webhook receiver: it verifies each request's
// signature and each room's order, and can hang until released.
type eventReceiver struct {
	srv     *httptest.Server
	release chan struct{}

	mu      sync.Mutex
	hang    bool
	events  []webhook.Event
	lastSeq map[string]uint64
	bad     []string
}

func newEventReceiver(t *testing.T) *eventReceiver {
	r := &eventReceiver{release: make(chan struct{}), lastSeq: map[string]uint64{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		hang := r.hang
		r.mu.Unlock()
		if hang {
			select {
			case <-r.release:
			case <-req.Context().Done():
				return
			}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := webhook.Verify([]byte(hookSecret), req.Header.Get(webhook.SignatureHeader), body, time.Now()); err != nil {
			r.bad = append(r.bad, err.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var e webhook.Event
		if err := json.Unmarshal(body, &e); err != nil {
			r.bad = append(r.bad, err.Error())
			return
		}
		if e.Seq != r.lastSeq[e.Room]+1 {
			r.bad = append(r.bad, fmt.Sprintf("room %s: seq %d after %d", e.Room, e.Seq, r.lastSeq[e.Room]))
		}
		r.lastSeq[e.Room] = e.Seq
		r.events = append(r.events, e)
	}))
	t.Cleanup(func() {
		r.unhang()
		r.srv.Close()
	})
	return r
}

func (r *eventReceiver) unhang() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hang {
		r.hang = false
		close(r.release)
	}
}

// log is the events taken as "type player reason" lines for one room.
func (r *eventReceiver) log(room string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Room == room {
			out = append(out, strings.Join(strings.Fields(e.Type+" "+e.Player+" "+e.Reason), " "))
		}
	}
	return out
}

func (r *eventReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// joinHookServer refuses players named Mallory and lets anyone else in.
func joinHookServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if err := webhook.Verify([]byte(hookSecret), req.Header.Get(webhook.SignatureHeader), body, time.Now()); err != nil {
			t.Errorf("join hook: %v", err)
		}
		var j webhook.JoinHookRequest
		_ = json.Unmarshal(body, &j)
		if j.Name == "Mallory" {
			_, _ = io.WriteString(w, `{"allow":false,"message":"Mallory is banned from `+j.Action+`"}`)
			return
		}
		_, _ = io.WriteString(w, `{"allow":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The whole path against real parts: lobby requests to a running server,
// signed events at a receiver that checks them and their order, the join
// hook refusing one player; at shutdown the events of the sessions it ends
// are delivered before Shutdown returns.
func TestWebhooksEndToEnd(t *testing.T) {
	rcv := newEventReceiver(t)
	s := startServer(t, "-webhook-url", rcv.srv.URL, "-webhook-secret", hookSecret, "-join-hook-url", joinHookServer(t))
	addr := s.Addrs().HTTP
	host := dialLobby(t, addr, "host")
	rj := host.create("hooked", 4, "")
	code := rj.Room.Code
	ada := dialLobby(t, addr, "Ada")
	if _, err := ada.join(code, ""); err != nil {
		t.Fatal(err)
	}
	mallory := dialLobby(t, addr, "Mallory")
	_, err := mallory.join(code, "")
	var re lobbytest.ReplyError
	if !errors.As(err, &re) || re.Code != protocol.CodeJoinRefused || re.Message != "Mallory is banned from join" {
		t.Fatalf("Mallory's join: %v", err)
	}
	if err := ada.call(protocol.TypeLeaveRoom, &protocol.LeaveRoom{}, nil); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "3 events", func() bool { return rcv.count() == 3 })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(rcv.log(code), ", ")
	if want := "room.created p1, player.joined p2, player.left p2 left, player.left p1 disconnected, room.closed host_left"; got != want {
		t.Errorf("events %s\nwant %s", got, want)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.bad) > 0 {
		t.Errorf("receiver: %v", rcv.bad)
	}
	if st := s.webhooks.Stats(); st.Delivered != 5 || st.Queued != 0 {
		t.Errorf("stats %+v", st)
	}
	if st := s.joinHook.Stats(); st.Allowed != 2 || st.Refused != 1 {
		t.Errorf("join hook stats %+v", st)
	}
}

// A receiver that hangs costs the lobby nothing: 20 creates and joins all
// complete (each well within a generous bound) while every delivery waits,
// and the events are then delivered in order.
func TestWebhookHungReceiverLobbyGoesOn(t *testing.T) {
	rcv := newEventReceiver(t)
	rcv.hang = true
	s := startServer(t, "-webhook-url", rcv.srv.URL, "-webhook-secret", hookSecret)
	addr := s.Addrs().HTTP
	start := time.Now()
	var slowest time.Duration
	for i := range 10 {
		t0 := time.Now()
		host := dialLobby(t, addr, fmt.Sprintf("host%d", i))
		rj := host.create("r", 4, "")
		guest := dialLobby(t, addr, fmt.Sprintf("guest%d", i))
		if _, err := guest.join(rj.Room.Code, ""); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(t0))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("20 lobby operations took %v with the receiver hung", d)
	}
	if st := s.webhooks.Stats(); st.Queued != 20 || st.Delivered != 0 {
		t.Errorf("while hung: %+v", st)
	}
	t.Logf("20 creates and joins in %v (slowest pair %v) with the receiver hung", time.Since(start), slowest)
	rcv.unhang()
	testwait.For(t, "20 delivered", func() bool { return s.webhooks.Stats().Delivered == 20 })
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.bad) > 0 {
		t.Errorf("receiver: %v", rcv.bad)
	}
}

// A join hook that is down: fail-closed refuses creates with unavailable,
// fail-open lets them through.
func TestJoinHookDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	_ = ln.Close()

	closed := startServer(t, "-join-hook-url", down, "-webhook-secret", hookSecret)
	l := dialLobby(t, closed.Addrs().HTTP, "Ada")
	var rj protocol.RoomJoined
	err = l.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "x", MaxPlayers: 2}, &rj)
	var re lobbytest.ReplyError
	if !errors.As(err, &re) || re.Code != protocol.CodeUnavailable {
		t.Errorf("fail-closed: %v, want unavailable", err)
	}
	open := startServer(t, "-join-hook-url", down, "-webhook-secret", hookSecret, "-join-hook-fail-open", "on")
	dialLobby(t, open.Addrs().HTTP, "Ada").create("x", 2, "")
	if st := open.joinHook.Stats(); st.FailedOpen != 1 {
		t.Errorf("fail-open stats %+v", st)
	}
}

func TestWebhookOptions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-webhook-url", "http://127.0.0.1:1/"}, "required with -webhook-url"},
		{[]string{"-join-hook-url", "http://127.0.0.1:1/"}, "required with -webhook-url or -join-hook-url"},
		{[]string{"-webhook-url", "ftp://x/", "-webhook-secret", hookSecret}, "http:// or https://"},
		{[]string{"-webhook-url", "http://x/", "-webhook-secret", "short"}, "at least 16 bytes"},
		{[]string{"-webhook-secret", hookSecret, "-webhook-secret-file", "/x"}, "not both"},
		{[]string{"-webhook-queue", "0"}, "between 1 and 1000000"},
		{[]string{"-webhook-queue", "1000001"}, "between 1 and 1000000"},
		{[]string{"-join-hook-timeout", "49ms"}, "between 50ms and 10s"},
		{[]string{"-join-hook-timeout", "11s"}, "between 50ms and 10s"},
	} {
		_, err := LoadConfig(c.args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), hookSecret) {
			t.Errorf("%v: the secret is in the error: %v", c.args, err)
		}
	}
	for _, ok := range [][]string{{"-join-hook-timeout", "50ms"}, {"-join-hook-timeout", "10s"}, {"-webhook-queue", "1000000"}} {
		if _, err := LoadConfig(ok, noEnv, io.Discard); err != nil {
			t.Errorf("%v at the limit: %v", ok, err)
		}
	}
}
