package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/pion/webrtc/v4"

	"github.com/hostrelay/hostrelay/protocol"
)

// Lobby is one lobby session. It is safe for concurrent use. If its
// WebSocket dies while it is in a room, it reconnects and resumes the
// session's held seat (protocol.md, "Held seats and resume"); peer
// connections are not touched by that.
type Lobby struct {
	opts Options
	url  string
	// home is the URL dialled first: when the node a session moved to is
	// unreachable, home says whether that node is gone (room_lost).
	home string
	log  *slog.Logger
	api  *webrtc.API

	mu       sync.Mutex
	conn     *websocket.Conn
	welcome  protocol.Welcome // Resume is updated on every resume
	received uint64           // frames received on the session, for resume
	nextID   uint32
	pending  map[uint32]chan protocol.Envelope
	room     *Room      // the room this session is in, if any
	watch    *RoomWatch // the room list being watched, if any
	partyOf  *Party     // the party this session is in, if any
	// spectator is the room being watched, if any.
	spectator *Spectator
	closing   bool   // Close was called: do not resume
	err       error  // why the lobby closed
	refusal   *Error // why the server refused a resume, if it did

	// stop ends resume attempts when Close is called.
	stop     context.Context
	stopFunc context.CancelFunc

	done chan struct{}  // closed when the read loop ends
	bg   sync.WaitGroup // work started by the read loop (a watch renewed after a move)
}

// Dial connects to a hostrelay lobby (url like ws://host:8080/ws) and
// completes the hello handshake.
func Dial(ctx context.Context, url string, opts Options) (*Lobby, error) {
	opts = opts.withDefaults()
	if err := protocol.ValidatePlayerName(opts.Name); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	conn, err := dialWS(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	l := &Lobby{
		opts:    opts,
		url:     url,
		home:    url,
		log:     opts.Logger.With("component", "client"),
		conn:    conn,
		api:     opts.newAPI(),
		pending: make(map[uint32]chan protocol.Envelope),
		done:    make(chan struct{}),
	}
	l.stop, l.stopFunc = context.WithCancel(context.Background())
	go l.readLoop()
	var w protocol.Welcome
	token := opts.Token
	if token == "" && opts.GetToken != nil {
		if token, err = opts.GetToken(ctx); err != nil {
			l.Close()
			return nil, fmt.Errorf("client: get token: %w", err)
		}
	}
	if err := l.call(ctx, protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: opts.Name, Token: token}, &w); err != nil {
		l.Close()
		return nil, err
	}
	l.mu.Lock()
	l.welcome = w
	l.log = l.log.With("session", w.Session)
	l.mu.Unlock()
	return l, nil
}

func dialWS(ctx context.Context, url string, opts Options) (*websocket.Conn, error) {
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: opts.Header, HTTPClient: opts.HTTPClient})
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", url, err)
	}
	// The server never sends more than MaxFrame; a larger frame is a bug or
	// an attack, and the library closes the connection for it.
	conn.SetReadLimit(protocol.MaxFrame)
	return conn, nil
}

// Session is this lobby session's id (it appears in TURN usernames).
func (l *Lobby) Session() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.welcome.Session
}

// Token is the secret bearer token for the server's HTTP API (/api/v1),
// valid while this session is connected.
func (l *Lobby) Token() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.welcome.Token
}

// Done is closed when the lobby connection has ended for good.
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
	l.mu.Lock()
	l.closing = true
	conn := l.conn
	l.mu.Unlock()
	l.stopFunc()
	// A clean close (1000) tells the server we meant to go: it does not hold
	// the seat. Its own errors (already closed, peer gone) change nothing.
	_ = conn.Close(websocket.StatusNormalClosure, "")
	<-l.done
	l.bg.Wait()
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
	var r *Room
	err := l.follow(ctx, func() (err error) {
		r, err = l.enterHere(ctx, typ, body)
		return err
	})
	return r, err
}

