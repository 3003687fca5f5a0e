package signaling

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// Every request after hello takes one path (serve): decode the body into
// its type, validate it, run the handler's checks that need no shared state,
// take the hub's lock, check the sender's room, do the work, and answer
// exactly once: with the handler's reply, sent under the lock so no event of
// the room can overtake it, or with its error, which the link sends as an
// Error. A handler states only what its request does.

// where says which senders a request is for, by their room.
type where int

const (
	anywhere    where = iota // in a room or not
	inRoom                   // not_in_room otherwise
	asHost                   // not_in_room, or forbidden for a member who is not the host
	outsideRoom              // already_in_room otherwise
)

// route serves one request type.
type route func(s *Session, env protocol.Envelope) error

// reply is a request's answer: a frame of type typ, sent to the requester
// with its request id. The zero reply sends nothing (a signal sent without
// an id asks for none). then, if set, runs after the reply under the same
// lock: frames that must follow it (the rest of a long room list).
type reply struct {
	typ  string
	body any
	then func()
}

func okReply() reply { return reply{typ: protocol.TypeOK, body: &protocol.OK{}} }

// prep is what a handler works out before taking the hub's lock: the TURN
// credentials (signing stays out of the lock) and the sender's address and
// the time, which the per-IP join limits key on.
type prep struct {
	// code is a room code claimed in the cluster for a room this request
	// may make; released unless a room takes it (serve, quickPlay).
	code string
	// found is where a room code led (FindRoom).
	found  Found
	ice    protocol.ICE
	ices   map[*Session]protocol.ICE // quick play: the sender's party too
	remote netip.Addr
	now    time.Time
}

// req is one request being served, under Hub.mu.
type req[T any] struct {
	s    *Session
	h    *Hub
	id   uint32 // the request id, 0 if the sender wants no answer
	m    *T     // decoded and (unless lateValidate) validated
	room *room  // the sender's room, nil outside one
	prep prep
}

// spec says how requests of type T are served.
type spec[T any] struct {
	from where
	// why is the not_in_room message (inRoom), what only the host may do
	// (asHost), or the already_in_room message (outsideRoom; "" names the
	// room to leave).
	why string
	// ignoreBody serves the request whatever its body: requests with no
	// fields have never read theirs.
	ignoreBody bool
	// lateValidate leaves Validate to do (joinRoom validates under the
	// lock, after the failed-join budget, and a failure spends it).
	lateValidate bool
	// before runs outside the lock: checks of the request against the
	// configuration, rate limits, signing.
	before func(s *Session, m *T) (prep, error)
	// do runs under Hub.mu once the sender's room passed from.
	do func(q req[T]) (reply, error)
}

// validator is a request body with its own checks (protocol's Validate).
type validator interface{ Validate() error }

// serve makes the route for sp.
func serve[T any](sp spec[T]) route {
	return func(s *Session, env protocol.Envelope) error {
		m := new(T)
		if !sp.ignoreBody {
			if err := protocol.DecodeBody(env, m); err != nil {
				return err
			}
		}
		if v, ok := any(m).(validator); ok && !sp.lateValidate {
			if err := v.Validate(); err != nil {
				return err
			}
		}
		var p prep
		if sp.before != nil {
			var err error
			if p, err = sp.before(s, m); err != nil {
				return err
			}
		}
		h := s.hub
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := s.fromLocked(sp.from, sp.why); err != nil {
			h.releaseCode(p.code)
			return err
		}
		rep, err := sp.do(req[T]{s: s, h: h, id: env.ID, m: m, room: s.room, prep: p})
		if err != nil {
			h.releaseCode(p.code)
			return err
		}
		if rep.typ != "" {
			s.send(env.ID, rep.typ, rep.body)
		}
		if rep.then != nil {
			rep.then()
		}
		return nil
	}
}

// fromLocked checks the sender's room against where a request is for.
func (s *Session) fromLocked(from where, why string) error {
	switch from {
	case inRoom:
		if s.room == nil {
			return fail(protocol.CodeNotInRoom, why)
		}
	case asHost:
		if s.room == nil {
			return fail(protocol.CodeNotInRoom, "join a room first")
		}
		if s.room.host != s {
			return fail(protocol.CodeForbidden, "only the host may "+why)
		}
	case outsideRoom:
		if s.room != nil {
			if why == "" {
				why = "leave room " + s.room.code + " first"
			}
			return fail(protocol.CodeAlreadyInRoom, why)
		}
	case anywhere:
	}
	return nil
}

