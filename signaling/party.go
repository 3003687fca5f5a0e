package signaling

import (
	"fmt"
	"strconv"

	"github.com/hostrelay/hostrelay/protocol"
)

// Parties: a few friends who quick-play together (protocol/quickplay.go).
// A party lives in the lobby only: it holds sessions, not seats, so it costs
// no room and no TURN. Its size is bounded by protocol.MaxPartySize and
// their number by the sessions (each session is in at most one party, and
// an empty party is forgotten).

// party is a lobby party. All fields are guarded by Hub.mu.
type party struct {
	code       string
	leader     *Session
	members    []*Session // join order, so the longest-present leads next
	nextMember int
}

func (p *party) info() protocol.Party {
	ms := make([]protocol.PartyMember, len(p.members))
	for i, m := range p.members {
		ms[i] = protocol.PartyMember{ID: m.partyMember, Name: m.name}
	}
	return protocol.Party{Code: p.code, Leader: p.leader.partyMember, Members: ms}
}

// partyChangedLocked tells every member of p but skip its new state.
func (h *Hub) partyChangedLocked(p *party, skip *Session) {
	frame, err := protocol.Encode(protocol.TypePartyUpdated, 0, &protocol.PartyUpdated{Party: p.info()})
	if err != nil {
		h.log.Error("encode event", "type", protocol.TypePartyUpdated, "party", p.code, "err", err)
		return
	}
	for _, m := range p.members {
		if m != skip {
			m.enqueue(frame)
		}
	}
}

func (h *Hub) enterPartyLocked(s *Session, p *party) {
	p.nextMember++
	s.party, s.partyMember = p, "m"+strconv.Itoa(p.nextMember)
	p.members = append(p.members, s)
}

// leavePartyLocked takes s out of its party. The longest-present member
// leads next; the last one out ends the party and frees its code.
func (h *Hub) leavePartyLocked(s *Session) {
	p := s.party
	s.party, s.partyMember = nil, ""
	for i, m := range p.members {
		if m == s {
			p.members = append(p.members[:i], p.members[i+1:]...)
			break
		}
	}
	if len(p.members) == 0 {
		delete(h.parties, p.code)
		return
	}
	if p.leader == s {
		p.leader = p.members[0]
	}
	h.partyChangedLocked(p, nil)
}

func createParty(q req[protocol.CreateParty]) (reply, error) {
	s, h := q.s, q.h
	if s.party != nil {
		return reply{}, fail(protocol.CodeAlreadyInParty, "leave party "+s.party.code+" first")
	}
	if s.name == "" {
		return reply{}, fail(protocol.CodeNameRequired, "choose a name first (hello.name or setName)")
	}
	var code string
	for {
		c, err := newRoomCode()
		if err != nil {
			return reply{}, err
		}
		if _, taken := h.parties[c]; !taken {
			code = c
			break
		}
	}
	p := &party{code: code, leader: s}
	h.parties[code] = p
	h.enterPartyLocked(s, p)
	s.log().Info("party created", "party", code)
	return reply{typ: protocol.TypePartyJoined, body: &protocol.PartyJoined{Party: p.info(), You: s.partyMember}}, nil
}

// beforeJoinParty spends what a join spends: a party code is guessed like a
// room code, so it draws on the same per-IP budgets.
func beforeJoinParty(s *Session, _ *protocol.JoinParty) (prep, error) {
	p, _, err := spendJoinBudgets(s)
	return p, err
}

func joinParty(q req[protocol.JoinParty]) (reply, error) {
	s, h, m := q.s, q.h, q.m
	remote, now := q.prep.remote, q.prep.now
	// Parties are local, so the lookup is under the lock: checking the
	// failed-join budget and spending it there is one step (FindRoom's
	// up-front token is for lookups that wait outside it).
	if err := h.codeLookupGate(remote, now, m); err != nil {
		return reply{}, err
	}
	if s.party != nil {
		return reply{}, fail(protocol.CodeAlreadyInParty, "leave party "+s.party.code+" first")
	}
	if s.name == "" {
		return reply{}, fail(protocol.CodeNameRequired, "choose a name first (hello.name or setName)")
	}
	p, ok := h.parties[m.Code]
	if !ok {
		h.spendJoinFailure(remote)
		return reply{}, fail(protocol.CodePartyNotFound, "no party with code "+m.Code)
	}
	if len(p.members) >= protocol.MaxPartySize {
		return reply{}, fail(protocol.CodePartyFull, fmt.Sprintf("party %s is full (%d of %d)", p.code, len(p.members), protocol.MaxPartySize))
	}
	h.enterPartyLocked(s, p)
	h.partyChangedLocked(p, s)
	s.log().Info("party joined", "party", p.code, "members", len(p.members))
	return reply{typ: protocol.TypePartyJoined, body: &protocol.PartyJoined{Party: p.info(), You: s.partyMember}}, nil
}

func leaveParty(q req[protocol.LeaveParty]) (reply, error) {
	if q.s.party == nil {
		return reply{}, fail(protocol.CodeNotInParty, "not in a party")
	}
	q.h.leavePartyLocked(q.s)
	return okReply(), nil
}