// follow runs a request, and again on the node each room_elsewhere names.
// A room list watched on the old node is watched again on the new one once
// the request is answered (a spectate ends the watch, so not before).
func (l *Lobby) follow(ctx context.Context, do func() error) error {
	for moves := 0; ; moves++ {
		err := do()
		var e *Error
		if !errors.As(err, &e) || e.Code != protocol.CodeRoomElsewhere || e.URL == "" || moves == maxMoves {
			if moves > 0 {
				l.watchAgain()
			}
			return err
		}
		if err := l.move(ctx, e.URL); err != nil {
			if moves > 0 {
				l.watchAgain()
			}
			return err
		}
	}
}

// watchAgain renews the room list watch, if any, on the node the session
// is on now, without holding up the request that moved it.
func (l *Lobby) watchAgain() {
	l.mu.Lock()
	w := l.watch
	if w == nil || l.closing {
		l.mu.Unlock()
		return
	}
	l.bg.Add(1)
	l.mu.Unlock()
	go l.rewatch(w)
}

// maxMoves bounds how often one request follows room_elsewhere: nodes that
// disagree about a room must not bounce a client for ever.
const maxMoves = 2

// move takes the lobby session to another node of the cluster: a new
// session there (hello again with the same name), then the old connection
// is closed cleanly, so the old node holds no seat. Later resumes go to the
// new node.
func (l *Lobby) move(ctx context.Context, url string) error {
	token, err := l.freshToken(ctx, l.opts.Token)
	if err != nil {
		return fmt.Errorf("client: move to %s: %w", url, err)
	}
	conn, env, err := l.helloOn(ctx, url, protocol.Hello{Version: protocol.Version, Name: l.opts.Name, Token: token})
	if err != nil {
		return fmt.Errorf("client: move to %s: %w", url, err)
	}
	var w protocol.Welcome
	if env.Type != protocol.TypeWelcome || protocol.DecodeBody(env, &w) != nil {
		var e protocol.Error
		_ = protocol.DecodeBody(env, &e)
		err = &Error{Code: e.Code, Message: e.Message}
	}
	if err != nil {
		conn.CloseNow()
		return fmt.Errorf("client: move to %s: %w", url, err)
	}
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		conn.CloseNow()
		return ErrClosed
	}
	old, from := l.conn, l.url
	l.conn, l.url, l.welcome, l.received = conn, url, w, 0
	l.log = l.opts.Logger.With("component", "client", "session", w.Session)
	l.mu.Unlock()
	// The read loop sees the swap when the old connection ends.
	_ = old.Close(websocket.StatusNormalClosure, "moved to another node")
	l.log.Info("moved to the room's node", "from", from, "to", url, "node", w.Node, "region", w.Region)
	return nil
}

// URL is the lobby URL this session is on: the one dialled, or the node it
// moved to.
func (l *Lobby) URL() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.url
}

// Node and Region name the node this session is on (empty on a single
// node).
func (l *Lobby) Node() (node, region string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.welcome.Node, l.welcome.Region
}

func (l *Lobby) enterHere(ctx context.Context, typ string, body any) (*Room, error) {
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
		l.leftRoom(r)
		r.shutdown("", err)
		return nil, err
	}
	// The server stops a spectator's watch when it takes a seat.
	l.stopSpectating(SpectateJoined)
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
			return &Error{Code: e.Code, Message: e.Message, URL: e.URL, Region: e.Region}
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
	l.mu.Lock()
	conn := l.conn
	l.mu.Unlock()
	if err := conn.Write(ctx, websocket.MessageBinary, frame); err != nil {
		return fmt.Errorf("client: send %s: %w", typ, err)
	}
	return nil
}

