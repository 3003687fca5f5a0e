package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// The attackers of issue 24 beside the players, so that the soak shows
// whether the fixes for them keep the players' figures where they were:
//   - item 1, a pong flooder: after hello, unsolicited pong frames as fast
//     as it can write them;
//   - item 1, an endless message: a binary frame with FIN=0, then empty
//     continuation frames with FIN=0 for ever;
//   - item 7, a burst reader: 90 requests in one write (within the burst
//     of 100), then every reply read, again once its budget has refilled.
// The server must close the first two with 1008 and never drop the third.

type attackKind int

const (
	attackPongs attackKind = iota
	attackEndless
	attackBurst
)

func (k attackKind) String() string {
	return [...]string{"pong flooder", "endless-message flooder", "burst reader"}[k]
}

// word is k as -flood-kinds names it.
func (k attackKind) word() string { return [...]string{"pongs", "endless", "bursts"}[k] }

// parseKinds reads -flood-kinds: kind names, comma-separated.
func parseKinds(list string) ([]attackKind, error) {
	all := []attackKind{attackPongs, attackEndless, attackBurst}
	var kinds []attackKind
	for _, word := range strings.Split(list, ",") {
		i := slices.IndexFunc(all, func(k attackKind) bool { return k.word() == strings.TrimSpace(word) })
		if i < 0 {
			return nil, fmt.Errorf("-flood-kinds %q: %q is none of pongs, endless, bursts", list, word)
		}
		kinds = append(kinds, all[i])
	}
	return kinds, nil
}

// kindsArg is kinds as -flood-kinds takes them.
func kindsArg(kinds []attackKind) string {
	words := make([]string, len(kinds))
	for i, k := range kinds {
		words[i] = k.word()
	}
	return strings.Join(words, ",")
}

// kindOf is attacker i's kind: the kinds of -flood-kinds in turn.
func (c config) kindOf(i int) attackKind { return c.floodKinds[i%len(c.floodKinds)] }

// uses reports whether some attacker is of kind k.
func (c config) uses(k attackKind) bool {
	for i := range min(c.floods, len(c.floodKinds)) {
		if c.kindOf(i) == k {
			return true
		}
	}
	return false
}

const (
	// burstRequests is item 7's burst: within the session's burst of 100.
	burstRequests = 90
	// burstRefill waits for the 90 tokens to come back at the default 50
	// messages a second (1.8 s), with room to spare.
	burstRefill = 2500 * time.Millisecond
	// burstBound is how long a burst's replies may take before the burst
	// counts as not answered.
	burstBound = 10 * time.Second
	// floodBound is how long the server may serve a flooding connection;
	// the server's own test closes one within milliseconds.
	floodBound = 5 * time.Second
	// floodBatch frames go out in one write.
	floodBatch = 512
)

// floodCounters are the attackers' outcomes over the run.
type floodCounters struct {
	kinds [3]kindCounters
	// Burst readers.
	bursts       atomic.Int64 // bursts whose replies all came (burstRequests each)
	burstDropped atomic.Int64 // burst sessions the server closed: must be 0
	burstLate    atomic.Int64 // bursts not answered within burstBound
	burstRefused atomic.Int64 // requests answered with an Error (rate_limited)

	mu    sync.Mutex
	notes []string
}

type kindCounters struct {
	conns      atomic.Int64 // connections past hello
	dialFailed atomic.Int64 // connections refused before the Welcome
	closed1008 atomic.Int64 // closed by the server with 1008
	closedBare atomic.Int64 // ended with no close frame (a reset overtook it)
	closedElse atomic.Int64 // closed by the server with another status
	servedLong atomic.Int64 // still served floodBound after the flood began
	frames     atomic.Int64 // flood frames written
}

func (f *floodCounters) note(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.notes) < maxNotes {
		f.notes = append(f.notes, fmt.Sprintf(format, args...))
	}
}

// floods runs the attackers in every flood window of the run and returns
// when the last window has ended, with the mean cores the flooders'
// process used.
//
// The pong and endless-message flooders run in a process of their own at
// -flood-nice (floodproc.go): a real attacker spends its own machine's CPU,
// and on the players' cores and runtime they would measure how the
// flooders starve the players' pion stacks, not how the server isolates
// them. The server gets no such help. The burst readers, light and meant
// to be clients that read what they are sent, are goroutines here at the
// players' priority: at nice 19 on a loaded machine they answered no ping
// within the server's 10 s and were dropped for it.
func (s *soak) floods(ctx context.Context) (float64, error) {
	var proc *floodProcess
	if s.cfg.uses(attackPongs) || s.cfg.uses(attackEndless) {
		var err error
		if proc, err = s.startFloodProcess(ctx); err != nil {
			return 0, err
		}
	}
	var wg sync.WaitGroup
	for i := range s.cfg.floods {
		if s.cfg.kindOf(i) == attackBurst {
			wg.Go(func() { s.attackInWindows(ctx, attackBurst, i) })
		}
	}
	wg.Wait()
	if proc == nil {
		return 0, nil
	}
	return proc.wait(s)
}

// attackInWindows runs attacker i in each flood window.
func (s *soak) attackInWindows(ctx context.Context, kind attackKind, i int) {
	for _, w := range s.cfg.floodWindows() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(s.start.Add(w[0]))):
		}
		wctx, cancel := context.WithDeadline(ctx, s.start.Add(w[1]))
		s.attack(wctx, kind, i)
		cancel()
	}
}

