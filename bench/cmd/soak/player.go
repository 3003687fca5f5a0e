package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/internal/netcut"
	"github.com/hostrelay/hostrelay/protocol"
)

// player is one soak player: a Go SDK lobby session (real pion peers,
// relay-only through the server's TURN) and, while in a room, a goroutine
// that drains its events, sends game traffic and accounts for what arrives.
type player struct {
	s     *soak
	name  string
	net   *netcut.Cuttable
	lobby *client.Lobby

	mu        sync.Mutex
	room      *client.Room
	loopDone  chan struct{} // closed when the room's loop has ended
	expectEnd bool          // the driver is ending this room on purpose
	resumeBy  time.Time     // a cut awaits Resumed until then; zero: none
	cuts      int           // lobby connections cut so far: a probe across a cut is not timed
	closed    bool
	stopProbe chan struct{} // closed by close
}

// newPlayer opens a lobby session, paced by the soak's join rate.
func (s *soak) newPlayer(ctx context.Context) (*player, error) {
	if err := s.pace.Wait(ctx); err != nil {
		return nil, err
	}
	p := &player{s: s, name: fmt.Sprintf("soak%d", s.nextID.Add(1)), net: &netcut.Cuttable{}}
	dctx, cancel := context.WithTimeout(ctx, s.cfg.openBound)
	defer cancel()
	l, err := client.Dial(dctx, s.url, client.Options{
		Name: p.name, HTTPClient: p.net.Client(), Logger: s.sdkLog, RewriteICE: s.rewriteICE,
	})
	if err != nil {
		if ctx.Err() == nil {
			s.c.refusal("dial: " + errCode(err))
			s.c.note("%s: dial: %v", p.name, err)
		}
		return nil, err
	}
	s.c.players.Add(1)
	p.lobby = l
	if s.cfg.probeEvery > 0 {
		p.stopProbe = make(chan struct{})
		go p.probe(ctx)
	}
	return p, nil
}

// probe times a cheap lobby request every -probe-every while the player is
// in a room: setReady to the value it already has, which the server answers
// with an OK and broadcasts to nobody. The time goes to the lobby
// round-trip histogram; a probe across a cut of the lobby connection is not
// timed (it waits for the resume, not for the server).
func (p *player) probe(ctx context.Context) {
	every := p.s.cfg.probeEvery
	first := time.NewTimer(rand.N(every)) //nolint:gosec // spreading the probes, not a secret
	defer first.Stop()
	select {
	case <-first.C:
	case <-p.stopProbe:
		return
	case <-ctx.Done():
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		p.mu.Lock()
		cuts, away := p.cuts, !p.resumeBy.IsZero()
		p.mu.Unlock()
		if r, _ := p.current(); r != nil && !away {
			pctx, cancel := context.WithTimeout(ctx, p.s.cfg.openBound)
			t0 := time.Now()
			err := r.SetReady(pctx, false)
			d := time.Since(t0)
			cancel()
			p.mu.Lock()
			same := cuts == p.cuts && p.resumeBy.IsZero()
			p.mu.Unlock()
			switch {
			case err == nil && same:
				p.s.lobbyRTT.add(d)
				if ph := p.s.phase(); ph != nil {
					ph.lobbyRTT.add(d)
				}
			case err != nil && same && ctx.Err() == nil:
				// Leaving a room races the probe (not_in_room): counted,
				// not judged.
				p.s.c.probeErrors.Add(1)
			}
		}
		select {
		case <-tick.C:
		case <-p.stopProbe:
			return
		case <-ctx.Done():
			return
		}
	}
}

// errCode is a server refusal's code, or the error's text.
func errCode(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return err.Error()
}

func (p *player) create(ctx context.Context, migrate bool) (string, error) {
	r, err := p.lobby.CreateRoom(ctx, protocol.CreateRoom{Name: "soak", MaxPlayers: p.s.cfg.roomSize, Public: true, Migrate: migrate})
	if err != nil {
		p.refused("create", err, ctx)
		return "", err
	}
	p.start(r)
	return r.Code(), nil
}

func (p *player) join(ctx context.Context, code string) error {
	r, err := p.lobby.JoinRoom(ctx, code, "")
	if err != nil {
		p.refused("join", err, ctx)
		return err
	}
	p.start(r)
	return nil
}

func (p *player) refused(what string, err error, ctx context.Context) { //nolint:revive // ctx last reads better here
	if ctx.Err() != nil {
		return // the soak is ending
	}
	p.s.c.refusal(what + ": " + errCode(err))
	p.s.c.note("%s: %s: %v", p.name, what, err)
}