// readLoop reads the session's frames, across resumes, until the session
// ends; then it shuts the room down.
func (l *Lobby) readLoop() {
	var err error
	for {
		l.mu.Lock()
		conn := l.conn
		l.mu.Unlock()
		err = l.readConn(conn)
		l.mu.Lock()
		moved := l.conn != conn
		l.mu.Unlock()
		if moved {
			continue // move swapped the connection: read the new one
		}
		if !l.resume(err) {
			break
		}
	}
	l.mu.Lock()
	refusal := l.refusal
	if refusal != nil {
		err = refusal
	}
	l.err = err
	r := l.room
	l.room = nil
	l.mu.Unlock()
	if refusal != nil && refusal.Code == protocol.CodeRoomLost {
		l.stopSpectating(protocol.ReasonRoomLost)
	} else {
		l.stopSpectating(protocol.ReasonDisconnect)
	}
	if r != nil {
		if refusal != nil && refusal.Code == protocol.CodeRoomLost {
			r.shutdown(protocol.ReasonRoomLost, refusal)
		} else {
			r.shutdown("lobby connection closed", ErrClosed)
		}
	}
	close(l.done)
}

// readConn dispatches frames from one connection until it fails.
func (l *Lobby) readConn(conn *websocket.Conn) error {
	for {
		_, frame, err := conn.Read(context.Background())
		if err != nil {
			return err
		}
		env, err := protocol.Decode(frame)
		if err != nil {
			conn.Close(websocket.StatusProtocolError, "bad frame")
			return fmt.Errorf("client: server sent a bad frame: %w", err)
		}
		l.mu.Lock()
		if l.conn != conn {
			l.mu.Unlock()
			return nil // moved: the old node's last frames are not this session's
		}
		if env.Type != protocol.TypeSpectatorFrame {
			// Spectator frames are outside the numbered frames a resume replays.
			l.received++
		}
		l.mu.Unlock()
		l.dispatch(env)
	}
}

func (l *Lobby) dispatch(env protocol.Envelope) {
	if env.ID != 0 {
		l.mu.Lock()
		ch, ok := l.pending[env.ID]
		l.mu.Unlock()
		if ok {
			select {
			case ch <- env: // buffered 1
			default: // a replayed reply already delivered once
			}
		}
		return
	}
	switch env.Type {
	case protocol.TypeError:
		var e protocol.Error
		_ = protocol.DecodeBody(env, &e)
		l.log.Warn("server notice", "code", e.Code, "msg", e.Message)
	case protocol.TypeRoomListUpdate:
		l.routeListUpdate(env)
	case protocol.TypeRoomJoined: // the party leader's QuickPlay placed us
		l.placed(env)
	case protocol.TypePartyUpdated:
		l.routeParty(env)
	case protocol.TypeSpectatorFrame, protocol.TypeSpectateEnded:
		l.routeSpectator(env)
	case protocol.TypeHostCheck:
		// Answered here, on the read loop, on purpose: a host whose program
		// stopped cannot, one that is merely slow still does at once
		// (docs/protocol.md, Frozen hosts).
		var m protocol.HostCheck
		_ = protocol.DecodeBody(env, &m)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := l.send(ctx, protocol.TypeHostAlive, 0, &protocol.HostAlive{Nonce: m.Nonce}); err != nil {
			l.log.Warn("answering the host check", "err", err)
		}
		cancel()
	default:
		l.mu.Lock()
		r := l.room
		l.mu.Unlock()
		if r != nil {
			r.handle(env)
		}
	}
}

