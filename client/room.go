package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hostrelay/hostrelay/protocol"
)

// Room is this session's place in a lobby room and its WebRTC star: a host
// has a peer per client, a client has one peer, the host.
type Room struct {
	lobby *Lobby
	log   *slog.Logger

	events   chan Event
	messages chan Message
	dropped  atomic.Uint64

	mu      sync.Mutex
	info    protocol.RoomInfo
	you     string
	players []protocol.Player
	ice     protocol.ICE
	peers   map[string]*peer
	closed  bool
	err     error

	done chan struct{}
	wg   sync.WaitGroup // event deliveries in flight
}

func newRoom(l *Lobby) *Room {
	return &Room{
		lobby:    l,
		log:      l.log,
		events:   make(chan Event, 64),
		messages: make(chan Message, l.opts.MessageBuffer),
		peers:    make(map[string]*peer),
		done:     make(chan struct{}),
	}
}

// start takes the server's RoomJoined; a client starts its offer to the host.
func (r *Room) start(rj protocol.RoomJoined) error {
	r.mu.Lock()
	r.info, r.you, r.players, r.ice = rj.Room, rj.You, rj.Players, rj.ICE
	r.log = r.log.With("room", rj.Room.Code, "player", rj.You)
	isHost := rj.Room.Host == rj.You
	r.mu.Unlock()
	if isHost {
		return nil
	}
	p, err := r.newPeer(rj.Room.Host)
	if err != nil {
		return err
	}
	if err := p.offer(); err != nil {
		p.close(err)
		return err
	}
	return nil
}

// Code is the room code (the share link is <server>/r/<code>).
func (r *Room) Code() string { return r.Info().Code }

// Info describes the room as of joining.
func (r *Room) Info() protocol.RoomInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info
}

// You is this session's player id in the room.
func (r *Room) You() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.you
}

// IsHost reports whether this session hosts the room.
func (r *Room) IsHost() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info.Host == r.you
}

// Players lists the room's members, oldest first.
func (r *Room) Players() []protocol.Player {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.Player(nil), r.players...)
}

// ICE is the TURN configuration the server issued for this session: that of
// the join reply, replaced by each refresh the server pushes before expiry.
// New peer connections use it.
func (r *Room) ICE() protocol.ICE {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ice
}

// Events delivers room and peer events in order; RoomClosed is last, then
// the channel closes. It must be drained.
func (r *Room) Events() <-chan Event { return r.events }

// Messages delivers data-channel messages from peers. Game-channel messages
// that find it full are dropped (see Dropped); Events-channel messages wait.
// It is never closed (pion may still be delivering); watch Done.
func (r *Room) Messages() <-chan Message { return r.messages }

// Dropped counts game-channel messages dropped because Messages was full.
func (r *Room) Dropped() uint64 { return r.dropped.Load() }

// Done is closed when the room has ended for this session.
func (r *Room) Done() <-chan struct{} { return r.done }

// Err reports why the room ended, once Done is closed.
func (r *Room) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// OpenPeers lists the players with open channels to this session.
func (r *Room) OpenPeers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id, p := range r.peers {
		if p.isOpen() {
			ids = append(ids, id)
		}
	}
	return ids
}

// Send sends data to one peer. It does not block: on the Game channel a
// full send buffer drops the packet (and returns nil), as a late game
// packet is worthless.
func (r *Room) Send(to string, ch Channel, data []byte) error {
	r.mu.Lock()
	p := r.peers[to]
	r.mu.Unlock()
	if p == nil || !p.isOpen() {
		return fmt.Errorf("%w: %s", ErrNoPeer, to)
	}
	return p.send(ch, data)
}

