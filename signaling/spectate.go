package signaling

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/hostrelay/hostrelay/protocol"
)

// Spectators ride the lobby WebSocket: the host sends each spectator frame
// once, as a lobby message, and the hub fans it out to the room's
// spectators after the room's delay. The WebSocket is already open, already
// rate limited and already bounded per connection (a queue that drops, never
// blocks); a server-terminated WebRTC data channel per spectator would add a
// DTLS/SCTP stack per viewer to save nothing a spectator needs (frames come
// seconds late by design, so head-of-line blocking does not matter).
// docs/protocol.md has the messages, docs/operations.md the measured cost.

// stopper is a scheduled call that can be cancelled (a *time.Timer).
type stopper interface{ Stop() bool }

// stream is a room's spectator stream: frames waiting out the delay, the
// last released keyframe with the deltas since (what a joiner is sent
// first), and the spectators. The room's pointer to it is guarded by
// Hub.mu; its fields by mu, a lock taken under Hub.mu (or alone, by the
// release timer), above Session.outMu and the budget's lock.
//
// While nobody watches, a stream keeps only what a spectator who arrives
// needs to start (trimIdleLocked): not the delay's worth of frames, which
// nobody is owed, but the newest released keyframe and the newest pending
// one, each with the deltas after it that fit in one largest frame
// (idleSegmentBytes). Keyframes alone would leave a joiner a still picture
// until the host's next keyframe; the deltas that fit give it motion at
// once in a game of small deltas, and a room streaming to nobody still
// costs at most two frames (issue 24: the delay's worth was 500 KiB).
type stream struct {
	h    *Hub
	code string // the room's, for logs
	// frames is the host's frame budget (SpectatorFramesPerSecond), taken
	// under Hub.mu with the hub's clock.
	frames *rate.Limiter

	mu           sync.Mutex
	pending      []stampedFrame // not yet released, oldest first
	pendingBytes int            // encoded, for the room's delay buffer (SpectatorBufferBytes)
	history      []stampedFrame // released: a keyframe first, then deltas; empty if none held
	historyBytes int
	// held is the memory of every frame in pending and history, charged
	// to the hub's budget: to its idle share while idle.
	held int
	idle bool
	// await says why deltas are not taken until the next keyframe: one
	// before them was refused or not kept, so no spectator could apply
	// them.
	await   keyWait
	viewers []*Session
	timer   stopper // armed while pending is not empty
	armed   uint64  // timer's generation: a release armed before it does nothing
	closed  bool
}

// keyWait is why a stream takes no delta until the next keyframe.
type keyWait uint8

const (
	keyNotAwaited  keyWait = iota
	keyAfterCut            // deltas past what an unwatched room keeps: taken, not kept
	keyAfterBuffer         // a frame did not fit the room's buffer: deltas refused
	keyAfterBudget         // a frame did not fit the server's budget: deltas refused
)

type stampedFrame struct {
	at    time.Time // when the hub received it
	frame []byte    // the encoded SpectatorFrame event, shared by every viewer
	key   bool
	// cut: the deltas after this frame up to the next keyframe were not
	// kept, so a link sent this frame waits for that keyframe.
	cut bool
}

// mem is what the frame holds in memory, its buffer as allocated: the
// figure the budget counts.
func (f stampedFrame) mem() int { return cap(f.frame) }

// idleSegmentBytes bounds a keyframe and the deltas kept after it while
// nobody watches: the largest frame the host may send.
func (h *Hub) idleSegmentBytes() int {
	return h.cfg.SpectatorFrameBytes + protocol.MaxFrame - protocol.MaxSpectatorData
}

func (h *Hub) newStream(code string) *stream {
	return &stream{h: h, code: code, idle: true,
		frames: rate.NewLimiter(rate.Limit(h.cfg.SpectatorFramesPerSecond), h.cfg.SpectatorFrameBurst)}
}

// streamLocked returns r's stream, making it on first use.
func (h *Hub) streamLocked(r *room) *stream {
	if r.stream == nil {
		r.stream = h.newStream(r.code)
	}
	return r.stream
}