// resume tries to take the session's held seat back on a new connection
// after err ended the old one, for up to the server's grace period. It
// reports whether reading can go on.
func (l *Lobby) resume(err error) bool {
	l.mu.Lock()
	token, grace, r := l.welcome.Resume, time.Duration(l.welcome.Grace)*time.Second, l.room
	closing := l.closing
	l.mu.Unlock()
	// The server holds a seat only for a session in a room whose
	// connection died; anything else is the end.
	st := websocket.CloseStatus(err)
	if closing || token == "" || grace <= 0 || r == nil || st == websocket.StatusNormalClosure || st == websocket.StatusGoingAway {
		return false
	}
	l.log.Info("lobby connection lost; resuming", "err", err, "grace", grace)
	deadline := time.Now().Add(grace)
	backoff := 100 * time.Millisecond
	l.mu.Lock()
	url, home := l.url, l.home
	l.mu.Unlock()
	for time.Now().Before(deadline) {
		ok, final := l.tryResume(deadline, token, url)
		if !ok && !final && home != url {
			// The room's node does not answer: ask the first node whether
			// it is gone (room_lost) or only slow (room_elsewhere: retry).
			ok, final = l.tryResume(deadline, token, home)
		}
		if ok {
			r.emit(Resumed{})
			return true
		}
		if final {
			return false
		}
		select {
		case <-time.After(min(backoff, time.Until(deadline))):
		case <-l.stop.Done():
			return false
		}
		backoff = min(backoff*2, 2*time.Second)
	}
	l.log.Info("resume gave up: grace period over")
	return false
}

// tryResume makes one attempt. final reports that retrying is pointless
// (the server refused the resume).
func (l *Lobby) tryResume(deadline time.Time, token, url string) (ok, final bool) {
	ctx, cancel := context.WithTimeout(l.stop, min(5*time.Second, time.Until(deadline)))
	defer cancel()
	l.mu.Lock()
	received := l.received
	l.mu.Unlock()
	identity, err := l.freshToken(ctx, "")
	if err != nil {
		l.log.Debug("resume attempt: no token", "err", err)
		return false, false
	}
	conn, env, err := l.helloOn(ctx, url, protocol.Hello{Version: protocol.Version, Resume: token, Received: received, Token: identity})
	if err != nil {
		l.log.Debug("resume attempt failed", "url", url, "err", err)
		return false, false
	}
	var w protocol.Welcome
	if env.Type != protocol.TypeWelcome || protocol.DecodeBody(env, &w) != nil || !w.Resumed {
		conn.CloseNow()
		var e protocol.Error
		_ = protocol.DecodeBody(env, &e)
		if e.Code == protocol.CodeRoomElsewhere {
			return false, false // the seat's node is alive: keep trying it
		}
		l.log.Info("resume refused", "code", e.Code, "msg", e.Message)
		if e.Code != "" {
			l.mu.Lock()
			l.refusal = &Error{Code: e.Code, Message: e.Message}
			l.mu.Unlock()
		}
		return false, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		conn.CloseNow()
		return false, true
	}
	l.conn = conn
	l.welcome.Resume = w.Resume
	l.log.Info("session resumed")
	return true, false
}

// leftRoom forgets r when it ends.
func (l *Lobby) leftRoom(r *Room) {
	l.mu.Lock()
	if l.room == r {
		l.room = nil
	}
	l.mu.Unlock()
}

// helloOn dials url and sends hello, returning the connection and the
// server's first frame (a Welcome or an Error), before the read loop owns
// the connection. On an error nothing is left open.
func (l *Lobby) helloOn(ctx context.Context, url string, hello protocol.Hello) (*websocket.Conn, protocol.Envelope, error) {
	conn, err := dialWS(ctx, url, l.opts)
	if err != nil {
		return nil, protocol.Envelope{}, err
	}
	frame, err := protocol.Encode(protocol.TypeHello, 1, &hello)
	if err == nil {
		err = conn.Write(ctx, websocket.MessageBinary, frame)
	}
	var env protocol.Envelope
	if err == nil {
		var reply []byte
		if _, reply, err = conn.Read(ctx); err == nil {
			env, err = protocol.Decode(reply)
		}
	}
	if err != nil {
		conn.CloseNow()
		return nil, protocol.Envelope{}, fmt.Errorf("client: hello on %s: %w", url, err)
	}
	return conn, env, nil
}

// freshToken is a token from Options.GetToken, or otherwise for a hello
// that needs one.
func (l *Lobby) freshToken(ctx context.Context, otherwise string) (string, error) {
	if l.opts.GetToken == nil {
		return otherwise, nil
	}
	return l.opts.GetToken(ctx)
}
