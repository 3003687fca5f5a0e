package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/protocol"
)

// bouncer is a lobby that always sends joins elsewhere, to itself: what two
// nodes that disagree about a room would do to a client. No real server
// can be made to do it, so this one speaks just enough of the protocol.
func bouncer(t *testing.T) (url string, hellos *atomic.Int32) {
	t.Helper()
	hellos = new(atomic.Int32)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, frame, err := c.Read(r.Context())
			if err != nil {
				return
			}
			env, err := protocol.Decode(frame)
			if err != nil {
				return
			}
			var out []byte
			switch env.Type {
			case protocol.TypeHello:
				hellos.Add(1)
				out, _ = protocol.Encode(protocol.TypeWelcome, env.ID, &protocol.Welcome{Version: protocol.Version, Session: "s_x", Node: "n"})
			default:
				out, _ = protocol.Encode(protocol.TypeError, env.ID, &protocol.Error{Code: protocol.CodeRoomElsewhere,
					Message: "over there", URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"})
			}
			if err := c.Write(r.Context(), websocket.MessageBinary, out); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws", hellos
}

// TestMovesAreBounded: a request follows room_elsewhere twice (the limit),
// and the third answer comes back to the caller as the error it is.
func TestMovesAreBounded(t *testing.T) {
	url, hellos := bouncer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	l, err := client.Dial(ctx, url, client.Options{Name: "Bo"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.JoinRoom(ctx, "ABC2345", "")
	if !client.IsCode(err, protocol.CodeRoomElsewhere) {
		t.Fatalf("join: %v, want room_elsewhere after the moves", err)
	}
	if n := hellos.Load(); n != 3 { // the dial, then two moves
		t.Fatalf("%d hellos, want 3: the first connection and two moves", n)
	}
}
