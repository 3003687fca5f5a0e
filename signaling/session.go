package signaling

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/hostrelay/hostrelay/protocol"
)

// Session is one lobby WebSocket. The reading goroutine owns the handshake
// and dispatch; a writer goroutine drains the bounded queue; a pinger detects
// dead peers.
type Session struct {
	id     string
	token  string // bearer secret for the HTTP API; see Hub.SessionByToken
	hub    *Hub
	conn   *websocket.Conn
	remote netip.Addr
	host   string // Host header the client used, for TURN URLs
	log    *slog.Logger
	out    chan []byte

	messages *rate.Limiter
	signals  *rate.Limiter
	chat     *rate.Limiter
	// pingNow asks pingLoop to measure the round trip at once (on joining a
	// room, so the room sees the new player's ping without waiting).
	pingNow chan struct{}
	refused int // messages refused in a row; read goroutine only

	killOnce sync.Once
	dead     chan struct{} // closed by kill: stop queueing

	// Guarded by hub.mu.
	name     string
	hello    bool
	room     *room
	playerID string
	// device is the hash of Hello.Device ("" if none): what a kick bans.
	device string
	// displayName is name as the current room shows it (made unique there).
	displayName string
	ready       bool
	pingMs      int
	wantsPings  bool // Hello.Pings
}

func newSession(h *Hub, conn *websocket.Conn, remote netip.Addr, host string) *Session {
	id := newSessionID()
	return &Session{
		id:       id,
		token:    newSessionToken(),
		hub:      h,
		conn:     conn,
		remote:   remote,
		host:     host,
		log:      h.log.With("session", id),
		out:      make(chan []byte, h.cfg.QueueSize),
		messages: rate.NewLimiter(rate.Limit(h.cfg.MessagesPerSecond), h.cfg.MessageBurst),
		signals:  rate.NewLimiter(rate.Limit(h.cfg.SignalsPerSecond), h.cfg.SignalBurst),
		chat:     rate.NewLimiter(rate.Limit(h.cfg.ChatPerSecond), h.cfg.ChatBurst),
		pingNow:  make(chan struct{}, 1),
		dead:     make(chan struct{}),
	}
}

// run serves the session until the connection ends, then removes it from
// its room and the hub.
func (s *Session) run(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	s.log.Debug("session open", "remote", s.remote)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.writeLoop(ctx) }()
	go func() { defer wg.Done(); s.pingLoop(ctx) }()

	err := s.readLoop(ctx)
	s.hub.forget(s)
	s.kill(websocket.StatusNormalClosure, "")
	cancel()
	wg.Wait()
	s.log.Debug("session closed", "reason", closeReason(err))
}

func closeReason(err error) string {
	if st := websocket.CloseStatus(err); st != -1 {
		return st.String()
	}
	if err == nil {
		return "done"
	}
	return err.Error()
}

func (s *Session) readLoop(ctx context.Context) error {
	// The first frame must be Hello, soon: an upgraded connection that never
	// speaks holds a file descriptor and a goroutine for nothing.
	hctx, hcancel := context.WithTimeout(ctx, protocol.HandshakeTimeout)
	err := s.readOne(hctx)
	hcancel()
	if err != nil {
		return err
	}
	for {
		if err := s.readOne(ctx); err != nil {
			return err
		}
	}
}

// readOne reads and handles one frame. Only connection failures end the
// session; bad frames are answered with an Error and counted.
func (s *Session) readOne(ctx context.Context) error {
	typ, frame, err := s.conn.Read(ctx)
	if err != nil {
		return err
	}
	if !s.messages.Allow() {
		s.refuse(0, protocol.Error{Code: protocol.CodeRateLimited, Message: "too many messages; slow down"})
		return nil
	}
	if typ != websocket.MessageBinary {
		s.refuse(0, protocol.Error{Code: protocol.CodeBadMessage, Message: "frames must be binary msgpack"})
		return nil
	}
	env, err := protocol.Decode(frame)
	if err != nil {
		s.refuse(0, asReply(err))
		return nil
	}
	s.refused = 0
	if err := s.handle(env); err != nil {
		reply := asReply(err)
		if reply.Code == protocol.CodeInternal {
			s.log.Error("handler failed", "type", env.Type, "err", err)
		}
		s.send(env.ID, protocol.TypeError, &reply)
	}
	return nil
}

// refuse answers a frame that was not served (over the rate, or not a
// message at all) and closes the connection once too many were refused in a
// row: a correct client never gets there, a flood does. Ordinary request
// errors (room not found, ...) are not refusals.
func (s *Session) refuse(id uint32, e protocol.Error) {
	s.refused++
	if s.refused >= s.hub.cfg.MaxRefusedInARow {
		s.log.Info("closing: too many refused messages", "last_code", e.Code)
		s.kill(websocket.StatusPolicyViolation, "too many refused messages: "+e.Code)
		return
	}
	s.send(id, protocol.TypeError, &e)
}

// send encodes and queues one frame.
func (s *Session) send(id uint32, typ string, body any) {
	frame, err := protocol.Encode(typ, id, body)
	if err != nil {
		s.log.Error("encode", "type", typ, "err", err)
		return
	}
	s.enqueue(frame)
}

// enqueue never blocks: it may run under Hub.mu. A full queue means the
// client cannot keep up, and waiting for it would stall everyone else.
func (s *Session) enqueue(frame []byte) {
	select {
	case <-s.dead:
		return
	default:
	}
	select {
	case s.out <- frame:
	default:
		s.log.Info("closing slow consumer", "queue", cap(s.out))
		s.abort()
	}
}

// abort drops the connection without a close handshake: the peer is not
// reading, so a close frame would only wait for the handshake timeout while
// the room still lists the player.
func (s *Session) abort() {
	s.killOnce.Do(func() {
		close(s.dead)
		_ = s.conn.CloseNow()
		// Leave the room now rather than when the read loop notices: until
		// then the room would keep routing to a dead session. abort may run
		// under Hub.mu, hence the goroutine.
		go s.hub.forget(s)
	})
}

// kill closes the connection with a status once. The close handshake runs in
// its own goroutine because it writes, and kill may be called under Hub.mu.
func (s *Session) kill(code websocket.StatusCode, reason string) {
	s.killOnce.Do(func() {
		close(s.dead)
		go func() {
			// Give queued frames (an Error explaining the close) a moment to
			// leave before the close frame.
			s.flush(100 * time.Millisecond)
			_ = s.conn.Close(code, reason)
		}()
	})
}

// flush waits until the writer has drained the queue or d passes.
func (s *Session) flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for len(s.out) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *Session) writeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case frame := <-s.out:
			wctx, cancel := context.WithTimeout(ctx, s.hub.cfg.WriteTimeout)
			err := s.conn.Write(wctx, websocket.MessageBinary, frame)
			cancel()
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					s.log.Debug("write failed", "err", err)
				}
				s.abort()
				return
			}
		}
	}
}

// pingLoop closes connections whose peer stopped answering, and times each
// ping: the round trip is the player's ping shown in its room. Conn.Ping only
// completes while readLoop is reading, which it always is.
func (s *Session) pingLoop(ctx context.Context) {
	t := time.NewTicker(s.hub.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.pingNow:
		}
		pctx, cancel := context.WithTimeout(ctx, s.hub.cfg.PongTimeout)
		start := time.Now()
		err := s.conn.Ping(pctx)
		rtt := time.Since(start)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				s.log.Info("closing: ping timeout", "err", err)
				s.kill(websocket.StatusPolicyViolation, "ping timeout")
			}
			return
		}
		s.hub.recordPing(s, rtt)
	}
}
