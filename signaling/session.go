package signaling

import (
	"crypto/sha256"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/protocol"
)

// Session is a player's seat in the lobby: its identity, its room and every
// frame sent to it. It lives on its current link, and while that link is
// down (for up to Config.Grace) it is held, recording what it misses, until a
// new link resumes it or the grace period ends.
type Session struct {
	id    string
	token string // bearer secret for the HTTP API; see Hub.SessionByToken
	hub   *Hub

	// The session's rate limits, behind one lock: four buckets in 64 bytes
	// where four rate.Limiters took 320 on the heap.
	limitMu  sync.Mutex
	messages bucket
	signals  bucket
	chat     bucket
	creates  bucket

	// Outgoing frames: guarded by outMu, a leaf lock (never take Hub.mu
	// while holding it).
	outMu  sync.Mutex
	link   *link  // nil while away
	sent   uint64 // frames sent on this session, the seq of the newest
	replay replayRing
	ended  bool // the session is over: drop frames

	// Guarded by hub.mu.
	remote     netip.Addr // of the current (or last) link
	host       string     // Host header of the current (or last) link
	resumeHash [sha256.Size]byte
	away       bool
	awayTimer  *time.Timer
	iceTimer   *time.Timer
	name       string
	hello      bool
	room       *room // written only by Hub.setRoomLocked
	watching   *room // the room s spectates, nil if none; never set with room
	party      *party
	// partyMember is s's member id in its party.
	partyMember string
	playerID    string
	// device is the hash of Hello.Device ("" if none): what a kick bans.
	device string
	// identity is what a verified Hello.Token said (identity.go); its
	// UserID is "" for an unverified session.
	identity auth.Identity
	// displayName is name as the current room shows it (made unique there).
	displayName string
	ready       bool
	pingMs      int
	wantsPings  bool // Hello.Pings
}

func newSession(h *Hub, l *link, id string) *Session {
	return &Session{
		id:     id,
		token:  newSessionToken(),
		hub:    h,
		link:   l,
		replay: replayRing{maxFrames: h.cfg.ReplayFrames, maxBytes: h.cfg.ReplayBytes},
		remote: l.remote,
		host:   l.host,
	}
}

// log is the session's logger. It is made for each line rather than kept:
// lines are rare, and a kept one cost every idle session 200 bytes.
func (s *Session) log() *slog.Logger { return s.hub.log.With("session", s.id) }

// allowMessage, allowSignal, allowChat and allowCreate spend a token of the
// session's rate for any message, a signal, a chat line and a new room.
func (s *Session) allowMessage() bool {
	return s.allow(&s.messages, time.Now(), s.hub.cfg.MessagesPerSecond, s.hub.cfg.MessageBurst)
}

func (s *Session) allowSignal() bool {
	return s.allow(&s.signals, time.Now(), s.hub.cfg.SignalsPerSecond, s.hub.cfg.SignalBurst)
}

func (s *Session) allowChat() bool {
	return s.allow(&s.chat, time.Now(), s.hub.cfg.ChatPerSecond, s.hub.cfg.ChatBurst)
}

func (s *Session) allowCreate(now time.Time) bool {
	perMinute := s.hub.cfg.RoomsPerMinute
	return s.allow(&s.creates, now, float64(max(1, perMinute))/60, perMinute)
}

func (s *Session) allow(b *bucket, now time.Time, perSecond float64, burst int) bool {
	s.limitMu.Lock()
	defer s.limitMu.Unlock()
	return b.allow(now, perSecond, burst)
}

// bucket is a token bucket with rate.Limiter's rule (full at first, refilled
// at perSecond up to burst) in 16 bytes.
type bucket struct {
	tokens float64
	last   int64 // unix nanoseconds of the last refill; 0 before the first use
}

