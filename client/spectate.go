package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// Spectator ends with one of these reasons besides a room close reason
// (protocol.ReasonHostLeft, ReasonRoomLost, …).
const (
	SpectateJoined  = "joined"  // this session took a seat in a room
	SpectateStopped = "stopped" // Close was called
)

// Spectator watches a room without a seat: no peer connection, no TURN, no
// cost to the host. The host's spectator stream arrives over the lobby
// connection, the server's delay behind the players. At most
// Options.SpectatorBuffer frames wait for the application; one that falls
// further behind loses its backlog and resumes at the next keyframe, as the
// server does with a slow connection: a delta without its predecessors is
// useless.
type Spectator struct {
	lobby   *Lobby
	frames  chan protocol.SpectatorFrame
	dropped atomic.Uint64

	mu       sync.Mutex
	info     protocol.Spectating
	needKey  bool // frames were lost: skip deltas until a keyframe
	reason   string
	received uint64
	done     chan struct{}
}

// Spectate watches the room with this code (room_not_found,
// wrong_password, room_full past its spectator seats). On a cluster it
// follows the room to its node.
func (l *Lobby) Spectate(ctx context.Context, code, password string) (*Spectator, error) {
	req := protocol.Spectate{Code: code, Password: password}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	// Registered before the request: the server sends the last keyframe
	// right after the reply.
	s := &Spectator{lobby: l, frames: make(chan protocol.SpectatorFrame, l.opts.SpectatorBuffer), done: make(chan struct{})}
	l.mu.Lock()
	old := l.spectator
	l.spectator = s
	l.mu.Unlock()
	if old != nil {
		old.end(SpectateStopped)
	}
	var reply protocol.Spectating
	if err := l.follow(ctx, func() error { return l.call(ctx, protocol.TypeSpectate, &req, &reply) }); err != nil {
		l.mu.Lock()
		if l.spectator == s {
			l.spectator = nil
		}
		l.mu.Unlock()
		s.end(SpectateStopped)
		return nil, err
	}
	s.mu.Lock()
	s.info = reply
	s.mu.Unlock()
	return s, nil
}

// Room is the room as the room list showed it when watching began.
func (s *Spectator) Room() protocol.RoomSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info.Room
}

// Delay is how far behind the players the server holds the stream.
func (s *Spectator) Delay() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.info.DelayMs) * time.Millisecond
}

// Frames delivers the host's stream in order: Key marks a complete state,
// the frames after it are deltas against it. The first frame (and the
// first after frames were lost) is a keyframe. It closes when watching
// ends.
func (s *Spectator) Frames() <-chan protocol.SpectatorFrame { return s.frames }

// Received counts the frames delivered to Frames.
func (s *Spectator) Received() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// Dropped counts frames lost because Frames was full (and the deltas
// skipped after them until a keyframe).
func (s *Spectator) Dropped() uint64 { return s.dropped.Load() }

// Done is closed when watching has ended; Reason says why.
func (s *Spectator) Done() <-chan struct{} { return s.done }

// Reason is why watching ended ("" while it goes on): a room close reason,
// SpectateJoined, SpectateStopped, or ReasonDisconnect / ReasonRoomLost
// when the lobby connection ended.
func (s *Spectator) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// Close stops watching. Idempotent.
func (s *Spectator) Close(ctx context.Context) error {
	s.mu.Lock()
	ended := s.reason != ""
	s.mu.Unlock()
	if ended {
		return nil
	}
	s.end(SpectateStopped)
	s.lobby.mu.Lock()
	if s.lobby.spectator == s {
		s.lobby.spectator = nil
	}
	s.lobby.mu.Unlock()
	return s.lobby.call(ctx, protocol.TypeStopSpectating, &protocol.StopSpectating{}, &protocol.OK{})
}

// deliver hands one frame to Frames without blocking the lobby's reader.
func (s *Spectator) deliver(f protocol.SpectatorFrame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason != "" {
		return
	}
	if s.needKey && !f.Key {
		s.dropped.Add(1)
		return
	}
	select {
	case s.frames <- f:
		s.needKey = false
		s.received++
		return
	default:
	}
	// Full: the backlog goes, and with it every delta until a keyframe.
	for {
		select {
		case <-s.frames:
			s.dropped.Add(1)
			continue
		default:
		}
		break
	}
	if f.Key {
		s.frames <- f // the channel is empty now
		s.received++
		s.needKey = false
		return
	}
	s.dropped.Add(1)
	s.needKey = true
}

func (s *Spectator) end(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason != "" {
		return
	}
	s.reason = reason
	close(s.frames)
	close(s.done)
}

// routeSpectator applies spectatorFrame and spectateEnded.
func (l *Lobby) routeSpectator(env protocol.Envelope) {
	l.mu.Lock()
	s := l.spectator
	l.mu.Unlock()
	if s == nil {
		return
	}
	switch env.Type {
	case protocol.TypeSpectatorFrame:
		var f protocol.SpectatorFrame
		if protocol.DecodeBody(env, &f) == nil && len(f.Data) > 0 {
			s.deliver(f)
		}
	case protocol.TypeSpectateEnded:
		var e protocol.SpectateEnded
		_ = protocol.DecodeBody(env, &e)
		if e.Reason == "" {
			e.Reason = protocol.ReasonHostLeft
		}
		l.stopSpectating(e.Reason)
	}
}

// stopSpectating ends the session's watch, if any, for reason.
func (l *Lobby) stopSpectating(reason string) {
	l.mu.Lock()
	s := l.spectator
	l.spectator = nil
	l.mu.Unlock()
	if s != nil {
		s.end(reason)
	}
}

// SendSpectatorFrame sends one frame of the room's spectator stream (host
// only). It is not answered: the server fans it out after its delay, and a
// refusal (past the room's rate) is logged as a server notice.
func (r *Room) SendSpectatorFrame(ctx context.Context, data []byte, key bool) error {
	f := protocol.SpectatorFrame{Key: key, Data: data}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return r.lobby.send(ctx, protocol.TypeSpectatorFrame, 0, &f)
}