func (p *player) start(r *client.Room) {
	done := make(chan struct{})
	p.mu.Lock()
	p.room, p.loopDone, p.expectEnd = r, done, false
	p.mu.Unlock()
	p.s.c.joins.Add(1)
	go p.loop(r, done)
}

// current returns the room the player is in and its loop's end, if the
// room has not ended.
func (p *player) current() (*client.Room, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.room == nil {
		return nil, nil
	}
	select {
	case <-p.room.Done():
		return nil, nil
	default:
		return p.room, p.loopDone
	}
}

func (p *player) isHost() bool {
	r, _ := p.current()
	return r != nil && r.IsHost()
}

func (p *player) resuming() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.resumeBy.IsZero()
}

// willEnd marks the player's room as ended on purpose: its end is not a
// failure.
func (p *player) willEnd() {
	p.mu.Lock()
	p.expectEnd = true
	p.mu.Unlock()
}

// leave leaves the room and waits for the room loop to finish.
func (p *player) leave(ctx context.Context) {
	r, done := p.current()
	if r == nil {
		return
	}
	p.willEnd()
	lctx, cancel := context.WithTimeout(ctx, p.s.cfg.openBound)
	defer cancel()
	if err := r.Leave(lctx); err != nil && ctx.Err() == nil {
		p.s.c.note("%s: leave: %v", p.name, err)
	}
	<-done
}

// cut kills the lobby connection; the SDK must resume the held seat.
func (p *player) cut() {
	p.mu.Lock()
	p.resumeBy = time.Now().Add(p.s.cfg.seatGrace + p.s.cfg.openBound)
	p.cuts++
	p.mu.Unlock()
	p.s.c.resumesAsked.Add(1)
	p.net.Cut()
}

// close ends the session cleanly (a 1000 close: the server holds no seat).
func (p *player) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed, p.expectEnd = true, true
	done := p.loopDone
	p.mu.Unlock()
	if p.stopProbe != nil {
		close(p.stopProbe)
	}
	_ = p.lobby.Close()
	if done != nil {
		<-done
	}
	p.s.c.players.Add(-1)
}

// Game packets: magic, kind, the sender's stream id for this peer
// connection, a sequence number and the send time, padded to -packet bytes.
const (
	headerLen  = 4 + 1 + 4 + 4 + 8
	kindGame   = 1
	kindEvents = 2
)

var magic = [4]byte{'S', 'O', 'A', 'K'} //nolint:gochecknoglobals // a constant array

func packet(size int, kind byte, stream, seq uint32, now time.Time) []byte {
	b := make([]byte, max(size, headerLen))
	copy(b, magic[:])
	b[4] = kind
	binary.LittleEndian.PutUint32(b[5:], stream)
	binary.LittleEndian.PutUint32(b[9:], seq)
	binary.LittleEndian.PutUint64(b[13:], uint64(now.UnixNano())) //nolint:gosec // a time after 1970
	return b
}

func parsePacket(b []byte) (kind byte, stream, seq uint32, sent time.Time, ok bool) {
	if len(b) < headerLen || [4]byte(b[:4]) != magic {
		return 0, 0, 0, time.Time{}, false
	}
	return b[4], binary.LittleEndian.Uint32(b[5:]), binary.LittleEndian.Uint32(b[9:]),
		time.Unix(0, int64(binary.LittleEndian.Uint64(b[13:]))), true //nolint:gosec // written by packet
}

// link is this player's sending side of one open peer connection.
type link struct {
	stream           uint32 // new for every connection: the receiver tells them apart
	gameSeq, evSeq   uint32
	opened, lastRecv time.Time
	stalled          bool
	// closedPipe is when a send first failed because the connection's
	// transport had closed; PeerClosed should follow. Zero: no such send.
	closedPipe time.Time
}

// inStream is what arrived from one peer connection of one sender.
type inStream struct {
	from          string
	count, maxSeq uint64 // game packets received, highest sequence + 1
	evNext        uint32 // next reliable sequence expected
}

type streamKey struct {
	from   string
	stream uint32
}

// roomLoop is the state of one player in one room; only its goroutine
// touches it.
type roomLoop struct {
	p       *player
	r       *client.Room
	you     string
	links   map[string]*link
	in      map[streamKey]*inStream
	expects map[string]time.Time // peers whose channels should open, since when
	ticks   int
	started time.Time
	history map[string][]string // the last events about each peer, for failure notes
}

// remember keeps the last few events about a peer: a failure note shows them.
func (l *roomLoop) remember(id, what string) {
	h := append(l.history[id], fmt.Sprintf("%s@%v", what, time.Since(l.started).Round(time.Millisecond)))
	if len(h) > 8 {
		h = h[len(h)-8:]
	}
	l.history[id] = h
}