// push holds a frame for the delay. It refuses one past the room's buffer
// (the host is sending faster than the delay lets out) or the server's
// budget, and the deltas after a refused frame until the next keyframe:
// spectators could not apply them. While nobody watches, a frame a joiner
// would not need is taken and not kept.
func (st *stream) push(f stampedFrame) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	unwatched := len(st.viewers) == 0
	if f.key {
		st.await = keyNotAwaited
		if unwatched {
			// For whoever joins later it supersedes every pending keyframe.
			st.dropPendingLocked(st.firstPendingKey(), len(st.pending), false)
		}
	} else {
		switch st.await {
		case keyAfterCut:
			return nil
		case keyAfterBuffer:
			st.h.counters.limited(limitSpectatorFrames)
			return fail(protocol.CodeRateLimited, "spectator delta refused: a frame before it did not fit the room's buffer; send a keyframe")
		case keyAfterBudget:
			st.h.counters.spectatorBudgetRefused.Add(1)
			return fail(protocol.CodeRateLimited, "spectator delta refused: a frame before it did not fit the server's spectator budget; send a keyframe")
		}
		if unwatched && !st.extendsIdleLocked(len(f.frame)) {
			st.cutTailLocked()
			return nil
		}
	}
	if st.pendingBytes+len(f.frame) > st.h.cfg.SpectatorBufferBytes {
		st.await = keyAfterBuffer
		st.h.counters.limited(limitSpectatorFrames)
		return fail(protocol.CodeRateLimited, fmt.Sprintf("spectator buffer full (%d bytes held for the delay)", st.pendingBytes))
	}
	if !st.chargeLocked(f) {
		st.h.counters.spectatorBudgetRefused.Add(1)
		if unwatched {
			// Nobody is owed it; a joiner waits for the next keyframe.
			st.cutTailLocked()
			return nil
		}
		st.await = keyAfterBudget
		st.h.log.Warn("spectator budget full: frame refused", "room", st.code, "room_bytes", st.held,
			"budget", st.h.spectators.limit)
		return fail(protocol.CodeRateLimited, fmt.Sprintf("the server's spectator budget (%d bytes) is full", st.h.spectators.limit))
	}
	st.pending = append(st.pending, f)
	st.pendingBytes += len(f.frame)
	if st.timer == nil {
		st.armLocked(f.at)
	}
	return nil
}

// chargeLocked charges f to the budget. Past it, the room's own history
// goes first, down to its keyframe and then that: it is only what a joiner
// would be sent, while the pending frames are owed to the viewers. A room
// nobody watches makes room so only for a keyframe, which supersedes its
// history anyway.
func (st *stream) chargeLocked(f stampedFrame) bool {
	for {
		if st.h.spectators.take(f.mem(), st.idle) {
			st.held += f.mem()
			return true
		}
		switch {
		case len(st.viewers) == 0 && (!f.key || len(st.history) == 0 && len(st.pending) == 0):
			return false
		case len(st.viewers) == 0:
			// pending holds only deltas extending the history here (push
			// dropped the rest for this keyframe).
			st.dropHistoryLocked(true)
			st.dropPendingLocked(0, len(st.pending), true)
		case len(st.history) > 1:
			st.cutHistoryLocked(1, true)
		case len(st.history) == 1:
			st.dropHistoryLocked(true)
		default:
			return false
		}
	}
}

// extendsIdleLocked reports whether a delta of n bytes is worth keeping
// for a joiner while nobody watches: it extends a keyframe held and fits
// that keyframe's idleSegmentBytes.
func (st *stream) extendsIdleLocked(n int) bool {
	limit := st.h.idleSegmentBytes()
	if k := st.lastPendingKey(); k >= 0 {
		for _, f := range st.pending[k:] {
			n += len(f.frame)
		}
		return n <= limit
	}
	if len(st.history) == 0 || st.history[len(st.history)-1].cut {
		return false
	}
	return st.historyBytes+st.pendingBytes+n <= limit
}

// cutTailLocked marks the newest frame held as the last of its keyframe's
// that a joiner gets, and takes no delta until the next keyframe.
func (st *stream) cutTailLocked() {
	switch {
	case len(st.pending) > 0:
		st.pending[len(st.pending)-1].cut = true
	case len(st.history) > 0:
		st.history[len(st.history)-1].cut = true
	}
	st.await = keyAfterCut
}

