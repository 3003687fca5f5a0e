package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// LobbySession is one lobby WebSocket held open so its TURN credentials stay
// valid (hostrelay refuses credentials of closed sessions).
type LobbySession struct {
	conn   *websocket.Conn
	mu     sync.Mutex
	nextID uint32
	wait   map[uint32]chan protocol.Envelope
	// onEvent gets the frames that answer no request (DialLobby's argument).
	onEvent func(protocol.Envelope)
	// Raw, if set before traffic starts, sees every frame first and may
	// consume it (return true) without the cost of decoding it. Load
	// generators use it so their own decoding does not bound a measurement.
	Raw  atomic.Pointer[func([]byte) bool]
	done chan struct{}
	// Session is the session id from Welcome.
	Session string
}

// DialLobby opens a lobby session on url (ws://host:port/ws) and says hello.
// onEvent, if not nil, gets every event frame on the read goroutine.
func DialLobby(ctx context.Context, url, name string, onEvent func(protocol.Envelope)) (*LobbySession, error) {
	conn, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("loadgen: dial lobby: %w", err)
	}
	conn.SetReadLimit(protocol.MaxFrame)
	l := &LobbySession{conn: conn, wait: make(map[uint32]chan protocol.Envelope), onEvent: onEvent, done: make(chan struct{})}
	go l.readLoop()
	var w protocol.Welcome
	if err := l.Call(ctx, protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: name}, &w); err != nil {
		l.Close()

		return nil, err
	}
	l.Session = w.Session

	return l, nil
}

func (l *LobbySession) readLoop() {
	defer close(l.done)
	for {
		_, frame, err := l.conn.Read(context.Background())
		if err != nil {
			return
		}
		if raw := l.Raw.Load(); raw != nil && (*raw)(frame) {
			continue
		}
		env, err := protocol.Decode(frame)
		if err != nil {
			continue
		}
		l.mu.Lock()
		ch, ok := l.wait[env.ID]
		delete(l.wait, env.ID)
		l.mu.Unlock()
		switch {
		case ok && env.ID != 0:
			ch <- env
		case l.onEvent != nil:
			l.onEvent(env)
		}
	}
}

// Send writes one request without waiting for a reply (id 0: none comes for
// a Signal).
func (l *LobbySession) Send(ctx context.Context, typ string, body any) error {
	frame, err := protocol.Encode(typ, 0, body)
	if err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}

	return l.conn.Write(ctx, websocket.MessageBinary, frame)
}

// LobbyError is an Error reply.
type LobbyError protocol.Error

func (e LobbyError) Error() string { return "lobby: " + e.Code + ": " + e.Message }

// Call sends a request and decodes the reply into out.
func (l *LobbySession) Call(ctx context.Context, typ string, body, out any) error {
	l.mu.Lock()
	l.nextID++
	id := l.nextID
	ch := make(chan protocol.Envelope, 1)
	l.wait[id] = ch
	l.mu.Unlock()
	frame, err := protocol.Encode(typ, id, body)
	if err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := l.conn.Write(ctx, websocket.MessageBinary, frame); err != nil {
		return fmt.Errorf("loadgen: %s: %w", typ, err)
	}
	select {
	case env := <-ch:
		if env.Type == protocol.TypeError {
			var e protocol.Error
			_ = protocol.DecodeBody(env, &e)

			return LobbyError(e)
		}
		if out == nil {
			return nil
		}

		return protocol.DecodeBody(env, out)
	case <-l.done:
		return fmt.Errorf("loadgen: %s: connection closed", typ)
	case <-ctx.Done():
		return fmt.Errorf("loadgen: %s: %w", typ, ctx.Err())
	}
}

// Done is closed when the connection has ended.
func (l *LobbySession) Done() <-chan struct{} { return l.done }

// Close closes the connection.
func (l *LobbySession) Close() {
	_ = l.conn.CloseNow()
	<-l.done
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
