package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// lobby is a minimal Go lobby client for the integration tests: a reader
// goroutine routes replies to their request and events to a channel.
type lobby struct {
	t       *testing.T
	conn    *websocket.Conn
	mu      sync.Mutex
	nextID  uint32
	wait    map[uint32]chan protocol.Envelope
	events  chan protocol.Envelope
	closed  chan struct{}
	err     error
	welcome protocol.Welcome
}

func dialLobby(t *testing.T, httpAddr, name string) *lobby {
	t.Helper()
	return dialLobbyFrom(t, httpAddr, "", name)
}

// dialLobbyFrom is dialLobby from the local address from ("": any), so a
// test can be several clients: all of 127.0.0.0/8 reaches a loopback server.
func dialLobbyFrom(t *testing.T, httpAddr, from, name string) *lobby {
	t.Helper()
	conn, resp, err := dialWS(t, httpAddr, from, nil)
	if err != nil {
		t.Fatalf("dial lobby: %v (%v)", err, resp)
	}
	l := newLobby(t, conn)
	if err := l.call(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: name}, &l.welcome); err != nil {
		t.Fatalf("hello: %v", err)
	}
	return l
}

// newLobby starts reading conn, which has not said hello yet.
func newLobby(t *testing.T, conn *websocket.Conn) *lobby {
	l := &lobby{t: t, conn: conn, wait: map[uint32]chan protocol.Envelope{},
		events: make(chan protocol.Envelope, 256), closed: make(chan struct{})}
	go l.readLoop()
	t.Cleanup(func() { conn.CloseNow(); <-l.closed })
	return l
}

// dialWS opens /ws from the local address from ("": any) with header added
// to the upgrade request. On a refused upgrade the response says why.
func dialWS(t *testing.T, httpAddr, from string, header http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	opts := &websocket.DialOptions{HTTPHeader: header}
	if from != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		tr := &http.Transport{DialContext: d.DialContext}
		// A refused upgrade leaves a keep-alive connection in the pool.
		t.Cleanup(tr.CloseIdleConnections)
		opts.HTTPClient = &http.Client{Transport: tr}
	}
	conn, resp, err := websocket.Dial(ctx, "ws://"+httpAddr+"/ws", opts)
	if err != nil {
		return nil, resp, err
	}
	conn.SetReadLimit(protocol.MaxFrame)
	return conn, resp, nil
}

func (l *lobby) readLoop() {
	defer close(l.closed)
	for {
		_, frame, err := l.conn.Read(context.Background())
		if err != nil {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			return
		}
		env, err := protocol.Decode(frame)
		if err != nil {
			l.t.Errorf("server sent a bad frame: %v", err)
			return
		}
		l.mu.Lock()
		ch, ok := l.wait[env.ID]
		delete(l.wait, env.ID)
		l.mu.Unlock()
		if ok && env.ID != 0 {
			ch <- env
		} else {
			l.events <- env
		}
	}
}

type replyErr protocol.Error

func (e replyErr) Error() string { return e.Code + ": " + e.Message }

// call sends a request and decodes its reply into out, or returns the
// server's Error as a replyErr.
func (l *lobby) call(typ string, body, out any) error {
	l.mu.Lock()
	l.nextID++
	id := l.nextID
	ch := make(chan protocol.Envelope, 1)
	l.wait[id] = ch
	l.mu.Unlock()
	frame, err := protocol.Encode(typ, id, body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.conn.Write(ctx, websocket.MessageBinary, frame); err != nil {
		return err
	}
	select {
	case env := <-ch:
		if env.Type == protocol.TypeError {
			var e protocol.Error
			if err := protocol.DecodeBody(env, &e); err != nil {
				return err
			}
			return replyErr(e)
		}
		return protocol.DecodeBody(env, out)
	case <-ctx.Done():
		return fmt.Errorf("%s: no reply: %w", typ, ctx.Err())
	}
}

// next waits for the next event of type typ, skipping none: events arrive
// in order and the tests assert that order.
func (l *lobby) next(typ string, out any) {
	l.t.Helper()
	select {
	case env := <-l.events:
		if env.Type != typ {
			l.t.Fatalf("event %s, want %s", env.Type, typ)
		}
		if err := protocol.DecodeBody(env, out); err != nil {
			l.t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		l.t.Fatalf("no %s event", typ)
	}
}

func (l *lobby) create(name string, max int, password string) protocol.RoomJoined {
	l.t.Helper()
	var rj protocol.RoomJoined
	if err := l.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: name, MaxPlayers: max, Public: true, Password: password}, &rj); err != nil {
		l.t.Fatalf("create: %v", err)
	}
	return rj
}

func (l *lobby) join(code, password string) (protocol.RoomJoined, error) {
	var rj protocol.RoomJoined
	err := l.call(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code, Password: password}, &rj)
	return rj, err
}