// trimIdleLocked drops what a stream nobody watches no longer needs: every
// pending keyframe but the newest (and its deltas), and past
// idleSegmentBytes the deltas after each keyframe kept.
func (st *stream) trimIdleLocked() {
	limit := st.h.idleSegmentBytes()
	if first, last := st.firstPendingKey(), st.lastPendingKey(); first >= 0 && last > first {
		st.dropPendingLocked(first, last, false)
	}
	// The history and the pending deltas extending it: one keyframe's.
	head, next := len(st.pending), false
	if k := st.firstPendingKey(); k >= 0 {
		head, next = k, true
	}
	cut := false
	switch {
	case len(st.history) == 0 || st.history[len(st.history)-1].cut:
		cut = true // pending deltas before a keyframe extend nothing
		st.dropPendingLocked(0, head, false)
	case st.historyBytes > limit:
		n, size := 0, 0
		for n < len(st.history) && (n == 0 || size+len(st.history[n].frame) <= limit) {
			size += len(st.history[n].frame)
			n++
		}
		st.cutHistoryLocked(n, false)
		st.dropPendingLocked(0, head, false)
		cut = true
	default:
		n, size := 0, st.historyBytes
		for n < head && size+len(st.pending[n].frame) <= limit {
			size += len(st.pending[n].frame)
			n++
		}
		if n < head {
			st.dropPendingLocked(n, head, false)
			if n > 0 {
				st.pending[n-1].cut = true
			} else {
				st.history[len(st.history)-1].cut = true
			}
			cut = true
		}
	}
	if cut && !next {
		st.await = keyAfterCut
	}
	// The newest pending keyframe and its deltas.
	if k := st.firstPendingKey(); k >= 0 {
		n, size := k, 0
		for n < len(st.pending) && (n == k || size+len(st.pending[n].frame) <= limit) {
			size += len(st.pending[n].frame)
			n++
		}
		if n < len(st.pending) {
			st.dropPendingLocked(n, len(st.pending), false)
			st.pending[n-1].cut = true
			st.await = keyAfterCut
		}
	}
}

func (st *stream) firstPendingKey() int {
	for i, f := range st.pending {
		if f.key {
			return i
		}
	}
	return -1
}

func (st *stream) lastPendingKey() int {
	for i := len(st.pending) - 1; i >= 0; i-- {
		if st.pending[i].key {
			return i
		}
	}
	return -1
}

// giveLocked returns fs' memory to the budget; forBudget counts them as
// dropped to make room in it.
func (st *stream) giveLocked(forBudget bool, fs ...stampedFrame) {
	n := 0
	for _, f := range fs {
		n += f.mem()
	}
	st.held -= n
	st.h.spectators.give(n, st.idle)
	if forBudget {
		st.h.counters.spectatorBudgetDropped.Add(uint64(len(fs)))
	}
}

// dropPendingLocked drops pending[from:to] (nothing if from is -1).
func (st *stream) dropPendingLocked(from, to int, forBudget bool) {
	if from < 0 || from >= to {
		return
	}
	st.giveLocked(forBudget, st.pending[from:to]...)
	for _, f := range st.pending[from:to] {
		st.pendingBytes -= len(f.frame)
	}
	n := len(st.pending)
	st.pending = append(st.pending[:from], st.pending[to:]...)
	clear(st.pending[len(st.pending):n])
	if len(st.pending) == 0 {
		st.stopTimerLocked()
	}
}

// cutHistoryLocked keeps the history's first n frames, the last of them
// cut: a joiner gets the keyframe and waits for the next.
func (st *stream) cutHistoryLocked(n int, forBudget bool) {
	st.giveLocked(forBudget, st.history[n:]...)
	clear(st.history[n:])
	st.history = st.history[:n]
	st.history[n-1].cut = true
	st.historyBytes = 0
	for _, f := range st.history {
		st.historyBytes += len(f.frame)
	}
}

func (st *stream) dropHistoryLocked(forBudget bool) {
	st.giveLocked(forBudget, st.history...)
	st.history, st.historyBytes = nil, 0
}

func (st *stream) stopTimerLocked() {
	if st.timer != nil {
		st.timer.Stop()
	}
	st.pending, st.timer = nil, nil // let the backing array go
	st.armed++
}

// armLocked schedules release for when the frame received at at is due.
func (st *stream) armLocked(at time.Time) {
	d := at.Add(st.h.cfg.SpectatorDelay).Sub(st.h.cfg.Now())
	st.armed++
	gen := st.armed
	st.timer = st.h.cfg.AfterFunc(max(d, 0), func() { st.release(gen) })
}

// release sends every frame whose delay has passed to every viewer, and
// re-arms for the next. It runs on the timer's goroutine and takes no
// Hub.mu, so a busy lobby does not hold spectators back, nor they it.
func (st *stream) release(gen uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || gen != st.armed {
		return // dropped, or re-armed since
	}
	st.timer = nil
	now := st.h.cfg.Now()
	n := 0
	for _, f := range st.pending {
		if now.Before(f.at.Add(st.h.cfg.SpectatorDelay)) {
			break
		}
		n++
		st.pendingBytes -= len(f.frame)
		for _, v := range st.viewers {
			v.enqueueSpectator(f.frame, f.key, f.cut)
		}
		st.h.counters.spectatorFramesOut.Add(uint64(len(st.viewers)))
		st.keepLocked(f)
	}
	clear(st.pending[:n])
	st.pending = st.pending[n:]
	if len(st.pending) > 0 {
		st.armLocked(st.pending[0].at)
	} else {
		st.pending = nil // let the backing array go
	}
}

