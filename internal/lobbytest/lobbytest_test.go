package lobbytest_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/internal/leakcheck"
	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m, 10*time.Second, leakcheck.Any)) }

// peer is the server side of one connection, driven by the test.
type peer struct {
	t  *testing.T
	ws *websocket.Conn
}

// scripted serves one WebSocket whose server side runs script, and returns
// its URL.
func scripted(t *testing.T, script func(p *peer)) string {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		defer close(done)
		defer ws.CloseNow()
		script(&peer{t: t, ws: ws})
	}))
	t.Cleanup(func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the server script did not end")
		}
		srv.Close()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// read reads one request from the client.
func (p *peer) read() protocol.Envelope {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, frame, err := p.ws.Read(ctx)
	if err != nil {
		p.t.Errorf("server read: %v", err)
		return protocol.Envelope{}
	}
	env, err := protocol.Decode(frame)
	if err != nil {
		p.t.Errorf("server decode: %v", err)
	}
	return env
}

// send writes one frame to the client.
func (p *peer) send(typ string, id uint32, body any) {
	p.t.Helper()
	frame, err := protocol.Encode(typ, id, body)
	if err != nil {
		p.t.Error(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
		p.t.Errorf("server write: %v", err)
	}
}

// waitClose waits for the client to go, so the script ends with the test.
func (p *peer) waitClose() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := p.ws.Read(ctx); err != nil {
			return
		}
	}
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, url string, opts lobbytest.Options) *lobbytest.Conn {
	t.Helper()
	c, _, err := lobbytest.Dial(ctx5(t), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// TestCallTakesItsReplyAndKeepsTheRest: frames that arrive before a reply
// (an event, a reply to an id nobody waits for) are kept for Read in order,
// and the reply goes to Call, decoded.
func TestCallTakesItsReplyAndKeepsTheRest(t *testing.T) {
	url := scripted(t, func(p *peer) {
		req := p.read()
		p.send(protocol.TypePlayerLeft, 0, &protocol.PlayerLeft{ID: "p2"})
		p.send(protocol.TypeOK, req.ID+100, &protocol.OK{})
		p.send(protocol.TypeRoomJoined, req.ID, &protocol.RoomJoined{You: "p1"})
		p.waitClose()
	})
	c := dial(t, url, lobbytest.Options{})
	var rj protocol.RoomJoined
	if err := c.Call(ctx5(t), protocol.TypeJoinRoom, &protocol.JoinRoom{Code: "2345678"}, &rj); err != nil {
		t.Fatal(err)
	}
	if rj.You != "p1" {
		t.Fatalf("reply %+v", rj)
	}
	var pl protocol.PlayerLeft
	if _, err := c.Next(ctx5(t), protocol.TypePlayerLeft, &pl); err != nil || pl.ID != "p2" {
		t.Fatalf("first kept frame: %+v %v", pl, err)
	}
	env, err := c.Read(ctx5(t))
	if err != nil || env.Type != protocol.TypeOK || env.ID != 101 {
		t.Fatalf("second kept frame: %+v %v", env, err)
	}
	if got := c.Received(); got != 3 {
		t.Fatalf("received %d frames, want 3", got)
	}
}

// TestCallReturnsReplyError: an Error reply is a ReplyError with its code.
func TestCallReturnsReplyError(t *testing.T) {
	url := scripted(t, func(p *peer) {
		req := p.read()
		p.send(protocol.TypeError, req.ID, &protocol.Error{Code: protocol.CodeRoomNotFound, Message: "no room"})
		p.waitClose()
	})
	c := dial(t, url, lobbytest.Options{})
	err := c.Call(ctx5(t), protocol.TypeJoinRoom, &protocol.JoinRoom{Code: "2345678"}, &protocol.RoomJoined{})
	var re lobbytest.ReplyError
	if !errors.As(err, &re) || re.Code != protocol.CodeRoomNotFound || re.Message != "no room" {
		t.Fatalf("error %v, want a ReplyError %s", err, protocol.CodeRoomNotFound)
	}
}

// TestRequestWhileAnotherGoroutineReads: a Read blocked on the socket hands
// a concurrent Call its reply, and still gets the event after it.
func TestRequestWhileAnotherGoroutineReads(t *testing.T) {
	url := scripted(t, func(p *peer) {
		req := p.read()
		p.send(protocol.TypeOK, req.ID, &protocol.OK{})
		p.send(protocol.TypeChatMessage, 0, &protocol.ChatMessage{Text: "after"})
		p.waitClose()
	})
	c := dial(t, url, lobbytest.Options{})
	events := make(chan protocol.Envelope, 1)
	errs := make(chan error, 1)
	readCtx := ctx5(t)
	go func() {
		env, err := c.Read(readCtx)
		events <- env
		errs <- err
	}()
	if err := c.Call(ctx5(t), protocol.TypeSetReady, &protocol.SetReady{Ready: true}, &protocol.OK{}); err != nil {
		t.Fatal(err)
	}
	env := <-events
	if err := <-errs; err != nil || env.Type != protocol.TypeChatMessage {
		t.Fatalf("Read got %+v %v, want the chat line after the reply", env, err)
	}
}

// TestResumedWelcomeIsNotCounted: Received goes on from Options.Received
// and skips the Welcome that answers a resume, as the server counts.
func TestResumedWelcomeIsNotCounted(t *testing.T) {
	url := scripted(t, func(p *peer) {
		req := p.read()
		p.send(protocol.TypeWelcome, req.ID, &protocol.Welcome{Session: "s", Resumed: true})
		p.send(protocol.TypePlayerUpdated, 0, &protocol.PlayerUpdated{})
		p.waitClose()
	})
	c := dial(t, url, lobbytest.Options{Received: 7})
	w, err := c.Hello(ctx5(t), protocol.Hello{Resume: "r", Received: 7})
	if err != nil || !w.Resumed {
		t.Fatalf("hello: %+v %v", w, err)
	}
	if _, err := c.Next(ctx5(t), protocol.TypePlayerUpdated, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.Received(); got != 8 {
		t.Fatalf("received %d, want 8 (7 before, the event, not the resumed Welcome)", got)
	}
}

// TestSetRawConsumesFrames: a frame the raw function takes is not decoded
// or kept, and counts as received.
func TestSetRawConsumesFrames(t *testing.T) {
	url := scripted(t, func(p *peer) {
		p.send(protocol.TypeChatMessage, 0, &protocol.ChatMessage{Text: "raw"})
		p.send(protocol.TypeChatMessage, 0, &protocol.ChatMessage{Text: "decoded"})
		p.waitClose()
	})
	c := dial(t, url, lobbytest.Options{})
	var raw int
	c.SetRaw(func(frame []byte) bool {
		if strings.Contains(string(frame), "raw") {
			raw++
			return true
		}
		return false
	})
	var m protocol.ChatMessage
	if _, err := c.Next(ctx5(t), protocol.TypeChatMessage, &m); err != nil || m.Text != "decoded" {
		t.Fatalf("next: %+v %v", m, err)
	}
	if raw != 1 || c.Received() != 2 {
		t.Fatalf("raw %d, received %d; want 1 and 2", raw, c.Received())
	}
}

// TestWaitClosedSaysWhy: a close from the server comes back with its status,
// after the frames sent before it.
func TestWaitClosedSaysWhy(t *testing.T) {
	url := scripted(t, func(p *peer) {
		p.send(protocol.TypeError, 0, &protocol.Error{Code: protocol.CodeRateLimited})
		_ = p.ws.Close(websocket.StatusPolicyViolation, "flood")
	})
	c := dial(t, url, lobbytest.Options{})
	var e protocol.Error
	if _, err := c.Next(ctx5(t), protocol.TypeError, &e); err != nil || e.Code != protocol.CodeRateLimited {
		t.Fatalf("next: %+v %v", e, err)
	}
	err := c.WaitClosed(ctx5(t))
	if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v (%v), want %v", st, err, websocket.StatusPolicyViolation)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done is open after the close")
	}
	if _, err := c.Read(ctx5(t)); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("Read after the close: %v", err)
	}
}

