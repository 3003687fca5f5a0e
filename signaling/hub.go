package signaling

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/internal/netkey"
	"github.com/hostrelay/hostrelay/protocol"
)

// Hub owns every lobby session and room on this node.
type Hub struct {
	cfg          Config
	log          *slog.Logger
	joinFailures *ipLimiter

	mu       sync.RWMutex
	links    map[*link]struct{}
	sessions map[string]*Session
	// resumes maps sha256(resume token) to its held (or live) session.
	resumes    map[[sha256.Size]byte]*Session
	connsPerIP map[netip.Addr]int
	joins      *ipLimiter
	// tokens maps sha256(token) to the session. Keying by the hash means a
	// lookup's timing reveals nothing usable about a real token.
	tokens map[[sha256.Size]byte]*Session
	rooms  map[string]*room
	// remote holds other nodes' public rooms, for the room list only
	// (cluster.go); empty on a single node.
	remote  map[string]*room
	parties map[string]*party
	dir     directory
	closing bool
	// roomChangeListeners hear of every change of a session's room (see
	// setRoomLocked): TURN's membership cache.
	roomChangeListeners []*roomChangeListener
	// routes serve the requests after hello (dispatch.go); read-only.
	routes map[string]route
	// counters are the totals Metrics reports.
	counters counters
	// spectators bounds the bytes of every room's spectator stream.
	spectators spectatorBudget
	// floods holds back networks just closed for a flood (floodpenalty.go).
	floods floodHolds

	wg sync.WaitGroup // one per running session

	// pingSweep pings the links whose time has come (link.nextPing); armed
	// while there are links. Guarded by mu.
	pingSweep *time.Timer
	// framePool lends links the buffers their writes gather in (frameWriter).
	framePool sync.Pool
}

// NewHub validates cfg and returns an empty hub.
func NewHub(cfg Config) (*Hub, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDeps()
	return &Hub{
		cfg:          cfg,
		log:          cfg.Logger.With("component", "signaling"),
		joinFailures: newIPLimiter(cfg.JoinFailureEvery, cfg.JoinFailureBurst),
		links:        make(map[*link]struct{}),
		sessions:     make(map[string]*Session),
		resumes:      make(map[[sha256.Size]byte]*Session),
		connsPerIP:   make(map[netip.Addr]int),
		joins:        newIPLimiter(time.Minute/time.Duration(cfg.JoinsPerMinute), cfg.JoinsPerMinute),
		tokens:       make(map[[sha256.Size]byte]*Session),
		rooms:        make(map[string]*room),
		remote:       make(map[string]*room),
		parties:      make(map[string]*party),
		routes:       newRoutes(),
		framePool:    newFramePool(),
		spectators:   spectatorBudget{limit: cfg.SpectatorBudgetBytes},
		floods:       newFloodHolds(),
	}, nil
}

// refuseOrigin upgrades a browser's connection from an origin the server
// does not allow only to close it with OriginRefusedReason (see there).
// Nothing of the client's is read, so its page gets nothing but the reason.
func (h *Hub) refuseOrigin(w http.ResponseWriter, r *http.Request, remote netip.Addr, why error) {
	h.counters.originsRefused.Add(1)
	h.log.Warn("websocket from an origin not allowed", "remote", remote, "origin", r.Header.Get("Origin"), "err", why)
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	// Close waits up to 5 s for the page's own close frame, which a browser
	// sends at once; CloseNow after a failed Close frees the socket either way.
	if err := conn.Close(websocket.StatusPolicyViolation, OriginRefusedReason); err != nil {
		_ = conn.CloseNow()
	}
}