// keepLocked adds a released frame to what a joiner is sent: a keyframe
// starts over; a delta extends the last keyframe unless it was cut, and
// past the room's buffer the history is cut back to its keyframe (a
// joiner then waits for the next one). A frame not kept is given back.
func (st *stream) keepLocked(f stampedFrame) {
	switch {
	case f.key:
		st.dropHistoryLocked(false)
		st.history = append(st.history, f)
		st.historyBytes = len(f.frame)
	case len(st.history) > 0 && !st.history[len(st.history)-1].cut:
		st.history = append(st.history, f)
		st.historyBytes += len(f.frame)
		if st.historyBytes > st.h.cfg.SpectatorBufferBytes {
			st.cutHistoryLocked(1, false)
		}
	default:
		st.giveLocked(false, f)
	}
}

// add makes s a viewer and sends it the history: the game as the other
// viewers see it now.
func (st *stream) add(s *Session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.idle && !st.closed {
		st.h.spectators.toWatched(st.held)
		st.idle = false
	}
	st.viewers = append(st.viewers, s)
	for _, f := range st.history {
		s.enqueueSpectator(f.frame, f.key, f.cut)
	}
	st.h.counters.spectatorFramesOut.Add(uint64(len(st.history)))
}

func (st *stream) remove(s *Session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, v := range st.viewers {
		if v == s {
			st.viewers = append(st.viewers[:i], st.viewers[i+1:]...)
			break
		}
	}
	if len(st.viewers) == 0 && !st.idle && !st.closed {
		st.goIdleLocked()
	}
}

// goIdleLocked keeps, once the last viewer has left, only what a joiner
// needs, in the budget's idle share; if the share is full, nothing (a
// joiner then waits for the host's next keyframe, which a host sends when
// it hears it is watched again).
func (st *stream) goIdleLocked() {
	st.trimIdleLocked()
	if !st.h.spectators.toIdle(st.held) {
		st.dropHistoryLocked(true)
		st.dropPendingLocked(0, len(st.pending), true)
		st.await = keyAfterCut
		st.h.log.Info("spectator budget's idle share full: unwatched room keeps nothing", "room", st.code)
	}
	st.idle = true
}

// close drops everything held; the timer finds the stream closed.
func (st *stream) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dropHistoryLocked(false)
	st.dropPendingLocked(0, len(st.pending), false)
	st.stopTimerLocked()
	st.closed = true
	st.viewers = nil
}

// enqueueSpectator hands a spectator frame to the session's current link;
// while the session is away it is dropped (a resume starts at a keyframe).
func (s *Session) enqueueSpectator(frame []byte, key, cut bool) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.ended || s.link == nil {
		s.hub.counters.spectatorFramesDropped.Add(1)
		return
	}
	if n := s.link.enqueueSpectator(frame, key, cut); n > 0 {
		s.hub.counters.spectatorFramesDropped.Add(uint64(n))
	}
}

// stopWatchingLocked takes s off the stream it watches.
func (h *Hub) stopWatchingLocked(s *Session) {
	r := s.watching
	if r == nil {
		return
	}
	s.watching = nil
	r.spectators--
	if r.stream != nil {
		r.stream.remove(s)
	}
	h.spectatorsChangedLocked(r)
}

// spectatorsChangedLocked tells r's members its spectator count changed,
// so a host can stop sending a stream nobody watches: not at once but at
// the end of protocol.SpectatorCountInterval, as one roomUpdated for every
// change within it (a crowd arriving costs the room one event), and not at
// all if the count is back where the members last heard it.
func (h *Hub) spectatorsChangedLocked(r *room) {
	if r.countTimer != nil {
		return
	}
	r.countTimer = h.cfg.AfterFunc(protocol.SpectatorCountInterval, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		r.countTimer = nil
		if h.rooms[r.code] != r || r.spectators == r.spectatorsSent {
			return // closed, or no change to tell
		}
		h.broadcastRoomInfoLocked(r)
	})
}

// broadcastRoomInfoLocked sends every member the room as it is now.
func (h *Hub) broadcastRoomInfoLocked(r *room) {
	r.spectatorsSent = r.spectators
	h.broadcastLocked(r, nil, protocol.TypeRoomUpdated, &protocol.RoomUpdated{Room: r.info()})
}