// newRoutes is every request a session may send after hello, by type.
// Host-only requests answer forbidden to anyone else, so a modified client
// gains nothing by sending them.
func newRoutes() map[string]route {
	const joinFirst = "join a room first"
	return map[string]route{
		protocol.TypeCreateRoom: serve(spec[protocol.CreateRoom]{from: outsideRoom, before: beforeCreateRoom, do: createRoom}),
		protocol.TypeJoinRoom:   serve(spec[protocol.JoinRoom]{lateValidate: true, before: beforeJoinRoom, do: joinRoom}),
		protocol.TypeLeaveRoom:  serve(spec[protocol.LeaveRoom]{from: inRoom, why: "not in a room", ignoreBody: true, do: leaveRoom}),
		protocol.TypeSignal:     serve(spec[protocol.Signal]{from: inRoom, why: "join a room before signalling", before: beforeSignal, do: relaySignal}),
		protocol.TypeSetName:    serve(spec[protocol.SetName]{do: setName}),
		protocol.TypeSetReady:   serve(spec[protocol.SetReady]{from: inRoom, why: joinFirst, do: setReady}),
		protocol.TypeUpdateRoom: serve(spec[protocol.UpdateRoom]{from: asHost, why: "change the room", before: beforeUpdateRoom, do: updateRoom}),
		protocol.TypeKick:       serve(spec[protocol.Kick]{from: asHost, why: "kick players", do: kick}),
		protocol.TypeStartGame:  serve(spec[protocol.StartGame]{from: asHost, why: "start the game", ignoreBody: true, do: startGame}),
		protocol.TypeChat:       serve(spec[protocol.Chat]{from: inRoom, why: joinFirst, before: beforeChat, do: chat}),
		protocol.TypeWatchRooms: serve(spec[protocol.WatchRooms]{from: outsideRoom, why: "the room list is for players outside a room",
			ignoreBody: true, do: subscribeRoomList}),
		protocol.TypeUnwatchRooms:   serve(spec[protocol.UnwatchRooms]{ignoreBody: true, do: unsubscribeRoomList}),
		protocol.TypeQuickPlay:      serve(spec[protocol.QuickPlay]{from: outsideRoom, before: beforeQuickPlay, do: quickPlay}),
		protocol.TypeCreateParty:    serve(spec[protocol.CreateParty]{ignoreBody: true, do: createParty}),
		protocol.TypeJoinParty:      serve(spec[protocol.JoinParty]{lateValidate: true, before: beforeJoinParty, do: joinParty}),
		protocol.TypeLeaveParty:     serve(spec[protocol.LeaveParty]{ignoreBody: true, do: leaveParty}),
		protocol.TypeSpectate:       serve(spec[protocol.Spectate]{lateValidate: true, before: beforeSpectate, do: spectate}),
		protocol.TypeStopSpectating: serve(spec[protocol.StopSpectating]{ignoreBody: true, do: stopSpectating}),
		protocol.TypeSpectatorFrame: serve(spec[protocol.SpectatorFrame]{from: asHost, why: "send spectator frames",
			before: beforeSpectatorFrame, do: spectatorFrame}),
		protocol.TypeHostSilent: serve(spec[protocol.HostSilent]{from: inRoom, why: joinFirst, do: hostSilent}),
		protocol.TypeHostAlive:  serve(spec[protocol.HostAlive]{do: hostAlive}),
	}
}

// handle serves one request. A returned error becomes the Error reply.
func (s *Session) handle(env protocol.Envelope) error {
	if r, ok := s.hub.routes[env.Type]; ok {
		return r(s, env)
	}
	if env.Type == protocol.TypeHello {
		return fail(protocol.CodeInvalidArgument, "hello already sent")
	}
	return fail(protocol.CodeUnknownType, fmt.Sprintf("unknown message type %.32q", env.Type))
}
