package signaling

import (
	"fmt"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// A frozen host is replaced (issue 29; docs/protocol.md, Frozen hosts).
// Clients report a host that went silent on the game channel (hostSilent);
// once a majority of the non-host members present has reported, the host
// is asked for a sign of life (hostCheck) and has HostCheckDeadline to
// answer (hostAlive). No answer: it is replaced as if it had left. The
// host's own answer always wins, so no majority can vote out a live host.

// hostVote is a migrating room's vote on its host, made at the first report.
type hostVote struct {
	// host is who the counted reports are about; since is when the vote
	// began (the last answer or host change): older reports are settled.
	host  *Session
	since time.Time
	// last is each member's newest report: one vote per player however
	// often it reports, and the per-member rate limit. Members who left
	// are pruned as reports come.
	last map[*Session]time.Time
	// nonce is the hostCheck out (0: none) and seq the last one used.
	nonce    uint32
	seq      uint32
	deadline stopper
}

// ack answers a request that needs no more than an ok, if its sender asked
// for an answer (a non-zero id).
func ack(id uint32) reply {
	if id == 0 {
		return reply{}
	}
	return okReply()
}

// hostSilent counts a client's report that its host is silent.
func hostSilent(q req[protocol.HostSilent]) (reply, error) {
	s, h, r := q.s, q.h, q.room
	if r.host == s {
		return reply{}, fail(protocol.CodeForbidden, "the host cannot report itself silent")
	}
	if !r.migrate {
		return reply{}, fail(protocol.CodeForbidden, "room "+r.code+" was not made with migrate: a silent host cannot be replaced")
	}
	now := h.cfg.Now()
	v := r.vote
	if v == nil {
		v = &hostVote{host: r.host, since: now, last: make(map[*Session]time.Time)}
		r.vote = v
	}
	if at, ok := v.last[s]; ok && now.Sub(at) < h.cfg.HostReportEvery {
		h.counters.limited(limitHostReports)
		return reply{}, fail(protocol.CodeRateLimited, fmt.Sprintf("one host report per %v", h.cfg.HostReportEvery))
	}
	v.last[s] = now
	// A report that crossed a migration is about the old host: not counted.
	if q.m.Host != r.host.playerID {
		return ack(q.id), nil
	}
	if v.host != r.host {
		h.settleVoteLocked(r, now)
		v.host = r.host
		v.last[s] = now
	}
	if v.nonce == 0 && v.majorityLocked(r, now, h.cfg.HostReportWindow) {
		h.checkHostLocked(r)
	}
	return ack(q.id), nil
}

// majorityLocked says whether more than half of the non-host members present
// (connected) reported the host since the vote began, within window.
func (v *hostVote) majorityLocked(r *room, now time.Time, window time.Duration) bool {
	votes, present := 0, 0
	for s := range v.last {
		if s.room != r {
			delete(v.last, s)
		}
	}
	for _, m := range r.members {
		if m == r.host || m.away {
			continue
		}
		present++
		if v.counts(m, now, window) {
			votes++
		}
	}
	return present > 0 && 2*votes > present
}

// counts says whether m's report is part of the vote now.
func (v *hostVote) counts(m *Session, now time.Time, window time.Duration) bool {
	at, ok := v.last[m]
	return ok && !at.Before(v.since) && now.Sub(at) < window
}

// settleVoteLocked ends the vote: a check out is forgotten and earlier
// reports no longer count (their senders may report again after their
// rate limit).
func (h *Hub) settleVoteLocked(r *room, now time.Time) {
	v := r.vote
	if v.deadline != nil {
		v.deadline.Stop()
		v.deadline = nil
	}
	v.nonce, v.since = 0, now
}

// checkHostLocked asks r's host for a sign of life and arms the deadline.
func (h *Hub) checkHostLocked(r *room) {
	v := r.vote
	v.seq++
	if v.seq == 0 {
		v.seq = 1
	}
	v.nonce = v.seq
	host, nonce := r.host, v.nonce
	host.send(0, protocol.TypeHostCheck, &protocol.HostCheck{Nonce: nonce})
	h.counters.hostChecks.Add(1)
	// Debug: a game that pauses its traffic (a menu) is checked every few
	// seconds; the counters tell an operator how often.
	host.log().Debug("host reported silent: checking", "room", r.code, "player", host.playerID, "nonce", nonce)
	v.deadline = h.cfg.AfterFunc(h.cfg.HostCheckDeadline, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.hostCheckExpiredLocked(r, host, nonce)
	})
}

// hostAlive is the host's answer to hostCheck: the vote is refused. Anyone
// else's (a host replaced since, whose page ran again and answered a check
// it got before) is ignored, not refused, so that page hears nothing but
// its hostReplaced.
func hostAlive(q req[protocol.HostAlive]) (reply, error) {
	s, h, r := q.s, q.h, q.s.room
	if r != nil && r.host == s && r.vote != nil && r.vote.nonce != 0 && r.vote.nonce == q.m.Nonce {
		h.settleVoteLocked(r, h.cfg.Now())
		h.counters.freezeVotesRefused.Add(1)
		s.log().Debug("host answered its check: vote refused", "room", r.code, "player", s.playerID)
	}
	return ack(q.id), nil
}

// hostCheckExpiredLocked replaces a host that did not answer check nonce,
// if nothing changed since: the room is still here with that host, and the
// check is still out.
func (h *Hub) hostCheckExpiredLocked(r *room, host *Session, nonce uint32) {
	v := r.vote
	if h.rooms[r.code] != r || r.host != host || v == nil || v.nonce != nonce {
		return
	}
	// The successor is a member who reported: its page is running (it ran
	// the report), where the longest-present member may be frozen too.
	now := h.cfg.Now()
	for _, m := range r.members {
		if m != host && !m.away && v.counts(m, now, h.cfg.HostReportWindow) {
			r.prefer = m
			break
		}
	}
	h.settleVoteLocked(r, now)
	h.leaveLocked(host, protocol.ReasonUnresponsive)
	r.prefer = nil
	next := ""
	if r.host != nil && r.host != host {
		next = r.host.playerID
	}
	host.send(0, protocol.TypeHostReplaced, &protocol.HostReplaced{Room: r.code, Host: next, Reason: protocol.ReasonUnresponsive})
	h.counters.freezeMigrations.Add(1)
	host.log().Warn("host did not answer its check: replaced", "room", r.code, "to", next,
		"deadline", h.cfg.HostCheckDeadline)
}