func (p *player) loop(r *client.Room, done chan struct{}) {
	defer close(done)
	l := &roomLoop{p: p, r: r, you: r.You(), links: map[string]*link{}, in: map[streamKey]*inStream{},
		expects: map[string]time.Time{}, started: time.Now(), history: map[string][]string{}}
	if !r.IsHost() {
		l.expects[r.Info().Host] = time.Now()
	}
	tick := time.NewTicker(time.Second / time.Duration(p.s.cfg.hz))
	defer tick.Stop()
	check := time.NewTicker(250 * time.Millisecond)
	defer check.Stop()
	for {
		select {
		case e, ok := <-r.Events():
			if !ok {
				l.end()
				return
			}
			l.event(e)
		case m := <-r.Messages():
			l.message(m)
		case <-tick.C:
			l.send()
		case now := <-check.C:
			l.check(now)
		}
	}
}

func (l *roomLoop) event(e client.Event) {
	c := l.p.s.c
	now := time.Now()
	switch e := e.(type) {
	case client.PeerOpen:
		l.remember(e.ID, "open")
		if old := l.links[e.ID]; old != nil {
			l.dropLink(e.ID) // a new connection replaced it
		}
		l.links[e.ID] = &link{stream: rand.Uint32(), opened: now} //nolint:gosec // an id, not a secret
		c.peers.Add(1)
		if since, ok := l.expects[e.ID]; ok {
			delete(l.expects, e.ID)
			c.opens.Add(1)
			l.p.s.openTime.add(now.Sub(since))
		}
	case client.PeerClosed:
		l.remember(e.ID, fmt.Sprintf("closed(%v)", e.Err))
		if e.Err != nil && !l.ending() {
			c.peerFailed.Add(1)
			c.note("%s: peer %s closed: %v", l.p.name, e.ID, e.Err)
		}
		l.dropLink(e.ID)
	case client.PlayerJoined:
		if l.r.IsHost() {
			l.expects[e.Player.ID] = now
		}
	case client.PlayerLeft:
		l.remember(e.ID, "left")
		delete(l.expects, e.ID)
	case client.HostChanged:
		l.remember(e.Previous, "was host")
		l.remember(e.Host, "now host")
		delete(l.expects, e.Previous)
		if e.Host != l.you {
			l.expects[e.Host] = now
			return
		}
		for _, pl := range l.r.Players() {
			if pl.ID != l.you {
				if _, open := l.links[pl.ID]; !open {
					l.expects[pl.ID] = now
				}
			}
		}
	case client.Resumed:
		l.p.mu.Lock()
		asked := !l.p.resumeBy.IsZero()
		l.p.resumeBy = time.Time{}
		l.p.mu.Unlock()
		if asked {
			c.resumed.Add(1)
		}
	}
}

func (l *roomLoop) ending() bool {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	return l.p.expectEnd
}

// dropLink forgets a closed peer connection. What came over it is settled
// only when the room ends: events and messages reach the loop on two
// channels, so a message the connection delivered before it closed may be
// read after PeerClosed.
func (l *roomLoop) dropLink(id string) {
	if _, ok := l.links[id]; ok {
		delete(l.links, id)
		l.p.s.c.peers.Add(-1)
	}
}

// settle counts the game packets missing between the first and the last
// that arrived on a stream. Packets in flight when a connection closes are
// not counted: their loss is the connection's end, not the relay's.
func (l *roomLoop) settle(st *inStream) {
	if st.maxSeq > st.count {
		l.p.s.c.gameLost.Add(int64(st.maxSeq - st.count)) //nolint:gosec // maxSeq ≥ count
	}
}

func (l *roomLoop) message(m client.Message) {
	kind, stream, seq, sent, ok := parsePacket(m.Data)
	if !ok {
		return
	}
	c := l.p.s.c
	now := time.Now()
	if lk := l.links[m.From]; lk != nil {
		lk.lastRecv, lk.stalled = now, false
	}
	k := streamKey{m.From, stream}
	st := l.in[k]
	if st == nil {
		st = &inStream{from: m.From}
		l.in[k] = st
	}
	switch kind {
	case kindGame:
		c.gameRecv.Add(1)
		if st.count == 0 {
			l.remember(m.From, fmt.Sprintf("first game %x/%d", stream, seq))
		}
		st.count++
		st.maxSeq = max(st.maxSeq, uint64(seq)+1)
		l.p.s.latency.add(now.Sub(sent))
		if ph := l.p.s.phase(); ph != nil {
			ph.latency.add(now.Sub(sent))
		}
	case kindEvents:
		c.eventsRecv.Add(1)
		if seq != st.evNext {
			c.eventsLost.Add(1)
			c.note("%s in %s: reliable message %x/%d from %s, expected %d (%d game packets on it); %s: %v",
				l.p.name, l.r.Code(), stream, seq, m.From, st.evNext, st.count, m.From, l.history[m.From])
		}
		st.evNext = seq + 1
	}
}