// endStreamLocked tells r's spectators the room is gone and drops its
// stream.
func (h *Hub) endStreamLocked(r *room, reason string) {
	if r.stream == nil {
		return
	}
	r.stream.mu.Lock()
	viewers := append([]*Session(nil), r.stream.viewers...)
	r.stream.mu.Unlock()
	r.stream.close()
	if r.countTimer != nil {
		r.countTimer.Stop()
		r.countTimer = nil
	}
	for _, v := range viewers {
		v.watching = nil
		v.send(0, protocol.TypeSpectateEnded, &protocol.SpectateEnded{Reason: reason})
	}
	r.spectators = 0
}

func beforeSpectate(s *Session, m *protocol.Spectate) (prep, error) {
	p, _, err := findRoomBefore(s, m, &m.Code)
	return p, err
}

// spectate makes the sender a spectator of a room. A code is looked up as
// in joinRoom, against the failed-join budget: watching must not become a
// way to guess codes.
func spectate(q req[protocol.Spectate]) (reply, error) {
	s, h, m := q.s, q.h, q.m
	remote := q.prep.remote
	if s.room != nil {
		return reply{}, fail(protocol.CodeAlreadyInRoom, "leave room "+s.room.code+" before watching one")
	}
	r, err := h.foundRoomLocked(remote, m.Code, q.prep.found)
	if err != nil {
		return reply{}, err
	}
	if err := r.refuseBanned(s, m.Code); err != nil {
		return reply{}, err
	}
	if !r.passwordOK(m.Password) {
		h.spendJoinFailure(remote)
		return reply{}, fail(protocol.CodeWrongPassword, "room "+m.Code+" needs its password to watch")
	}
	if s.watching == r {
		return reply{}, fail(protocol.CodeAlreadyInRoom, "already watching room "+r.code)
	}
	if r.spectators >= h.cfg.SpectatorsPerRoom {
		return reply{}, fail(protocol.CodeRoomFull, fmt.Sprintf("room %s has no spectator seat left (%d of %d)",
			r.code, r.spectators, h.cfg.SpectatorsPerRoom))
	}
	h.stopWatchingLocked(s)
	h.unsubscribeRoomListLocked(s)
	s.watching = r
	r.spectators++
	h.spectatorsChangedLocked(r)
	h.counters.spectates.Add(1)
	st := h.streamLocked(r)
	s.log().Info("watching", "room", r.code, "spectators", r.spectators)
	return reply{
		typ: protocol.TypeSpectating,
		body: &protocol.Spectating{Room: h.summaryLocked(r), DelayMs: int(h.cfg.SpectatorDelay / time.Millisecond),
			MaxData: h.cfg.SpectatorFrameBytes},
		// After the reply, so the client knows what the frames are.
		then: func() { st.add(s) },
	}, nil
}

func stopSpectating(q req[protocol.StopSpectating]) (reply, error) {
	if q.s.watching == nil {
		return reply{}, fail(protocol.CodeNotInRoom, "not watching a room")
	}
	q.h.stopWatchingLocked(q.s)
	return okReply(), nil
}

func beforeSpectatorFrame(s *Session, m *protocol.SpectatorFrame) (prep, error) {
	if limit := s.hub.cfg.SpectatorFrameBytes; len(m.Data) > limit {
		return prep{}, fail(protocol.CodeInvalidArgument, fmt.Sprintf("data is %d bytes, past this server's %d", len(m.Data), limit))
	}
	return prep{now: s.hub.cfg.Now()}, nil
}

// spectatorFrame takes one frame of the host's spectator stream. It is
// encoded once here; every spectator is sent the same bytes.
func spectatorFrame(q req[protocol.SpectatorFrame]) (reply, error) {
	h, r, now := q.h, q.room, q.prep.now
	st := h.streamLocked(r)
	if !st.frames.AllowN(now, 1) {
		h.counters.limited(limitSpectatorFrames)
		return reply{}, fail(protocol.CodeRateLimited, fmt.Sprintf("more than %v spectator frames a second", h.cfg.SpectatorFramesPerSecond))
	}
	frame, err := protocol.Encode(protocol.TypeSpectatorFrame, 0, q.m)
	if err != nil {
		return reply{}, fmt.Errorf("signaling: spectator frame: %w", err)
	}
	if err := st.push(stampedFrame{at: now, frame: frame, key: q.m.Key}); err != nil {
		return reply{}, err // counted by push, under its limit
	}
	h.counters.spectatorFramesIn.Add(1)
	if q.id == 0 {
		return reply{}, nil
	}
	return okReply(), nil
}