// Broadcast sends data to every open peer and returns the first error.
func (r *Room) Broadcast(ch Channel, data []byte) error {
	r.mu.Lock()
	peers := make([]*peer, 0, len(r.peers))
	for _, p := range r.peers {
		peers = append(peers, p)
	}
	r.mu.Unlock()
	var first error
	for _, p := range peers {
		if !p.isOpen() {
			continue
		}
		if err := p.send(ch, data); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// SelectedPair reports the candidate types of the pair ICE selected to a
// peer: "relay"/"relay" when traffic goes through the server's TURN.
func (r *Room) SelectedPair(peerID string) (local, remote string, err error) {
	r.mu.Lock()
	p := r.peers[peerID]
	r.mu.Unlock()
	if p == nil {
		return "", "", fmt.Errorf("%w: %s", ErrNoPeer, peerID)
	}
	return p.selectedPair()
}

// Leave leaves the room (as host, closing it for everyone) and closes its
// peer connections.
func (r *Room) Leave(ctx context.Context) error {
	err := r.lobby.call(ctx, protocol.TypeLeaveRoom, nil, &protocol.OK{})
	r.lobby.leftRoom(r)
	r.shutdown(protocol.ReasonLeft, nil)
	return err
}

// handle applies one lobby event of this room. It runs on the lobby's read
// goroutine, so events are handled in the order the server sent them.
func (r *Room) handle(env protocol.Envelope) {
	switch env.Type {
	case protocol.TypePlayerJoined:
		var m protocol.PlayerJoined
		if r.decode(env, &m) {
			r.mu.Lock()
			r.players = append(r.players, m.Player)
			r.mu.Unlock()
			r.emit(PlayerJoined{Player: m.Player})
		}
	case protocol.TypePlayerLeft:
		var m protocol.PlayerLeft
		if r.decode(env, &m) {
			r.mu.Lock()
			for i, p := range r.players {
				if p.ID == m.ID {
					r.players = append(r.players[:i], r.players[i+1:]...)
					break
				}
			}
			p := r.peers[m.ID]
			r.mu.Unlock()
			if p != nil {
				p.close(nil)
			}
			r.emit(PlayerLeft{ID: m.ID, Reason: m.Reason})
		}
	case protocol.TypeRoomClosed:
		var m protocol.RoomClosed
		if r.decode(env, &m) {
			r.lobby.leftRoom(r)
			r.shutdown(m.Reason, ErrRoomClosed)
		}
	case protocol.TypeHostReplaced:
		// We hosted, stopped answering, and the server gave the room away:
		// the session is out of it (join it again to play as a client).
		var m protocol.HostReplaced
		if r.decode(env, &m) && m.Room == r.Code() {
			r.lobby.leftRoom(r)
			r.shutdown(protocol.ReasonUnresponsive, ErrHostReplaced)
		}
	case protocol.TypeSignal:
		var m protocol.Signal
		if r.decode(env, &m) {
			r.signal(m)
		}
	default:
		if !r.handleFeature(env) {
			r.log.Debug("ignoring event", "type", env.Type)
		}
	}
}

func (r *Room) decode(env protocol.Envelope, v any) bool {
	if err := protocol.DecodeBody(env, v); err != nil {
		r.log.Warn("bad event from server", "type", env.Type, "err", err)
		return false
	}
	return true
}

// signal applies SDP or a candidate from a peer. The server stamped From.
func (r *Room) signal(m protocol.Signal) {
	r.mu.Lock()
	p := r.peers[m.From]
	isHost := r.info.Host == r.you
	r.mu.Unlock()
	if m.Kind == protocol.SignalOffer {
		if !isHost {
			r.log.Warn("offer received by a client; ignoring", "from", m.From)
			return
		}
		switch {
		case p != nil && p.renegotiates(m.SDP):
			// The same connection offering again: a browser restarting ICE
			// with fresh credentials. Answered in place, the game goes on.
		case p != nil: // a new connection from this client: it starts over
			p.close(errors.New("client: peer reconnected"))
			p = nil
		}
		if p == nil {
			var err error
			if p, err = r.newPeer(m.From); err != nil {
				r.log.Warn("cannot create peer", "peer", m.From, "err", err)
				return
			}
		}
	}
	if p == nil {
		r.log.Debug("signal for no peer", "from", m.From, "kind", m.Kind)
		return
	}
	if err := p.apply(m); err != nil {
		r.log.Warn("signalling failed", "peer", m.From, "kind", m.Kind, "err", err)
		p.close(err)
	}
}

// emit delivers an event, waiting for the application (events are rare and
// must not be lost) unless the room has ended.
func (r *Room) emit(e Event) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	defer r.wg.Done()
	select {
	case r.events <- e:
	case <-r.done:
	}
}

// deliver hands a received message to the application.
func (r *Room) deliver(m Message) {
	if m.Channel == Game {
		select {
		case r.messages <- m:
		default:
			r.dropped.Add(1)
		}
		return
	}
	select {
	case r.messages <- m:
	case <-r.done:
	}
}

// shutdown closes every peer, then emits RoomClosed (if there is room in
// Events: an application that stopped reading still sees Events close) and
// closes Events. Safe to call more than once; the first call wins.
func (r *Room) shutdown(reason string, err error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true // from here emit drops events
	r.err = err
	peers := r.peers
	r.peers = map[string]*peer{}
	r.mu.Unlock()

	for _, p := range peers {
		p.close(nil)
	}
	close(r.done) // releases emits waiting on a full Events
	r.wg.Wait()
	if reason != "" {
		select {
		case r.events <- RoomClosed{Reason: reason}:
		default:
		}
	}
	close(r.events)
}