func (b *bucket) allow(now time.Time, perSecond float64, burst int) bool {
	t := now.UnixNano()
	switch {
	case b.last == 0:
		b.tokens, b.last = float64(burst), t
	case t > b.last:
		b.tokens = min(float64(burst), b.tokens+float64(t-b.last)/float64(time.Second)*perSecond)
		b.last = t
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// addr returns the remote address and Host header of the session's current
// (or last) link; a resume on another goroutine may change them.
func (s *Session) addr() (netip.Addr, string) {
	s.hub.mu.RLock()
	defer s.hub.mu.RUnlock()
	return s.remote, s.host
}

// send encodes and queues one frame.
func (s *Session) send(id uint32, typ string, body any) {
	frame, err := protocol.Encode(typ, id, body)
	if err != nil {
		s.log().Error("encode", "type", typ, "err", err)
		return
	}
	s.enqueue(frame)
}

// sendWelcome sends a new session's Welcome: numbered like any frame but
// not kept for replay, since a client that missed it has no resume token
// to come back with. An idle session would otherwise keep it all its life.
func (s *Session) sendWelcome(id uint32, w *protocol.Welcome) {
	frame, err := protocol.Encode(protocol.TypeWelcome, id, w)
	if err != nil {
		s.log().Error("encode", "type", protocol.TypeWelcome, "err", err)
		return
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.ended {
		return
	}
	s.sent++
	if s.link != nil {
		s.link.enqueue(frame)
	}
}

// enqueue numbers a frame, keeps it for replay and hands it to the current
// link. It never blocks: it may run under Hub.mu.
func (s *Session) enqueue(frame []byte) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.ended {
		return
	}
	s.sent++
	s.replay.push(s.sent, frame)
	if s.link != nil {
		s.link.enqueue(frame)
	}
}

// nudgePing asks the current link to measure the round trip now.
func (s *Session) nudgePing() {
	s.outMu.Lock()
	l := s.link
	s.outMu.Unlock()
	if l != nil {
		l.nudgePing()
	}
}

// end stops all output for good.
func (s *Session) end() {
	s.outMu.Lock()
	s.ended = true
	s.link = nil
	s.replay = replayRing{}
	s.outMu.Unlock()
}

// replayRing keeps the newest frames sent on a session, bounded by count
// and bytes, so a resumed link can be sent what its predecessor missed. It
// starts empty and grows only as frames are sent: an idle session costs
// almost nothing. It is a circular buffer, so a full ring drops its oldest
// frame in constant time: every frame of a busy room goes through it.
type replayRing struct {
	maxFrames int
	maxBytes  int
	frames    []seqFrame // circular: the oldest at head
	head, n   int
	bytes     int
}

type seqFrame struct {
	seq   uint64
	frame []byte
}

func (r *replayRing) push(seq uint64, frame []byte) {
	if r.maxFrames <= 0 {
		return
	}
	if r.n == r.maxFrames {
		r.dropOldest()
	}
	if r.n == len(r.frames) {
		r.grow()
	}
	r.frames[(r.head+r.n)%len(r.frames)] = seqFrame{seq, frame}
	r.n++
	r.bytes += len(frame)
	for r.bytes > r.maxBytes && r.n > 1 {
		r.dropOldest()
	}
}

func (r *replayRing) dropOldest() {
	f := &r.frames[r.head]
	r.bytes -= len(f.frame)
	*f = seqFrame{} // let the frame be collected
	r.head = (r.head + 1) % len(r.frames)
	r.n--
}

// grow doubles the storage (up to maxFrames), oldest first again.
func (r *replayRing) grow() {
	// From one frame: an idle session holds only its Welcome.
	frames := make([]seqFrame, min(max(2*len(r.frames), 1), r.maxFrames))
	for i := range r.n {
		frames[i] = r.frames[(r.head+i)%len(r.frames)]
	}
	r.frames, r.head = frames, 0
}

// after returns the frames with seq > n, and false if some of them were
// already dropped, or if n is past newest: a client claiming frames never
// sent (newest-n would wrap around and size a slice past memory).
func (r *replayRing) after(n, newest uint64) ([][]byte, bool) {
	if n == newest {
		return nil, true
	}
	if n > newest {
		return nil, false
	}
	if r.n == 0 || r.frames[r.head].seq > n+1 {
		return nil, false
	}
	out := make([][]byte, 0, newest-n)
	for i := range r.n {
		if f := r.frames[(r.head+i)%len(r.frames)]; f.seq > n {
			out = append(out, f.frame)
		}
	}
	return out, true
}
