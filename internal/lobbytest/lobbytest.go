// Package lobbytest is a raw client of the hostrelay lobby for tests and
// load generators: frames as the wire has them and nothing more (no
// reconnect, no room state), so a test can send what a real client never
// would and see exactly what the server answers. Programs use the Go SDK
// (client/) instead.
//
// A Conn reads its socket only while a caller waits on it (Read, Request,
// Call, Next, WaitClosed), so a test can stop reading and let the server's
// queue fill. Several goroutines may share a Conn: one of them reads the
// socket at a time and hands each frame to whoever it is for. A reply goes
// to the Request that waits for its id; every other frame is kept, in
// order, for Read.
package lobbytest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// DefaultReadLimit bounds one frame from the server: above any MaxFrame a
// server may be configured with, so the server's own limit is what a test sees.
const DefaultReadLimit = 1 << 20

// Options tune Dial. The zero value dials as a browser without an Origin would.
type Options struct {
	// Header is added to the upgrade request (Origin, a test's X-Test-IP).
	Header http.Header
	// HTTPClient makes the upgrade request (to dial from a chosen local
	// address); nil means http.DefaultClient.
	HTTPClient *http.Client
	// ReadLimit bounds one frame from the server; 0 means DefaultReadLimit.
	ReadLimit int64
	// Received is how many frames the session this connection resumes had
	// received: the count Received reports goes on from there.
	Received uint64
}

// ReplyError is the server's Error reply to a request.
type ReplyError protocol.Error

func (e ReplyError) Error() string { return "lobbytest: " + e.Code + ": " + e.Message }

// Conn is one lobby WebSocket.
type Conn struct {
	ws       *websocket.Conn
	raw      atomic.Pointer[func([]byte) bool]
	nextID   atomic.Uint32
	received atomic.Uint64

	// reading is a token (capacity 1): whoever put a value in it reads the
	// socket until it takes the value out again.
	reading chan struct{}
	// kept is signalled (capacity 1) when a frame is added to held, so a
	// Read waiting for the token looks again.
	kept chan struct{}
	done chan struct{} // closed once the socket's read has failed for good

	mu      sync.Mutex
	held    []protocol.Envelope               // frames no Request claimed, oldest first
	replies map[uint32]chan protocol.Envelope // Requests waiting, by request id
	err     error                             // why the socket's read failed
}

// Dial opens a lobby connection on url (ws://host:port/ws). It does not say
// hello: see Hello and Connect. On a refused upgrade the response says why.
func Dial(ctx context.Context, url string, opts Options) (*Conn, *http.Response, error) {
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: opts.Header, HTTPClient: opts.HTTPClient})
	if err != nil {
		return nil, resp, fmt.Errorf("lobbytest: dial %s: %w", url, err)
	}
	limit := opts.ReadLimit
	if limit == 0 {
		limit = DefaultReadLimit
	}
	ws.SetReadLimit(limit)
	c := &Conn{
		ws:      ws,
		reading: make(chan struct{}, 1),
		kept:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		replies: make(map[uint32]chan protocol.Envelope),
	}
	c.received.Store(opts.Received)
	return c, resp, nil
}

// Connect dials url and says hello as name.
func Connect(ctx context.Context, url, name string, opts Options) (*Conn, protocol.Welcome, error) {
	c, _, err := Dial(ctx, url, opts)
	if err != nil {
		return nil, protocol.Welcome{}, err
	}
	w, err := c.Hello(ctx, protocol.Hello{Name: name})
	if err != nil {
		_ = c.CloseNow()
		return nil, protocol.Welcome{}, err
	}
	return c, w, nil
}

// Hello sends m (with this package's protocol version) and returns the Welcome.
func (c *Conn) Hello(ctx context.Context, m protocol.Hello) (protocol.Welcome, error) {
	m.Version = protocol.Version
	var w protocol.Welcome
	err := c.Call(ctx, protocol.TypeHello, &m, &w)
	return w, err
}

// WS is the underlying connection, for what a lobby client never does
// (a text frame, a close with a chosen status).
func (c *Conn) WS() *websocket.Conn { return c.ws }

// CloseNow drops the connection without a close handshake.
func (c *Conn) CloseNow() error { return c.ws.CloseNow() }

// Done is closed once the connection has ended and a reader has seen it.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Received counts the frames received on the session (Options.Received
// plus those read here), as a client that resumes must: every frame but the
// Welcome that answers a resume.
func (c *Conn) Received() uint64 { return c.received.Load() }

