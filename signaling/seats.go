package signaling

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/protocol"
)

// Sessions and seats: hello makes or resumes a session on a link; a link
// that ends leaves its session's seat held for Config.Grace; the seat is
// released when the grace period ends.

// hello handles the first frame of a link: a new session, or a resumed one.
func (h *Hub) hello(l *link, env protocol.Envelope) error {
	var m protocol.Hello
	if err := protocol.DecodeBody(env, &m); err != nil {
		return err
	}
	if m.Version != protocol.Version {
		return fail(protocol.CodeUnsupportedVersion,
			fmt.Sprintf("server speaks protocol version %d, client sent %d: reload the page", protocol.Version, m.Version))
	}
	if err := m.Validate(); err != nil {
		return err
	}
	if err := h.checkBanIP(l.remote); err != nil {
		return err
	}
	identity, err := h.verifyHello(l, m.Token)
	if err != nil {
		return err
	}
	if m.Resume != "" {
		return h.resume(l, env.ID, m, identity)
	}
	// Signed before the lock, like a join's: the credentials name the
	// session, so its id is drawn here.
	id := newSessionID()
	ice := h.cfg.ICE(id, l.host)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return fail(protocol.CodeServerFull, "server shutting down")
	}
	if err := h.checkBansLocked(l.remote, identity.UserID); err != nil {
		return err
	}
	s := newSession(h, l, id)
	s.hello = true
	s.name = strings.TrimSpace(m.Name)
	s.identity = identity
	if s.name == "" {
		s.name = identity.Name // the game's name for its user, when the page sent none
	}
	s.wantsPings = m.Pings
	if m.Device != "" {
		// Only the hash is kept: the device id is a long-lived secret of
		// the browser, and ban lists need nothing more.
		sum := sha256.Sum256([]byte(m.Device))
		s.device = hex.EncodeToString(sum[:])
	}
	resume := h.newResumeLocked(s)
	h.sessions[s.id] = s
	h.tokens[sha256.Sum256([]byte(s.token))] = s
	l.session = s
	l.metered.Store(s)
	node, region := h.self()
	s.sendWelcome(env.ID, &protocol.Welcome{
		Version: protocol.Version, Session: s.id, MaxFrame: h.cfg.MaxFrame, Token: s.token,
		Resume: resume, Grace: int(h.cfg.Grace / time.Second), Node: node, Region: region, ICE: &ice,
	})
	s.nudgePing() // so the ping is known before the player enters a room
	s.log().Debug("session open", "remote", l.remote)
	return nil
}

// newResumeLocked issues s's next single-use resume token.
func (h *Hub) newResumeLocked(s *Session) string {
	delete(h.resumes, s.resumeHash)
	token := h.resumeToken()
	s.resumeHash = sha256.Sum256([]byte(token))
	h.resumes[s.resumeHash] = s
	return token
}

