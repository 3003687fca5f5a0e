package client

import (
	"context"
	"fmt"
	"sync"

	"github.com/hostrelay/hostrelay/protocol"
)

// Quick play and parties (protocol/quickplay.go).

// QuickPlay takes a seat in the fullest open public room of req.Mode, or
// makes a public room of that mode with this session as host. In a party
// only the leader may ask (forbidden otherwise), and the other members are
// placed in the same room: their Party.Rooms delivers it.
func (l *Lobby) QuickPlay(ctx context.Context, req protocol.QuickPlay) (*Room, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return l.enter(ctx, protocol.TypeQuickPlay, &req)
}

// Party is this session's party: a few friends the leader's QuickPlay
// keeps together. It ends with Leave or when the lobby closes.
type Party struct {
	lobby   *Lobby
	rooms   chan *Room
	changed chan struct{}

	mu    sync.Mutex
	state protocol.Party
	you   string
	left  bool
}

// CreateParty makes a party with this session as its leader; share
// Party.Info().Code (the lobby app's link is /?party=CODE).
func (l *Lobby) CreateParty(ctx context.Context) (*Party, error) {
	return l.party(ctx, protocol.TypeCreateParty, &protocol.CreateParty{})
}

// JoinParty joins a friend's party by its code (party_not_found,
// party_full, already_in_party).
func (l *Lobby) JoinParty(ctx context.Context, code string) (*Party, error) {
	req := protocol.JoinParty{Code: code}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return l.party(ctx, protocol.TypeJoinParty, &req)
}

func (l *Lobby) party(ctx context.Context, typ string, body any) (*Party, error) {
	// Registered before the request: a PartyUpdated may follow the reply at once.
	p := &Party{lobby: l, rooms: make(chan *Room, 1), changed: make(chan struct{}, 1)}
	l.mu.Lock()
	if l.partyOf != nil {
		l.mu.Unlock()
		return nil, &Error{Code: protocol.CodeAlreadyInParty, Message: "leave the current party first"}
	}
	l.partyOf = p
	l.mu.Unlock()
	var pj protocol.PartyJoined
	if err := l.follow(ctx, func() error { return l.call(ctx, typ, body, &pj) }); err != nil {
		l.forgetParty(p)
		return nil, err
	}
	p.mu.Lock()
	p.you = pj.You
	if p.state.Code == "" { // a PartyUpdated that overtook the reply is newer
		p.state = pj.Party
	}
	p.mu.Unlock()
	return p, nil
}

// Info is the party as last heard: its code, leader and members.
func (p *Party) Info() protocol.Party {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.state
	s.Members = append([]protocol.PartyMember(nil), s.Members...)
	return s
}

// You is this session's member id in the party.
func (p *Party) You() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.you
}

// IsLeader reports whether this session leads the party (only the leader
// may QuickPlay).
func (p *Party) IsLeader() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.you != "" && p.state.Leader == p.you
}

// Changed receives a value after the party changes (coalesced).
func (p *Party) Changed() <-chan struct{} { return p.changed }

// Rooms delivers the room the leader's QuickPlay placed this member in
// (the leader gets its room from QuickPlay itself). Read it: a second room
// finds the first still waiting only if the application ignored both.
func (p *Party) Rooms() <-chan *Room { return p.rooms }

// Leave leaves the party; the longest-present member leads on.
func (p *Party) Leave(ctx context.Context) error {
	err := p.lobby.call(ctx, protocol.TypeLeaveParty, &protocol.LeaveParty{}, &protocol.OK{})
	p.lobby.forgetParty(p)
	return err
}

func (l *Lobby) forgetParty(p *Party) {
	l.mu.Lock()
	if l.partyOf == p {
		l.partyOf = nil
	}
	l.mu.Unlock()
	p.mu.Lock()
	p.left = true
	p.mu.Unlock()
}

func (p *Party) update(s protocol.Party) {
	p.mu.Lock()
	p.state = s
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// placed takes the room the leader's QuickPlay put this member in: the
// server sent RoomJoined as an event (id 0), so no call waits for it.
func (l *Lobby) placed(env protocol.Envelope) {
	var rj protocol.RoomJoined
	if err := protocol.DecodeBody(env, &rj); err != nil {
		l.log.Warn("bad roomJoined event", "err", err)
		return
	}
	r := newRoom(l)
	l.mu.Lock()
	if l.room != nil {
		l.mu.Unlock()
		l.log.Warn("placed in a room while in another; ignoring", "room", rj.Room.Code)
		return
	}
	l.room = r
	p := l.partyOf
	l.mu.Unlock()
	l.stopSpectating("joined")
	if err := r.start(rj); err != nil {
		l.log.Warn("cannot connect to the party's room", "room", rj.Room.Code, "err", err)
	}
	if p == nil {
		return
	}
	select {
	case p.rooms <- r:
	default:
		l.log.Warn("party room not read; dropping the notice", "room", rj.Room.Code)
	}
}

// routeParty applies PartyUpdated.
func (l *Lobby) routeParty(env protocol.Envelope) {
	l.mu.Lock()
	p := l.partyOf
	l.mu.Unlock()
	var u protocol.PartyUpdated
	if p == nil || protocol.DecodeBody(env, &u) != nil {
		return
	}
	p.update(u.Party)
}
