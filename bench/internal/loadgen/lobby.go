package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

// LobbySession is one lobby WebSocket held open so its TURN credentials stay
// valid (hostrelay refuses credentials of closed sessions). A goroutine
// reads it for its whole life, so pings are answered and events reach
// onEvent; the raw client under it is internal/lobbytest's.
type LobbySession struct {
	*lobbytest.Conn
	// onEvent gets the frames that answer no request (DialLobby's argument).
	onEvent func(protocol.Envelope)
	read    chan struct{} // closed when the read goroutine is done
	// Session is the session id from Welcome.
	Session string
}

// DialLobby opens a lobby session on url (ws://host:port/ws) and says hello.
// onEvent, if not nil, gets every event frame on the read goroutine.
func DialLobby(ctx context.Context, url, name string, onEvent func(protocol.Envelope)) (*LobbySession, error) {
	return DialLobbyWith(ctx, nil, url, name, onEvent)
}

// DialLobbyWith is DialLobby upgrading through client (nil: Go's default),
// for a wss:// URL whose certificate the client must trust.
func DialLobbyWith(ctx context.Context, client *http.Client, url, name string, onEvent func(protocol.Envelope)) (*LobbySession, error) {
	conn, _, err := lobbytest.Dial(ctx, url, lobbytest.Options{ReadLimit: protocol.MaxFrame, HTTPClient: client})
	if err != nil {
		return nil, fmt.Errorf("loadgen: dial lobby: %w", err)
	}
	l := &LobbySession{Conn: conn, onEvent: onEvent, read: make(chan struct{})}
	go l.readLoop() //nolint:gosec // reads for the session's life, past ctx (the dial's); Close ends it
	w, err := conn.Hello(ctx, protocol.Hello{Name: name})
	if err != nil {
		l.Close()

		return nil, fmt.Errorf("loadgen: hello: %w", err)
	}
	l.Session = w.Session

	return l, nil
}

// readLoop reads until the connection ends (Close ends it). Replies to Call
// go to their caller from here; frames SetRaw consumes never leave the read.
func (l *LobbySession) readLoop() {
	defer close(l.read)
	for {
		env, err := l.Read(context.Background())
		if err != nil {
			select {
			case <-l.Done():
				return
			default:
				continue // a frame that would not decode
			}
		}
		if l.onEvent != nil {
			l.onEvent(env)
		}
	}
}

// Send writes one message without waiting for a reply, with id 0 (none
// comes for a Signal; a chat line is acknowledged with id 0).
func (l *LobbySession) Send(ctx context.Context, typ string, body any) error {
	if err := l.SendID(ctx, 0, typ, body); err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}

	return nil
}

// Call sends a request and decodes the reply into out (nil: not decoded);
// it waits at most 10 s.
func (l *LobbySession) Call(ctx context.Context, typ string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := l.Conn.Call(ctx, typ, body, out); err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}

	return nil
}

// Close closes the connection and waits for the read goroutine.
func (l *LobbySession) Close() {
	_ = l.CloseNow()
	<-l.read
}

// TURNCreds returns the credentials in a RoomJoined reply.
func TURNCreds(rj protocol.RoomJoined) (Creds, error) {
	if len(rj.ICE.Servers) == 0 {
		return Creds{}, errors.New("loadgen: RoomJoined without ICE servers")
	}
	s := rj.ICE.Servers[0]

	return Creds{Username: s.Username, Password: s.Credential}, nil
}

// LobbyRooms opens rooms of size members on the hostrelay lobby at url (one
// host creating, the others joining) and returns every member's TURN
// credentials in order: room 0's host, its clients, room 1's host, ... The
// sessions stay open until closeAll is called.
func LobbyRooms(ctx context.Context, url string, rooms, size int) (creds []Creds, closeAll func(), err error) {
	var mu sync.Mutex
	var sessions []*LobbySession
	closeAll = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range sessions {
			s.Close()
		}
		sessions = nil
	}
	creds = make([]Creds, rooms*size)
	errs := make(chan error, rooms)
	sem := make(chan struct{}, 32)
	for r := range rooms {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- lobbyRoom(ctx, url, r, size, creds[r*size:(r+1)*size], func(s *LobbySession) {
				mu.Lock()
				sessions = append(sessions, s)
				mu.Unlock()
			})
		}()
	}
	for range rooms {
		err = errors.Join(err, <-errs)
	}
	if err != nil {
		closeAll()

		return nil, nil, err
	}

	return creds, closeAll, nil
}

func lobbyRoom(ctx context.Context, url string, r, size int, out []Creds, keep func(*LobbySession)) error {
	host, err := DialLobby(ctx, url, fmt.Sprintf("host %d", r), nil)
	if err != nil {
		return err
	}
	keep(host)
	var rj protocol.RoomJoined
	if err := host.Call(ctx, protocol.TypeCreateRoom, &protocol.CreateRoom{
		Name: fmt.Sprintf("bench %d", r), MaxPlayers: max(size, 2),
	}, &rj); err != nil {
		return err
	}
	if out[0], err = TURNCreds(rj); err != nil {
		return err
	}
	for i := 1; i < size; i++ {
		c, err := DialLobby(ctx, url, fmt.Sprintf("player %d.%d", r, i), nil)
		if err != nil {
			return err
		}
		keep(c)
		var cj protocol.RoomJoined
		if err := c.Call(ctx, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code}, &cj); err != nil {
			return err
		}
		if out[i], err = TURNCreds(cj); err != nil {
			return err
		}
	}

	return nil
}