// SetRaw has fn see every frame before it is decoded; a frame fn returns
// true for is consumed there (counted, not decoded, not kept). Load
// generators use it so their own decoding does not bound a measurement.
// nil removes it.
func (c *Conn) SetRaw(fn func(frame []byte) bool) {
	if fn == nil {
		c.raw.Store(nil)
		return
	}
	c.raw.Store(&fn)
}

// Write sends one frame as it is.
func (c *Conn) Write(ctx context.Context, frame []byte) error {
	if err := c.ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
		return fmt.Errorf("lobbytest: write: %w", err)
	}
	return nil
}

// NewID returns a request id this Conn has not used.
func (c *Conn) NewID() uint32 { return c.nextID.Add(1) }

// SendID sends a message with request id id (0: an event, which the server
// may answer with id 0 or not at all).
func (c *Conn) SendID(ctx context.Context, id uint32, typ string, body any) error {
	frame, err := protocol.Encode(typ, id, body)
	if err != nil {
		return fmt.Errorf("lobbytest: %w", err)
	}
	return c.Write(ctx, frame)
}

// Send sends a request with a fresh id and returns the id; its reply comes
// to Read like any other frame.
func (c *Conn) Send(ctx context.Context, typ string, body any) (uint32, error) {
	id := c.NewID()
	return id, c.SendID(ctx, id, typ, body)
}

// Request sends a request with a fresh id and returns the frame that
// answers it, whatever its type; frames that come first are kept for Read.
func (c *Conn) Request(ctx context.Context, typ string, body any) (protocol.Envelope, error) {
	id := c.NewID()
	ch := make(chan protocol.Envelope, 1)
	c.mu.Lock()
	c.replies[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.replies, id)
		c.mu.Unlock()
	}()
	if err := c.SendID(ctx, id, typ, body); err != nil {
		return protocol.Envelope{}, err
	}
	for {
		if err := ctx.Err(); err != nil { // see Read
			return protocol.Envelope{}, fmt.Errorf("lobbytest: %s: no reply: %w", typ, err)
		}
		select {
		case env := <-ch:
			return env, nil
		case <-c.done:
			select {
			case env := <-ch:
				return env, nil
			default:
			}
			return protocol.Envelope{}, fmt.Errorf("lobbytest: %s: no reply: %w", typ, c.readErr())
		case <-ctx.Done():
			return protocol.Envelope{}, fmt.Errorf("lobbytest: %s: no reply: %w", typ, ctx.Err())
		case c.reading <- struct{}{}:
			env, err := c.readUntil(ctx, ch)
			<-c.reading
			if err != nil {
				return protocol.Envelope{}, fmt.Errorf("lobbytest: %s: no reply: %w", typ, err)
			}
			return env, nil
		}
	}
}

// readUntil reads the socket, keeping what is not for ch, until ch has the
// reply. The caller holds the reading token.
func (c *Conn) readUntil(ctx context.Context, ch chan protocol.Envelope) (protocol.Envelope, error) {
	for {
		select {
		case env := <-ch:
			return env, nil
		default:
		}
		env, mine, err := c.readOne(ctx)
		if err != nil {
			if c.isDone() {
				return protocol.Envelope{}, err
			}
			continue // a frame that would not decode: not the reply
		}
		if mine {
			c.keep(env)
		}
	}
}

// Call is Request that decodes the reply into out (nil: not decoded) or
// returns the server's Error as a ReplyError.
func (c *Conn) Call(ctx context.Context, typ string, body, out any) error {
	env, err := c.Request(ctx, typ, body)
	if err != nil {
		return err
	}
	if env.Type == protocol.TypeError {
		var e protocol.Error
		if err := protocol.DecodeBody(env, &e); err != nil {
			return fmt.Errorf("lobbytest: %s: %w", typ, err)
		}
		return ReplyError(e)
	}
	if out == nil {
		return nil
	}
	if err := protocol.DecodeBody(env, out); err != nil {
		return fmt.Errorf("lobbytest: reply to %s: %w", typ, err)
	}
	return nil
}

// Read returns the next frame that no Request claimed, oldest first. A frame
// the server sent that does not decode is an error, and the Conn stays
// usable; once the connection has ended, Read returns why (for a close
// frame, a websocket.CloseError). A ctx that ends while this Read holds the
// socket ends the connection (coder/websocket closes a connection whose
// read is cancelled).
func (c *Conn) Read(ctx context.Context) (protocol.Envelope, error) {
	for {
		if env, ok := c.next(); ok {
			return env, nil
		}
		if c.isDone() {
			return protocol.Envelope{}, c.readErr()
		}
		// Checked first: select picks at random among ready cases, and a
		// read under an ended ctx would end the connection.
		if err := ctx.Err(); err != nil {
			return protocol.Envelope{}, fmt.Errorf("lobbytest: read: %w", err)
		}
		select {
		case c.reading <- struct{}{}:
			env, err := c.readMine(ctx)
			<-c.reading
			return env, err
		case <-c.kept:
		case <-c.done:
		case <-ctx.Done():
			return protocol.Envelope{}, fmt.Errorf("lobbytest: read: %w", ctx.Err())
		}
	}
}