// TestEndedContextLeavesConnectionOpen: a Read or Call whose ctx has ended
// returns at once without touching the socket, which coder/websocket would
// close.
func TestEndedContextLeavesConnectionOpen(t *testing.T) {
	url := scripted(t, func(p *peer) {
		req := p.read()
		p.send(protocol.TypeOK, req.ID, &protocol.OK{})
		p.waitClose()
	})
	c := dial(t, url, lobbytest.Options{})
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Read(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read under an ended ctx: %v", err)
	}
	if err := c.Call(ctx5(t), protocol.TypeLeaveRoom, nil, nil); err != nil {
		t.Fatalf("call after: %v", err)
	}
}

// TestAgainstHub: Connect, Call and Next against a real signaling.Hub: a
// room made by one connection is joined by another, whose arrival the host
// reads as an event.
func TestAgainstHub(t *testing.T) {
	cfg := signaling.DefaultConfig()
	cfg.ICE = func(string, string) protocol.ICE { return protocol.ICE{} }
	cfg.Logger = slog.New(slog.DiscardHandler)
	hub, err := signaling.NewHub(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hub.ServeWebSocket(w, r, netip.MustParseAddr("127.0.0.1"))
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hub.Close(ctx); err != nil {
			t.Error(err)
		}
		srv.Close()
	})
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
	host, w, err := lobbytest.Connect(ctx5(t), url, "Ada", lobbytest.Options{})
	if err != nil || w.Session == "" {
		t.Fatalf("connect: %+v %v", w, err)
	}
	defer host.CloseNow()
	var rj protocol.RoomJoined
	if err := host.Call(ctx5(t), protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 2}, &rj); err != nil {
		t.Fatal(err)
	}
	bob, _, err := lobbytest.Connect(ctx5(t), url, "Bob", lobbytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.CloseNow()
	if err := bob.Call(ctx5(t), protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code}, nil); err != nil {
		t.Fatal(err)
	}
	var pj protocol.PlayerJoined
	if _, err := host.Next(ctx5(t), protocol.TypePlayerJoined, &pj); err != nil || pj.Player.Name != "Bob" {
		t.Fatalf("host saw %+v %v", pj, err)
	}
	err = bob.Call(ctx5(t), protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code}, nil)
	var re lobbytest.ReplyError
	if !errors.As(err, &re) || re.Code != protocol.CodeAlreadyInRoom {
		t.Fatalf("second join: %v, want %s", err, protocol.CodeAlreadyInRoom)
	}
}