// attack runs one attacker until ctx ends, reconnecting -flood-redial after
// each connection closes.
func (s *soak) attack(ctx context.Context, kind attackKind, i int) {
	kc := &s.fc.kinds[kind]
	addr := s.url[len("ws://"):]
	addr = addr[:len(addr)-len("/ws")]
	// Flooders come from an address of their own, as real ones would: the
	// server holds a network back after a flood close, and the players'
	// and burst readers' network (127.0.0.1) is not the flooders'.
	var from net.Addr
	if kind != attackBurst {
		from = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}
	}
	for ctx.Err() == nil {
		c, err := dialRaw(ctx, addr, fmt.Sprintf("flood%d", i), from)
		if err != nil {
			if ctx.Err() == nil {
				kc.dialFailed.Add(1)
				s.fc.note("%s %d: %v", kind, i, err)
			}
		} else {
			kc.conns.Add(1)
			stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Now()) })
			if kind == attackBurst {
				s.burst(ctx, c, i)
			} else {
				s.flood(ctx, c, kind, i)
			}
			stop()
			_ = c.conn.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(s.cfg.floodRedial):
		}
	}
}

// flood writes frames until the server closes the connection and counts
// how it closed.
func (s *soak) flood(ctx context.Context, c *rawConn, kind attackKind, i int) {
	kc := &s.fc.kinds[kind]
	var frame, first []byte
	if kind == attackPongs {
		frame = c.frame(nil, finBit|opPong, nil)
	} else {
		first = c.frame(nil, opBinary, []byte{0x81}) // FIN=0: a message that never ends
		frame = c.frame(nil, opContinuation, nil)
	}
	batch := bytes.Repeat(frame, floodBatch)
	ended := make(chan error, 1)
	var closed atomic.Bool
	go func() {
		for {
			if _, err := c.readMessage(); err != nil {
				closed.Store(true)
				ended <- err
				return
			}
		}
	}()
	began := time.Now()
	_ = c.conn.SetDeadline(began.Add(floodBound))
	var werr error
	if first != nil {
		_, werr = c.conn.Write(first)
	}
	// Stopping at the server's close frame spares the soak's CPU the rest:
	// the server has stopped reading by then.
	for werr == nil && !closed.Load() {
		if _, werr = c.conn.Write(batch); werr == nil {
			kc.frames.Add(floodBatch)
		}
	}
	// The writes fail once the server has closed (or the bound or ctx set
	// the deadline); the reader says how the connection ended.
	err := <-ended
	switch status := closeStatus(err); {
	case ctx.Err() != nil && time.Since(began) < floodBound:
		// The window ended mid-flood: no verdict on this connection.
	case status == 1008:
		kc.closed1008.Add(1)
	case status != 0:
		kc.closedElse.Add(1)
		s.fc.note("%s %d: closed with %d", kind, i, status)
	case isTimeout(err) || isTimeout(werr):
		kc.servedLong.Add(1)
		s.fc.note("%s %d: still served %v into the flood (%d frames written)", kind, i, floodBound, kc.frames.Load())
	default:
		kc.closedBare.Add(1)
	}
}

// burst sends burstRequests requests in one write and reads every reply,
// again and again on the same session, until ctx ends. A session the
// server closes is a slow consumer dropped: the verdict fails on it.
func (s *soak) burst(ctx context.Context, c *rawConn, i int) {
	var burst []byte
	for id := range burstRequests {
		req, err := protocol.Encode(protocol.TypeSetName, uint32(100+id), &protocol.SetName{Name: fmt.Sprintf("burst%d", i)}) //nolint:gosec // < 200
		if err != nil {
			panic(err) // a fixed message: cannot fail
		}
		burst = c.frame(burst, finBit|opBinary, req)
	}
	for ctx.Err() == nil {
		_ = c.conn.SetDeadline(time.Now().Add(burstBound))
		sent := time.Now()
		if _, err := c.conn.Write(burst); err != nil {
			s.burstEnded(ctx, c, i, err, "writing a burst")
			return
		}
		answered := 0
		for answered < burstRequests {
			env, err := c.readMessage()
			if err != nil {
				if isTimeout(err) && ctx.Err() == nil {
					s.fc.burstLate.Add(1)
					s.fc.note("burst reader %d: %d of %d replies within %v", i, answered, burstRequests, burstBound)
					return
				}
				s.burstEnded(ctx, c, i, err, fmt.Sprintf("%d of %d replies read, the burst written %v before",
					answered, burstRequests, time.Since(sent).Round(time.Millisecond)))
				return
			}
			switch env.Type {
			case protocol.TypeOK:
				answered++
			case protocol.TypeError:
				answered++
				s.fc.burstRefused.Add(1)
				s.fc.note("burst reader %d: request %d refused: %s", i, env.ID, errorCode(env))
			}
		}
		s.fc.bursts.Add(1)
		// Wait for the budget to refill, reading (and answering pings).
		_ = c.conn.SetDeadline(time.Now().Add(burstRefill))
		for {
			if _, err := c.readMessage(); err != nil {
				if isTimeout(err) && ctx.Err() == nil {
					break
				}
				s.burstEnded(ctx, c, i, err, "waiting for the budget to refill, every reply read")
				return
			}
		}
	}
	c.close()
}

// burstEnded accounts for a burst reader's connection that failed: the
// end of the window, or the server dropping it.
func (s *soak) burstEnded(ctx context.Context, c *rawConn, i int, err error, when string) {
	if ctx.Err() != nil {
		return
	}
	s.fc.burstDropped.Add(1)
	ago := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return time.Since(t).Round(time.Millisecond).String() + " before"
	}
	s.fc.note("burst reader %d: session dropped (%v) %s; %d pings answered, the last %s; the last frame read %s",
		i, err, when, c.pings, ago(c.lastPing), ago(c.lastFrame))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