// resume moves a held (or still connected) session onto link l and sends it
// every frame after the m.Received-th. The token is consumed under the lock,
// so of two resumes with one token exactly one wins.
func (h *Hub) resume(l *link, id uint32, m protocol.Hello, identity auth.Identity) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.resumes[sha256.Sum256([]byte(m.Resume))]
	if !ok && !h.closing {
		if err := h.resumeElsewhere(m.Resume); err != nil {
			if !isElsewhere(err) {
				h.counters.resumesFailed.Add(1)
			}
			return err
		}
	}
	if !ok || h.closing {
		h.counters.resumesFailed.Add(1)
		return fail(protocol.CodeResumeFailed, "this seat is no longer held; join again")
	}
	if err := checkResumeIdentity(s, identity, m.Token != "" && h.cfg.Auth != nil); err != nil {
		h.counters.resumesFailed.Add(1)
		return err
	}
	if err := h.checkBansLocked(l.remote, s.identity.UserID); err != nil {
		h.counters.resumesFailed.Add(1)
		return err
	}
	s.outMu.Lock()
	missed, ok := s.replay.after(m.Received, s.sent)
	if !ok || m.Received > s.sent {
		s.outMu.Unlock()
		// The gap cannot be filled, so the seat cannot be trusted to match
		// what the client believes: release it now rather than at expiry.
		s.log().Info("resume refused: missed too much", "received", m.Received, "sent", s.sent)
		h.endLocked(s, protocol.ReasonDisconnect)
		h.counters.resumesFailed.Add(1)
		return fail(protocol.CodeResumeFailed, "missed too much while away; join again")
	}
	old := s.link
	s.link = l
	token := h.newResumeLocked(s)
	node, region := h.self()
	welcome, err := protocol.Encode(protocol.TypeWelcome, id, &protocol.Welcome{
		Version: protocol.Version, Session: s.id, MaxFrame: h.cfg.MaxFrame, Token: s.token,
		Resume: token, Grace: int(h.cfg.Grace / time.Second), Resumed: true, Node: node, Region: region,
	})
	if err != nil {
		s.outMu.Unlock()
		return err
	}
	// The resumed Welcome is not numbered: the client does not count it.
	l.enqueueReplay(append([][]byte{welcome}, missed...))
	s.outMu.Unlock()

	if old != nil {
		// A half-open old connection must not keep acting for the seat.
		old.abort()
	}
	if s.awayTimer != nil {
		s.awayTimer.Stop()
		s.awayTimer = nil
	}
	l.session = s
	l.metered.Store(s)
	s.remote, s.host = l.remote, l.host
	wasAway := s.away
	s.away = false
	h.counters.resumes.Add(1)
	s.log().Info("session resumed", "remote", l.remote, "replayed", len(missed), "was_away", wasAway)
	if wasAway && s.room != nil {
		h.broadcastLocked(s.room, s, protocol.TypePlayerUpdated, &protocol.PlayerUpdated{Player: s.player()})
	}
	s.nudgePing()
	return nil
}

// linkEnded is called when a link's connection is gone. Its session, if
// this link still carries it, is held for Config.Grace when the connection
// died (no clean close) while in a room; a lobby-only session has nothing
// worth holding, and a client that closed cleanly meant to go.
func (h *Hub) linkEnded(l *link, clean bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.links, l)
	s := l.session
	if s == nil {
		return
	}
	s.outMu.Lock()
	current := s.link == l
	if current {
		s.link = nil
	}
	s.outMu.Unlock()
	if !current || s.ended {
		return // resumed elsewhere, or already over
	}
	if clean || s.room == nil || h.cfg.Grace <= 0 || h.closing {
		h.endLocked(s, protocol.ReasonDisconnect)
		return
	}
	s.away = true
	s.log().Info("connection lost: seat held", "room", s.room.code, "grace", h.cfg.Grace)
	h.broadcastLocked(s.room, s, protocol.TypePlayerUpdated, &protocol.PlayerUpdated{Player: s.player()})
	s.awayTimer = time.AfterFunc(h.cfg.Grace, func() { h.expire(s) })
}

// expire releases a seat whose grace period ended without a resume.
func (h *Hub) expire(s *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.away || s.ended {
		return
	}
	s.log().Info("seat released: grace period over")
	h.endLocked(s, protocol.ReasonDisconnect)
}

// scheduleICELocked sends s fresh TURN credentials before the ones it has
// expire (at three quarters of their lifetime), for as long as it is in a
// room: pion and browsers re-authenticate every refresh and permission, so
// a credential that lapses mid-game would end the game.
func (h *Hub) scheduleICELocked(s *Session, ttl int) {
	if s.iceTimer != nil {
		s.iceTimer.Stop()
	}
	if ttl <= 0 {
		return
	}
	after := time.Duration(ttl) * time.Second * 3 / 4
	s.iceTimer = time.AfterFunc(after, func() {
		h.mu.RLock()
		inRoom := s.room != nil && !s.ended
		host := s.host
		h.mu.RUnlock()
		if !inRoom {
			return
		}
		ice := h.cfg.ICE(s.id, host) // outside the lock: it signs
		h.mu.Lock()
		defer h.mu.Unlock()
		if s.room == nil || s.ended {
			return
		}
		s.send(0, protocol.TypeICERefresh, &protocol.ICERefresh{ICE: ice})
		h.scheduleICELocked(s, ice.TTL)
	})
}
