package client

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/coder/websocket"
	"github.com/pion/webrtc/v4"

	"github.com/hostrelay/hostrelay/protocol"
)

// Lobby is one lobby session: a WebSocket to the server. It is safe for
// concurrent use.
type Lobby struct {
	opts    Options
	log     *slog.Logger
	conn    *websocket.Conn
	api     *webrtc.API
	welcome protocol.Welcome

	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]chan protocol.Envelope
	room    *Room      // the room this session is in, if any
	watch   *RoomWatch // the room list being watched, if any
	err     error      // why the lobby closed

	done chan struct{} // closed when the read loop ends
}

// Dial connects to a hostrelay lobby (url like ws://host:8080/ws) and
// completes the hello handshake.
func Dial(ctx context.Context, url string, opts Options) (*Lobby, error) {
	opts = opts.withDefaults()
	if err := protocol.ValidatePlayerName(opts.Name); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: opts.Header, HTTPClient: opts.HTTPClient})
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", url, err)
	}
	// The server never sends more than MaxFrame; a larger frame is a bug or
	// an attack, and the library closes the connection for it.
	conn.SetReadLimit(protocol.MaxFrame)
	l := &Lobby{
		opts:    opts,
		log:     opts.Logger.With("component", "client"),
		conn:    conn,
		api:     opts.newAPI(),
		pending: make(map[uint32]chan protocol.Envelope),
		done:    make(chan struct{}),
	}
	go l.readLoop()
	if err := l.call(ctx, protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: opts.Name}, &l.welcome); err != nil {
		l.Close()
		return nil, err
	}
	l.log = l.log.With("session", l.welcome.Session)
	return l, nil
}

// Session is this lobby session's id (it appears in TURN usernames).
func (l *Lobby) Session() string { return l.welcome.Session }

// Token is the secret bearer token for the server's HTTP API (/api/v1),
// valid while this session is connected.
func (l *Lobby) Token() string { return l.welcome.Token }

// Done is closed when the lobby connection has ended.
func (l *Lobby) Done() <-chan struct{} { return l.done }

// Err reports why the lobby closed, once Done is closed.
func (l *Lobby) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close leaves any room, closes its peer connections and the WebSocket, and
// waits for the SDK's goroutines to end.
func (l *Lobby) Close() error {
	// The close handshake's own errors (already closed, peer gone) change
	// nothing for the caller: either way the session is over.
	_ = l.conn.Close(websocket.StatusNormalClosure, "")
	<-l.done
	return nil
}

// CreateRoom creates a room with this session as its host.
func (l *Lobby) CreateRoom(ctx context.Context, req protocol.CreateRoom) (*Room, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return l.enter(ctx, protocol.TypeCreateRoom, &req)
}

// JoinRoom joins the room with this code as a client and starts connecting
// to its host; a PeerOpen event says when the channels are open.
func (l *Lobby) JoinRoom(ctx context.Context, code, password string) (*Room, error) {
	req := protocol.JoinRoom{Code: code, Password: password}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return l.enter(ctx, protocol.TypeJoinRoom, &req)
}

func (l *Lobby) enter(ctx context.Context, typ string, body any) (*Room, error) {
	// The room must exist before the reply is read: events for it may follow
	// immediately, and the read loop routes them to l.room.
	r := newRoom(l)
	l.mu.Lock()
	if l.room != nil {
		l.mu.Unlock()
		return nil, &Error{Code: protocol.CodeAlreadyInRoom, Message: "leave the current room first"}
	}
	l.room = r
	l.mu.Unlock()
	var rj protocol.RoomJoined
	if err := l.call(ctx, typ, body, &rj); err != nil {
		l.mu.Lock()
		if l.room == r {
			l.room = nil
		}
		l.mu.Unlock()
		r.shutdown("", err)
		return nil, err
	}
	if err := r.start(rj); err != nil {
		return nil, err
	}
	return r, nil
}

// call sends a request and waits for its reply, decoding it into out. A
// server Error becomes *Error.
func (l *Lobby) call(ctx context.Context, typ string, body, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.opts.RequestTimeout)
		defer cancel()
	}
	ch := make(chan protocol.Envelope, 1)
	l.mu.Lock()
	l.nextID++
	if l.nextID == 0 { // 0 means "no reply wanted"
		l.nextID++
	}
	id := l.nextID
	l.pending[id] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.pending, id)
		l.mu.Unlock()
	}()
	if err := l.send(ctx, typ, id, body); err != nil {
		return err
	}
	select {
	case env := <-ch:
		if env.Type == protocol.TypeError {
			var e protocol.Error
			if err := protocol.DecodeBody(env, &e); err != nil {
				return fmt.Errorf("client: %s: %w", typ, err)
			}
			return &Error{Code: e.Code, Message: e.Message}
		}
		if err := protocol.DecodeBody(env, out); err != nil {
			return fmt.Errorf("client: %s reply: %w", typ, err)
		}
		return nil
	case <-l.done:
		return fmt.Errorf("client: %s: %w", typ, ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("client: %s: %w", typ, ctx.Err())
	}
}

func (l *Lobby) send(ctx context.Context, typ string, id uint32, body any) error {
	frame, err := protocol.Encode(typ, id, body)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if err := l.conn.Write(ctx, websocket.MessageBinary, frame); err != nil {
		return fmt.Errorf("client: send %s: %w", typ, err)
	}
	return nil
}

func (l *Lobby) readLoop() {
	var err error
	defer func() {
		l.mu.Lock()
		l.err = err
		r := l.room
		l.room = nil
		l.mu.Unlock()
		if r != nil {
			r.shutdown("lobby connection closed", ErrClosed)
		}
		close(l.done)
	}()
	for {
		var frame []byte
		_, frame, err = l.conn.Read(context.Background())
		if err != nil {
			return
		}
		var env protocol.Envelope
		if env, err = protocol.Decode(frame); err != nil {
			err = fmt.Errorf("client: server sent a bad frame: %w", err)
			l.conn.Close(websocket.StatusProtocolError, "bad frame")
			return
		}
		if env.ID != 0 {
			l.mu.Lock()
			ch, ok := l.pending[env.ID]
			l.mu.Unlock()
			if ok {
				ch <- env // buffered 1, and each id gets one reply
			}
			continue
		}
		l.mu.Lock()
		r := l.room
		l.mu.Unlock()
		if env.Type == protocol.TypeError {
			var e protocol.Error
			_ = protocol.DecodeBody(env, &e)
			l.log.Warn("server notice", "code", e.Code, "msg", e.Message)
			continue
		}
		if env.Type == protocol.TypeRoomListUpdate {
			l.routeListUpdate(env)
			continue
		}
		if r != nil {
			r.handle(env)
		}
	}
}

func (l *Lobby) routeListUpdate(env protocol.Envelope) {
	l.mu.Lock()
	w := l.watch
	l.mu.Unlock()
	var u protocol.RoomListUpdate
	if w == nil || protocol.DecodeBody(env, &u) != nil {
		return
	}
	w.apply(u)
}

// leftRoom forgets r when it ends.
func (l *Lobby) leftRoom(r *Room) {
	l.mu.Lock()
	if l.room == r {
		l.room = nil
	}
	l.mu.Unlock()
}