// readMine reads until a frame no Request claims. The caller holds the
// reading token; a frame kept before it took the token comes first.
func (c *Conn) readMine(ctx context.Context) (protocol.Envelope, error) {
	if env, ok := c.next(); ok {
		return env, nil
	}
	// Only the token's holder keeps frames, so nothing is kept while this
	// loops: frames SetRaw consumes cost no lock here.
	for {
		env, mine, err := c.readOne(ctx)
		if err != nil || mine {
			return env, err
		}
	}
}

// Next reads the next frame, requires it to be of type typ and decodes it
// into out (nil: not decoded). An Error in its place is returned as a
// ReplyError.
func (c *Conn) Next(ctx context.Context, typ string, out any) (protocol.Envelope, error) {
	env, err := c.Read(ctx)
	if err != nil {
		return env, fmt.Errorf("lobbytest: waiting for %s: %w", typ, err)
	}
	if env.Type != typ {
		if env.Type == protocol.TypeError {
			var e protocol.Error
			_ = protocol.DecodeBody(env, &e)
			return env, fmt.Errorf("lobbytest: waiting for %s: %w", typ, ReplyError(e))
		}
		return env, fmt.Errorf("lobbytest: got %s, want %s", env.Type, typ)
	}
	if out != nil {
		if err := protocol.DecodeBody(env, out); err != nil {
			return env, fmt.Errorf("lobbytest: %s: %w", typ, err)
		}
	}
	return env, nil
}

// WaitClosed reads and drops frames until the connection ends and returns
// why it ended (for a close frame, a websocket.CloseError), or ctx's error.
func (c *Conn) WaitClosed(ctx context.Context) error {
	for {
		_, err := c.Read(ctx)
		switch {
		case err == nil:
		case c.isDone():
			return c.readErr()
		case ctx.Err() != nil:
			return err
		}
	}
}

// Discard drops the frames kept for Read and returns how many there were.
func (c *Conn) Discard() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.held)
	c.held = nil
	return n
}

// readOne reads one frame and delivers it: to SetRaw's function, to the
// Request waiting for its id, or back to the caller (mine). The caller
// holds the reading token.
func (c *Conn) readOne(ctx context.Context) (env protocol.Envelope, mine bool, err error) {
	_, frame, err := c.ws.Read(ctx)
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
			close(c.done)
		}
		c.mu.Unlock()
		return env, false, fmt.Errorf("lobbytest: read: %w", err)
	}
	if raw := c.raw.Load(); raw != nil && (*raw)(frame) {
		c.received.Add(1)
		return env, false, nil
	}
	env, err = protocol.Decode(frame)
	if err != nil {
		return env, false, fmt.Errorf("lobbytest: the server sent a bad frame: %w", err)
	}
	// Spectator frames are outside the session's numbered frames.
	if !resumedWelcome(env) && env.Type != protocol.TypeSpectatorFrame {
		c.received.Add(1)
	}
	if env.ID != 0 {
		c.mu.Lock()
		ch, ok := c.replies[env.ID]
		delete(c.replies, env.ID)
		c.mu.Unlock()
		if ok {
			ch <- env // buffered, and each id is answered once
			return protocol.Envelope{}, false, nil
		}
	}
	return env, true, nil
}

// resumedWelcome reports the one frame a session does not count.
func resumedWelcome(env protocol.Envelope) bool {
	if env.Type != protocol.TypeWelcome {
		return false
	}
	var w protocol.Welcome
	return protocol.DecodeBody(env, &w) == nil && w.Resumed
}

func (c *Conn) keep(env protocol.Envelope) {
	c.mu.Lock()
	c.held = append(c.held, env)
	c.mu.Unlock()
	select {
	case c.kept <- struct{}{}:
	default:
	}
}

func (c *Conn) next() (protocol.Envelope, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.held) == 0 {
		return protocol.Envelope{}, false
	}
	env := c.held[0]
	c.held[0] = protocol.Envelope{}
	c.held = c.held[1:]
	return env, true
}

func (c *Conn) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// readErr is why the connection ended, wrapped so errors.As finds a
// websocket.CloseError.
func (c *Conn) readErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return errors.New("lobbytest: connection open")
	}
	return fmt.Errorf("lobbytest: read: %w", c.err)
}