// ServeWebSocket upgrades r and serves the connection on a goroutine of its
// own until it ends; it returns once the connection is upgraded, so the HTTP
// server forgets the hijacked connection and frees its request state.
// remote is the client's address as the HTTP layer determined it (trusting
// proxies only as configured there); it keys the per-IP limits.
//
// The caller must not wrap w: Accept hijacks the connection.
func (h *Hub) ServeWebSocket(w http.ResponseWriter, r *http.Request, remote netip.Addr) {
	if wait := h.floods.tell(remote, h.cfg.Now()); wait > 0 {
		h.counters.limited(limitFloodHold)
		secs := int((wait + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		http.Error(w, fmt.Sprintf("a connection from your network was just closed for flooding; wait %d s", secs), http.StatusTooManyRequests)
		return
	}
	key := netkey.Of(remote)
	h.mu.Lock()
	if h.cfg.MaxConnsPerIP > 0 && h.connsPerIP[key] >= h.cfg.MaxConnsPerIP {
		h.mu.Unlock()
		h.counters.limited(limitConnsPerIP)
		h.log.Info("connection refused: per-IP limit", "remote", remote, "limit", h.cfg.MaxConnsPerIP)
		http.Error(w, "too many connections from your network", http.StatusTooManyRequests)
		return
	}
	h.connsPerIP[key]++
	h.mu.Unlock()
	release := func() {
		h.mu.Lock()
		if h.connsPerIP[key]--; h.connsPerIP[key] <= 0 {
			delete(h.connsPerIP, key)
		}
		h.mu.Unlock()
	}

	bufs := &smallBuffers{ResponseWriter: w, pool: &h.framePool}
	if err := originAllowed(r, h.allowedOrigins()); err != nil {
		h.refuseOrigin(bufs, r, remote, err)
		release()
		return
	}
	conn, err := websocket.Accept(bufs, r, &websocket.AcceptOptions{OriginPatterns: h.allowedOrigins()})
	if err != nil {
		release()
		// Accept has already written the HTTP error (403 for a foreign Origin).
		h.log.Info("websocket upgrade refused", "remote", remote, "origin", r.Header.Get("Origin"), "err", err)
		return
	}
	conn.SetReadLimit(int64(h.cfg.MaxFrame))

	l := newLink(h, conn, bufs, remote, r.Host)
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		release()
		closeBounded(conn, bufs.out.conn, websocket.StatusGoingAway, "server shutting down")
		return
	}
	h.links[l] = struct{}{}
	if h.pingSweep == nil {
		h.pingSweep = time.AfterFunc(h.pingTick(), h.sweepPings)
	}
	h.wg.Add(1)
	h.mu.Unlock()
	// Fresh goroutines (see link.run): their stacks hold only what the link
	// needs, not what the HTTP server used to get here.
	l.run(func() {
		release()
		h.wg.Done()
	})
}

// pingTick is how often the ping sweep runs: each link is pinged between
// PingInterval and PingInterval plus this after its last pong.
func (h *Hub) pingTick() time.Duration { return min(h.cfg.PingInterval/4, time.Second) }

// sweepPings starts a ping on every link that is due, and runs again while
// there are links.
func (h *Hub) sweepPings() {
	now := time.Now().UnixNano()
	var due []*link
	h.mu.Lock()
	for l := range h.links {
		if next := l.nextPing.Load(); next != 0 && next <= now && l.nextPing.CompareAndSwap(next, 0) {
			due = append(due, l)
		}
	}
	if len(h.links) > 0 && !h.closing {
		h.pingSweep.Reset(h.pingTick())
	} else {
		h.pingSweep = nil
	}
	h.mu.Unlock()
	for _, l := range due {
		go l.ping()
	}
}

// Close tells every connection the server is going away and waits, until
// ctx ends, for them to finish closing. New connections are refused and no
// seat is held: nobody can come back to this server.
func (h *Hub) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	if h.pingSweep != nil {
		h.pingSweep.Stop() // nobody is staying: no more pings
		h.pingSweep = nil
	}
	for l := range h.links {
		l.kill(websocket.StatusGoingAway, "server shutting down")
	}
	for _, s := range h.sessions {
		if s.away {
			h.endLocked(s, protocol.ReasonDisconnect)
		}
	}
	h.mu.Unlock()

	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("signaling: close: %w", ctx.Err())
	}
}

// SessionLive reports whether a lobby session is connected. turn uses it to
// refuse credentials of sessions that have ended.
func (h *Hub) SessionLive(sessionID string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	_, ok := h.sessions[sessionID]
	return ok
}

// SessionByToken returns the id of the connected session whose Welcome
// carried token. The HTTP API uses it to bind requests to a lobby session.
func (h *Hub) SessionByToken(token string) (string, bool) {
	key := sha256.Sum256([]byte(token))
	h.mu.RLock()
	defer h.mu.RUnlock()
	s, ok := h.tokens[key]
	if !ok || !s.hello {
		return "", false
	}
	return s.id, true
}

// RoomOf reports the code of the room a session is in. turn uses it to let a
// relay reach only relays of the same room.
func (h *Hub) RoomOf(sessionID string) (string, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	s, ok := h.sessions[sessionID]
	if !ok || s.room == nil {
		return "", false
	}
	return s.room.code, true
}

// Stats is a snapshot of the hub's size for health checks and logs.
type Stats struct {
	Sessions int `json:"sessions"`
	Rooms    int `json:"rooms"`
}

// Stats counts sessions and rooms.
func (h *Hub) Stats() Stats {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return Stats{Sessions: len(h.sessions), Rooms: len(h.rooms)}
}

// endLocked ends a session for good: it leaves its room (with reason) and
// everything that names it is dropped.
func (h *Hub) endLocked(s *Session, reason string) {
	if s.room != nil {
		h.leaveLocked(s, reason)
	}
	if s.party != nil {
		h.leavePartyLocked(s)
	}
	h.stopWatchingLocked(s)
	h.unsubscribeRoomListLocked(s)
	if s.awayTimer != nil {
		s.awayTimer.Stop()
	}
	if s.iceTimer != nil {
		s.iceTimer.Stop()
	}
	s.away = false
	delete(h.sessions, s.id)
	h.roomChangeLocked(s) // RoomOf answers false from now on
	delete(h.tokens, sha256.Sum256([]byte(s.token)))
	delete(h.resumes, s.resumeHash)
	s.end()
}

// broadcastLocked sends one frame to every member of r except skip.
func (h *Hub) broadcastLocked(r *room, skip *Session, typ string, body any) {
	frame, err := protocol.Encode(typ, 0, body)
	if err != nil {
		h.log.Error("encode event", "type", typ, "room", r.code, "err", err)
		return
	}
	for _, m := range r.members {
		if m != skip {
			m.enqueue(frame)
		}
	}
}
