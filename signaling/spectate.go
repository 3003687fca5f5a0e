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
// release timer) and above Session.outMu.
type stream struct {
	h *Hub
	// frames is the host's frame budget (SpectatorFramesPerSecond), taken
	// under Hub.mu with the hub's clock.
	frames *rate.Limiter

	mu           sync.Mutex
	pending      []stampedFrame // not yet released, oldest first
	pendingBytes int
	history      []stampedFrame // released: a keyframe first, then deltas; empty if none held
	historyBytes int
	viewers      []*Session
	timer        stopper // armed while pending is not empty
	closed       bool
}

type stampedFrame struct {
	at    time.Time // when the hub received it
	frame []byte    // the encoded SpectatorFrame event, shared by every viewer
	key   bool
}

func (h *Hub) newStream() *stream {
	return &stream{h: h, frames: rate.NewLimiter(rate.Limit(h.cfg.SpectatorFramesPerSecond), h.cfg.SpectatorFrameBurst)}
}

// streamLocked returns r's stream, making it on first use.
func (h *Hub) streamLocked(r *room) *stream {
	if r.stream == nil {
		r.stream = h.newStream()
	}
	return r.stream
}

// push holds a frame for the delay. It refuses one past the room's buffer
// budget: the host is sending faster than the delay lets out.
func (st *stream) push(f stampedFrame) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	if st.pendingBytes+len(f.frame) > st.h.cfg.SpectatorBufferBytes {
		return fail(protocol.CodeRateLimited, fmt.Sprintf("spectator buffer full (%d bytes held for the delay)", st.pendingBytes))
	}
	st.pending = append(st.pending, f)
	st.pendingBytes += len(f.frame)
	if len(st.pending) == 1 {
		st.armLocked(f.at)
	}
	return nil
}

// armLocked schedules release for when the frame received at at is due.
func (st *stream) armLocked(at time.Time) {
	d := at.Add(st.h.cfg.SpectatorDelay).Sub(st.h.cfg.Now())
	st.timer = st.h.cfg.AfterFunc(max(d, 0), st.release)
}

// release sends every frame whose delay has passed to every viewer, and
// re-arms for the next. It runs on the timer's goroutine and takes no
// Hub.mu, so a busy lobby does not hold spectators back, nor they it.
func (st *stream) release() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	now := st.h.cfg.Now()
	n := 0
	for _, f := range st.pending {
		if now.Before(f.at.Add(st.h.cfg.SpectatorDelay)) {
			break
		}
		n++
		st.pendingBytes -= len(f.frame)
		st.keepLocked(f)
		for _, v := range st.viewers {
			v.enqueueSpectator(f.frame, f.key)
		}
		st.h.counters.spectatorFramesOut.Add(uint64(len(st.viewers)))
	}
	clear(st.pending[:n])
	st.pending = st.pending[n:]
	if len(st.pending) > 0 {
		st.armLocked(st.pending[0].at)
	} else {
		st.pending, st.timer = nil, nil // let the backing array go
	}
}

// keepLocked adds a released frame to what a joiner is sent: a keyframe
// starts over; a delta extends the last keyframe, and past the budget the
// history is dropped (a joiner then waits for the next keyframe).
func (st *stream) keepLocked(f stampedFrame) {
	switch {
	case f.key:
		clear(st.history)
		st.history = append(st.history[:0], f)
		st.historyBytes = len(f.frame)
	case len(st.history) > 0:
		st.history = append(st.history, f)
		st.historyBytes += len(f.frame)
		if st.historyBytes > st.h.cfg.SpectatorBufferBytes {
			st.history, st.historyBytes = nil, 0
		}
	}
}

// add makes s a viewer and sends it the history: the game as the other
// viewers see it now.
func (st *stream) add(s *Session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.viewers = append(st.viewers, s)
	for _, f := range st.history {
		s.enqueueSpectator(f.frame, f.key)
	}
	st.h.counters.spectatorFramesOut.Add(uint64(len(st.history)))
}

func (st *stream) remove(s *Session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, v := range st.viewers {
		if v == s {
			st.viewers = append(st.viewers[:i], st.viewers[i+1:]...)
			return
		}
	}
}

// close drops everything held; the timer finds the stream closed.
func (st *stream) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	if st.timer != nil {
		st.timer.Stop()
	}
	st.pending, st.history, st.viewers, st.timer = nil, nil, nil, nil
}

// enqueueSpectator hands a spectator frame to the session's current link;
// while the session is away it is dropped (a resume starts at a keyframe).
func (s *Session) enqueueSpectator(frame []byte, key bool) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.ended || s.link == nil {
		s.hub.counters.spectatorFramesDropped.Add(1)
		return
	}
	if n := s.link.enqueueSpectator(frame, key); n > 0 {
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
	if r.banned(s) {
		return reply{}, fail(protocol.CodeKicked, "the host removed you from room "+m.Code)
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
		h.counters.limited(limitSpectatorFrames)
		return reply{}, err
	}
	h.counters.spectatorFramesIn.Add(1)
	if q.id == 0 {
		return reply{}, nil
	}
	return okReply(), nil
}
