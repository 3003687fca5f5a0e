package server

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

// lobby is a lobby connection for the integration tests that fails its test
// on anything unexpected; the raw client under it is lobbytest's.
type lobby struct {
	*lobbytest.Conn
	t       *testing.T
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

// newLobby wraps conn, which has not said hello yet.
func newLobby(t *testing.T, conn *lobbytest.Conn) *lobby {
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &lobby{Conn: conn, t: t}
}

// dialWS opens /ws from the local address from ("": any) with header added
// to the upgrade request. On a refused upgrade the response says why.
func dialWS(t *testing.T, httpAddr, from string, header http.Header) (*lobbytest.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	opts := lobbytest.Options{Header: header}
	if from != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		tr := &http.Transport{DialContext: d.DialContext}
		// A refused upgrade leaves a keep-alive connection in the pool.
		t.Cleanup(tr.CloseIdleConnections)
		opts.HTTPClient = &http.Client{Transport: tr}
	}
	return lobbytest.Dial(ctx, "ws://"+httpAddr+"/ws", opts)
}

// call sends a request and decodes its reply into out, or returns the
// server's Error as a lobbytest.ReplyError.
func (l *lobby) call(typ string, body, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return l.Call(ctx, typ, body, out)
}

// next waits for the next event of type typ, skipping none: events arrive
// in order and the tests assert that order.
func (l *lobby) next(typ string, out any) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.Next(ctx, typ, out); err != nil {
		l.t.Fatal(err)
	}
}

// closed waits for the server to end the connection and returns why.
func (l *lobby) closed() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return l.WaitClosed(ctx)
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