// send is one tick: a game packet to every open peer (inputs to the host,
// snapshots to each client), and once a second a reliable event.
func (l *roomLoop) send() {
	c := l.p.s.c
	cfg := l.p.s.cfg
	l.ticks++
	events := l.ticks%cfg.hz == 0
	now := time.Now()
	for id, lk := range l.links {
		if err := l.r.Send(id, client.Game, packet(cfg.packet, kindGame, lk.stream, lk.gameSeq, now)); err != nil {
			l.sendFailed(id, err)
			continue
		}
		lk.gameSeq++
		c.gameSent.Add(1)
		if events {
			if err := l.r.Send(id, client.Events, packet(cfg.packet, kindEvents, lk.stream, lk.evSeq, now)); err != nil {
				l.sendFailed(id, err)
				continue
			}
			lk.evSeq++
			c.eventsSent.Add(1)
		}
	}
}

func (l *roomLoop) sendFailed(id string, err error) {
	// A peer that closed a moment ago: PeerClosed is on its way.
	if errors.Is(err, client.ErrNoPeer) || l.ending() {
		return
	}
	// The peer's side closed the connection (it left) and the SDK has not
	// noticed yet: not a failure if PeerClosed follows (check sees to it).
	if lk := l.links[id]; lk != nil && errors.Is(err, io.ErrClosedPipe) {
		if lk.closedPipe.IsZero() {
			lk.closedPipe = time.Now()
			l.p.s.c.sendsOnClosing.Add(1)
		}
		return
	}
	l.p.s.c.sendErrors.Add(1)
	l.p.s.c.note("%s: send to %s: %v", l.p.name, id, err)
}

// check applies the bounds: channels that should have opened, open links
// that went quiet, and a cut that should have resumed by now.
func (l *roomLoop) check(now time.Time) {
	c := l.p.s.c
	cfg := l.p.s.cfg
	if l.ending() {
		return
	}
	for id, since := range l.expects {
		if now.Sub(since) > cfg.openBound {
			delete(l.expects, id)
			c.openTimeouts.Add(1)
			c.note("%s: channels to %s not open %v after it was due", l.p.name, id, cfg.openBound)
		}
	}
	for id, lk := range l.links {
		last := lk.opened
		if lk.lastRecv.After(last) {
			last = lk.lastRecv
		}
		if !lk.closedPipe.IsZero() && now.Sub(lk.closedPipe) > cfg.stallBound {
			lk.closedPipe = time.Time{}
			c.sendErrors.Add(1)
			c.note("%s in %s: sends to %s fail (closed pipe) and the SDK still calls it open after %v; %s: %v",
				l.p.name, l.r.Code(), id, cfg.stallBound, id, l.history[id])
		}
		if !lk.stalled && now.Sub(last) > cfg.stallBound {
			lk.stalled = true
			c.stalls.Add(1)
			c.note("%s in %s: nothing from %s for %v on a link open for %v; %s: %v", l.p.name, l.r.Code(), id,
				cfg.stallBound, now.Sub(lk.opened).Round(time.Millisecond), id, l.history[id])
		}
	}
	l.p.mu.Lock()
	late := !l.p.resumeBy.IsZero() && now.After(l.p.resumeBy)
	if late {
		l.p.resumeBy = time.Time{}
	}
	l.p.mu.Unlock()
	if late {
		c.resumeFailed.Add(1)
		c.note("%s: no resume within the seat grace", l.p.name)
	}
}

// end settles the room: its streams, and why it ended if nobody asked.
func (l *roomLoop) end() {
	c := l.p.s.c
	for id := range l.links {
		l.dropLink(id)
	}
	for _, st := range l.in {
		l.settle(st)
	}
	c.sdkDropped.Add(int64(l.r.Dropped())) //nolint:gosec // a count
	l.p.mu.Lock()
	expected, resuming := l.p.expectEnd, !l.p.resumeBy.IsZero()
	l.p.resumeBy = time.Time{}
	l.p.mu.Unlock()
	switch {
	case expected:
	case resuming:
		c.resumeFailed.Add(1)
		c.note("%s: room ended while resuming: %v", l.p.name, l.r.Err())
	default:
		c.roomLost.Add(1)
		c.note("%s: room ended unasked: %v", l.p.name, l.r.Err())
	}
}
