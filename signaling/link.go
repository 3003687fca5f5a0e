package signaling

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// link is one WebSocket connection. A Session outlives its links: when a
// link drops, the session's seat is held and a new link can resume it.
//
// A link reads with one goroutine at a time, parked in coder/websocket's
// Read while the client is quiet; each message is read and handled by a
// goroutine that lives for that message (see readNext). A writer goroutine
// exists only while frames are queued, and a ping's goroutine lives for one
// ping.
type link struct {
	hub    *Hub
	conn   *websocket.Conn
	out    *frameWriter // under conn's writes: the writer holds it per burst
	meter  *wireMeter   // under conn's reads
	remote netip.Addr
	host   string // Host header, for TURN URLs

	// over is set once run is winding down: the writer stops, a failed
	// ping or write is no news. (A context here, with the children each
	// ping hung on it, cost an idle link 400 bytes.)
	over atomic.Bool

	// Guarded by qmu, a leaf lock (enqueue runs under Hub.mu).
	qmu       sync.Mutex
	queue     []queued // frames waiting for the writer, oldest first
	replaying int      // frames in queue that are a resume's replay
	// spectating is how many frames in queue are spectator frames, which
	// have their own bound (SpectatorQueue) and are dropped, not fatal,
	// past it; haveKey is false until a keyframe was queued since the
	// last drop (deltas before one are useless to the spectator).
	spectating int
	haveKey    bool
	writing    bool // a writer goroutine is draining queue
	// drained, when a reader waits for the writer (awaitWriter), is closed
	// once the queue is below readPause or the writer stops.
	drained chan struct{}
	stopped bool // run is winding down: start no more goroutines
	wg      sync.WaitGroup

	// writeTimer aborts a write the peer does not take within WriteTimeout.
	// One timer, reset per frame, costs less than a context per frame, and
	// writes go out with no context for coder/websocket to watch. Only the
	// writer goroutine touches it; it is dropped when the queue is empty, so
	// an idle link holds none.
	writeTimer *time.Timer

	// nextPing is when the hub's ping sweep pings this link (unix
	// nanoseconds; 0 while a ping is due or out). A nudge (after hello, on
	// joining a room) pings at once, so the room sees the player's ping
	// without waiting. One sweep for all links, not a timer each: 130 bytes
	// less per idle link.
	nextPing atomic.Int64
	pinging  atomic.Bool
	// pongDue is set while a ping of ours waits for its pong: that pong is
	// free (see wireMeter), any other costs a token.
	pongDue atomic.Bool
	// holds counts the times the reader waited for the writer
	// (awaitWriter): a pong that came meanwhile could not be read.
	holds atomic.Uint32
	// pingCancel ends the ping in flight (nil if none) when the link ends;
	// guarded by qmu.
	pingCancel context.CancelFunc

	// dead is set once by kill or abort, whichever comes first: stop
	// queueing. (A channel and a sync.Once cost an idle link 110 bytes.)
	dead     atomic.Bool
	refused  int // frames refused in a row; reader only
	preHello int // frames read before hello succeeded; reader only
	// helloTimer cuts a link that has not said hello in time; reader only,
	// nil once hello succeeded.
	helloTimer *time.Timer

	// session is set by hello and changed only under Hub.mu.
	session *Session
	// metered is session for the wire meter, which runs inside
	// coder/websocket's reads: a close handshake reads on a goroutine of its
	// own, where session may not be read without Hub.mu.
	metered atomic.Pointer[Session]
}

func newLink(h *Hub, conn *websocket.Conn, bufs *smallBuffers, remote netip.Addr, host string) *link {
	l := &link{hub: h, conn: conn, out: bufs.out, meter: &bufs.conn.meter, remote: remote, host: host}
	l.meter.link = l
	l.nextPing.Store(time.Now().Add(h.cfg.PingInterval).UnixNano())
	return l
}

// run serves the link until the connection ends, then tells the hub and
// calls done. It returns at once: see readNext. Reads need no context to end
// them: kill and abort close the connection.
func (l *link) run(done func()) {
	// Hello must succeed soon after the upgrade, however many frames come
	// first: an upgraded connection that never says hello holds a file
	// descriptor and a goroutine for nothing, and a deadline per frame
	// would let it stay by sending anything now and then. A timer that
	// cuts the connection, not a context on the reads: coder/websocket
	// keeps the last read's context, and an idle link would hold it.
	l.helloTimer = time.AfterFunc(l.hub.cfg.HandshakeTimeout, l.abort)
	go l.readNext(done)
}

// readNext reads one message and handles it, then reads the next on a fresh
// goroutine; the goroutine whose read fails ends the link. So the goroutine
// parked in Read while the client is quiet has only the stack that waiting
// needs: the decryption of a TLS record and a handler that encodes a
// Welcome grow a stack to 8 KiB, and the GC never shrinks a parked
// goroutine's stack below four times what it uses, so a reader that lived
// on would keep it (over hostrelay's own TLS the idle session's stack was
// 8 KiB against 4 KiB over plain HTTP). One goroutine a message, as many
// as handling each message on a goroutine of its own cost before.
func (l *link) readNext(done func()) {
	err := l.readOne(context.Background())
	if err == nil && l.current() != nil && l.helloTimer != nil {
		l.helloTimer.Stop()
		l.helloTimer = nil
	}
	if err == nil {
		go l.readNext(done)
		return
	}
	if l.helloTimer != nil {
		l.helloTimer.Stop()
	}
	l.end(err)
	done()
}

// end winds the link down once its connection has ended.
func (l *link) end(err error) {
	if errors.Is(err, errWireFlood) {
		why := l.meter.why
		l.hub.log.Info("closing: too many frames", "remote", l.remote, "rule", why)
		l.reply(0, protocol.Error{Code: protocol.CodeRateLimited, Message: why})
		// Here, not in kill's goroutine: the writer stops once run winds
		// down below, and the Error would go unsent.
		l.flush(100 * time.Millisecond)
		l.kill(websocket.StatusPolicyViolation, why)
		l.hub.floodClosed(l.remote)
	}
	l.hub.linkEnded(l, cleanClose(err))
	l.kill(websocket.StatusNormalClosure, "")
	l.nextPing.Store(0)
	l.over.Store(true)
	l.qmu.Lock()
	l.stopped = true
	if l.pingCancel != nil {
		l.pingCancel()
	}
	l.qmu.Unlock()
	l.wg.Wait()
	l.hub.log.Debug("connection closed", "remote", l.remote, "reason", closeReason(err))
}

// nudgePing measures the round trip now rather than at the next interval.
// It may run under Hub.mu: the ping runs on a goroutine of its own.
func (l *link) nudgePing() { go l.ping() }

// cleanClose reports whether the client closed on purpose (a close frame
// with 1000 or 1001, as a browser sends when its tab closes): then there is
// no seat to hold. A connection that just dies sends no close frame.
func cleanClose(err error) bool {
	st := websocket.CloseStatus(err)
	return st == websocket.StatusNormalClosure || st == websocket.StatusGoingAway
}

func closeReason(err error) string {
	if st := websocket.CloseStatus(err); st != -1 {
		return st.String()
	}
	if err == nil {
		return "done"
	}
	return err.Error()
}

// FramesBeforeHello is how many frames a connection may send before its
// hello succeeds: a client that retries (a failed resume, then a plain
// hello) needs two or three. The next frame is answered rate_limited and
// closes the connection with 1008: before hello there is no session and so
// no message rate, and a flood would otherwise be answered as fast as it
// comes (20,000 frames at 23.8k/s were).
const FramesBeforeHello = 8

// current is the link's session, nil before hello. Only the handler of a
// frame changes l.session (in hello, under Hub.mu), and frames are read and
// handled one at a time, each reader started by the one before when it is
// done (readNext): readers may read it without the lock.
func (l *link) current() *Session { return l.session }

// readOne reads one message and handles it. Only connection failures end
// the link; bad frames are answered with an Error and counted. An empty
// message is the client's, and is refused as not msgpack.
func (l *link) readOne(ctx context.Context) error {
	l.awaitWriter()
	typ, frame, err := l.conn.Read(ctx)
	if err != nil {
		return err
	}
	l.handle(typ, frame)
	return nil
}

// handle serves one frame.
func (l *link) handle(typ websocket.MessageType, frame []byte) {
	s := l.current()
	if s == nil {
		l.preHello++
		if l.preHello == FramesBeforeHello+1 {
			l.hub.counters.limited(limitFramesBeforeHello)
			l.hub.counters.refused(OtherLabel, protocol.CodeRateLimited)
			l.hub.log.Info("closing: too many frames before hello", "remote", l.remote, "limit", FramesBeforeHello)
			l.reply(requestID(typ, frame), protocol.Error{Code: protocol.CodeRateLimited,
				Message: fmt.Sprintf("more than %d frames before hello", FramesBeforeHello)})
			l.kill(websocket.StatusPolicyViolation, "too many frames before hello")
			l.hub.floodClosed(l.remote)
		}
		if l.preHello > FramesBeforeHello {
			return // closing: frames still in flight go unanswered
		}
	} else if !s.allowMessage() {
		l.hub.counters.limited(limitMessagesPerSession)
		// Answer the request by its id when the frame is a message, so the
		// caller gets rate_limited now rather than its own timeout later.
		l.refuseID(requestID(typ, frame), protocol.Error{Code: protocol.CodeRateLimited, Message: "too many messages; slow down"})
		return
	}
	if typ != websocket.MessageBinary {
		l.refuse(protocol.Error{Code: protocol.CodeBadMessage, Message: "frames must be binary msgpack"})
		return
	}
	env, err := protocol.Decode(frame)
	if err != nil {
		l.refuse(asReply(err))
		return
	}
	l.refused = 0
	if s == nil {
		if env.Type != protocol.TypeHello {
			l.hub.counters.refused(env.Type, protocol.CodeHelloRequired)
			l.reply(env.ID, asReply(fail(protocol.CodeHelloRequired, "send hello first")))
			return
		}
		if err := l.hub.hello(l, env); err != nil {
			reply := asReply(err)
			l.hub.counters.refused(protocol.TypeHello, reply.Code)
			l.reply(env.ID, reply)
			l.refusedBanned(reply.Code)
		}
		return
	}
	if err := s.handle(env); err != nil {
		reply := asReply(err)
		l.hub.counters.refused(env.Type, reply.Code)
		if reply.Code == protocol.CodeInternal {
			s.log().Error("handler failed", "type", env.Type, "err", err)
		}
		s.send(env.ID, protocol.TypeError, &reply)
	}
}

// requestID is the id of the request in frame, 0 if it has none or is not a
// message. Decoding is bounded (the frame limit, checked) and cheap next to
// the handler a refusal spares.
func requestID(typ websocket.MessageType, frame []byte) uint32 {
	if typ != websocket.MessageBinary {
		return 0
	}
	env, err := protocol.Decode(frame)
	if err != nil {
		return 0
	}
	return env.ID
}

// refuse answers a frame that was not served (over the rate, or not a
// message at all) and closes the connection once too many were refused in a
// row: a correct client never gets there, a flood does. Ordinary request
// errors (room not found, ...) are not refusals.
func (l *link) refuse(e protocol.Error) { l.refuseID(0, e) }

// refuseID is refuse answering request id (0: a frame with no usable id).
// Such frames are counted as refusals of type OtherLabel: their type was not
// read, or not trusted.
func (l *link) refuseID(id uint32, e protocol.Error) {
	l.hub.counters.refused(OtherLabel, e.Code)
	l.refused++
	if l.refused >= l.hub.cfg.MaxRefusedInARow {
		l.hub.log.Info("closing: too many refused messages", "remote", l.remote, "last_code", e.Code)
		l.kill(websocket.StatusPolicyViolation, "too many refused messages: "+e.Code)
		l.hub.floodClosed(l.remote)
		return
	}
	l.reply(id, e)
}

// reply sends an Error on this link. Before hello it has no session to
// count frames; after, it goes through the session so resume stays exact.
func (l *link) reply(id uint32, e protocol.Error) {
	if s := l.current(); s != nil {
		s.send(id, protocol.TypeError, &e)
		return
	}
	if frame, err := protocol.Encode(protocol.TypeError, id, &e); err == nil {
		l.enqueue(frame)
	}
}

// awaitWriter holds the reader while the queue is half full, until the
// writer has taken it below half. Without it a client that sent a burst
// within its limits in one write was dropped as a slow consumer: the reader
// handled the whole burst, queueing a reply each, before the writer ran
// (90 requests dropped 12 of 20 sessions, often before a reply was written).
// The reader waits for the writer, never for the client: a client that does
// not read still fills the queue (others' frames come on their own) or
// stalls a write past WriteTimeout, and is dropped as before.
func (l *link) awaitWriter() {
	l.qmu.Lock()
	if l.stopped || !l.writing || l.pendingLocked() < l.readPause() {
		l.qmu.Unlock()
		return
	}
	drained := make(chan struct{})
	l.drained = drained
	l.holds.Add(1)
	l.qmu.Unlock()
	<-drained
}

// writerBusy reports whether the writer has frames in hand: its own timer
// (WriteTimeout) is then what judges a peer that stopped reading.
func (l *link) writerBusy() bool {
	l.qmu.Lock()
	defer l.qmu.Unlock()
	return l.writing
}

// readPause is the queue length at which the reader waits for the writer.
func (l *link) readPause() int { return max(1, l.hub.cfg.QueueSize/2) }

// pendingLocked is how many queued frames count against QueueSize.
func (l *link) pendingLocked() int { return len(l.queue) - l.replaying - l.spectating }

// wakeReaderLocked lets a reader waiting in awaitWriter go on once the
// queue is below readPause or no writer drains it.
func (l *link) wakeReaderLocked() {
	if l.drained != nil && (!l.writing || l.pendingLocked() < l.readPause()) {
		close(l.drained)
		l.drained = nil
	}
}

// queued is a frame waiting for the writer.
type queued struct {
	frame     []byte
	replay    bool // part of a resume's replay (see enqueueReplay)
	spectator bool // a spectator frame (see enqueueSpectator)
}

// enqueue never blocks: it may run under Hub.mu. A full queue means the
// client cannot keep up, and waiting for it would stall everyone else.
func (l *link) enqueue(frame []byte) {
	if !l.lockQueue() {
		return
	}
	if l.pendingLocked() >= l.hub.cfg.QueueSize {
		l.qmu.Unlock()
		l.hub.log.Info("dropping slow consumer", "remote", l.remote, "queue", l.hub.cfg.QueueSize)
		l.abort()
		return
	}
	l.queue = append(l.queue, queued{frame: frame})
	l.startWriterLocked()
}

// enqueueSpectator queues a spectator frame in order with the link's other
// frames and returns how many spectator frames were dropped: a spectator
// that stopped reading must cost neither the host nor the hub, so past
// SpectatorQueue its whole spectator backlog goes (its next frame it can use
// is a keyframe anyway) rather than the connection. After a frame marked
// cut (the deltas after it were not kept) the link waits for a keyframe.
func (l *link) enqueueSpectator(frame []byte, key, cut bool) int {
	if !l.lockQueue() {
		return 1
	}
	dropped := 0
	if l.spectating >= l.hub.cfg.SpectatorQueue {
		kept := l.queue[:0]
		for _, q := range l.queue {
			if !q.spectator {
				kept = append(kept, q)
			}
		}
		clear(l.queue[len(kept):])
		l.queue = kept
		dropped, l.spectating, l.haveKey = l.spectating, 0, false
	}
	if key {
		l.haveKey = true
	}
	if !l.haveKey {
		l.qmu.Unlock()
		return dropped + 1
	}
	l.queue = append(l.queue, queued{frame: frame, spectator: true})
	l.spectating++
	if cut {
		l.haveKey = false
	}
	l.startWriterLocked()
	return dropped
}

// enqueueReplay queues a resume's frames, the resumed Welcome and everything
// the session missed, outside the QueueSize bound: counted against it, a
// seat that missed more than QueueSize frames was dropped as a slow consumer
// by its own resume and lost. The replay has its own bound (ReplayFrames,
// ReplayBytes), and frames sent after it still get the full QueueSize, so a
// client that stops reading is dropped as before.
func (l *link) enqueueReplay(frames [][]byte) {
	if !l.lockQueue() {
		return
	}
	for _, f := range frames {
		l.queue = append(l.queue, queued{frame: f, replay: true})
	}
	l.replaying += len(frames)
	l.startWriterLocked()
}

// lockQueue takes qmu if the link still takes frames, and reports whether
// it did.
func (l *link) lockQueue() bool {
	if l.dead.Load() {
		return false
	}
	l.qmu.Lock()
	if l.stopped {
		l.qmu.Unlock()
		return false
	}
	return true
}

// startWriterLocked starts a writer for the queue unless one runs, and
// releases qmu.
func (l *link) startWriterLocked() {
	start := !l.writing
	if start {
		l.writing = true
		l.wg.Add(1)
	}
	l.qmu.Unlock()
	if start {
		go l.writeQueued()
	}
}

// abort drops the connection without a close handshake: the peer is not
// reading, so a close frame would only wait for the handshake timeout. The
// session's seat is held as for any dropped connection.
func (l *link) abort() {
	if l.dead.CompareAndSwap(false, true) {
		_ = l.conn.CloseNow()
	}
}

// kill closes the connection with a status once. The close handshake runs in
// its own goroutine because it writes, and kill may be called under Hub.mu.
func (l *link) kill(code websocket.StatusCode, reason string) {
	if l.dead.CompareAndSwap(false, true) {
		go func() {
			// Give queued frames (an Error explaining the close) a moment to
			// leave before the close frame.
			l.flush(100 * time.Millisecond)
			closeBounded(l.conn, l.out.conn, code, reason)
		}()
	}
}

// closeHandshakeWait bounds the reads of a close handshake.
const closeHandshakeWait = 5 * time.Second

// closeBounded closes conn with a status, and gives the close handshake
// closeHandshakeWait to read the client's close frame. coder/websocket times
// the handshake's frame headers but not its skipping of a data frame's
// payload: a client that answered the close frame with the start of a large
// message and then nothing would hold it forever. raw is the hijacked
// connection under conn: its deadline also ends the link's own read, which
// holds coder/websocket's read lock while the client says nothing.
func closeBounded(conn *websocket.Conn, raw net.Conn, code websocket.StatusCode, reason string) {
	_ = raw.SetReadDeadline(time.Now().Add(closeHandshakeWait))
	_ = conn.Close(code, reason)
}

// flush waits until the writer has drained the queue or d passes.
func (l *link) flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		l.qmu.Lock()
		busy := l.writing
		l.qmu.Unlock()
		if !busy {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeQueued writes queued frames in order until the queue is empty, then
// ends; enqueue starts it again for the next frame.
func (l *link) writeQueued() {
	defer l.wg.Done()
	held := false // frames written since the last release wait in l.out
	for {
		l.qmu.Lock()
		if held && (len(l.queue) == 0 || l.out.heldBytes() >= maxHeldBytes) {
			l.qmu.Unlock()
			// The write timer still runs from the last frame.
			err := l.out.release()
			l.writeTimer.Stop()
			held = false
			if err != nil {
				l.writeFailed(err)
				return
			}
			continue // the queue again: frames may have come meanwhile
		}
		if len(l.queue) == 0 || l.over.Load() {
			if held {
				_ = l.out.release() // the link is over: its bytes go nowhere useful
			}
			// Before writing goes false: the next writer may start then.
			if l.writeTimer != nil {
				l.writeTimer.Stop()
				l.writeTimer = nil
			}
			l.queue, l.replaying, l.spectating, l.writing = nil, 0, 0, false
			l.wakeReaderLocked()
			l.qmu.Unlock()
			return
		}
		q := l.queue[0]
		l.queue[0] = queued{}
		l.queue = l.queue[1:]
		if q.replay {
			l.replaying--
		}
		if q.spectator {
			l.spectating--
		}
		l.wakeReaderLocked()
		frame := q.frame
		l.qmu.Unlock()
		if l.writeTimer == nil {
			l.writeTimer = time.AfterFunc(l.hub.cfg.WriteTimeout, l.writeTimedOut)
		} else {
			l.writeTimer.Reset(l.hub.cfg.WriteTimeout)
		}
		if !held {
			l.out.hold()
			held = true
		}
		// Gathered in l.out, not sent: release sends it with the frames
		// queued behind it.
		if err := l.conn.Write(context.Background(), websocket.MessageBinary, frame); err != nil {
			_ = l.out.release()
			l.writeTimer.Stop()
			l.writeFailed(err)
			return
		}
	}
}

// maxHeldBytes is how much a burst of frames gathers before it is sent.
const maxHeldBytes = 16 << 10

// writeFailed drops a link whose connection would not take a write.
func (l *link) writeFailed(err error) {
	if !l.over.Load() {
		l.hub.log.Debug("write failed", "remote", l.remote, "err", err)
	}
	l.abort()
	l.qmu.Lock()
	l.queue, l.replaying, l.spectating, l.writing = nil, 0, 0, false
	l.wakeReaderLocked()
	l.qmu.Unlock()
}

// writeTimedOut drops a peer that stopped taking frames.
func (l *link) writeTimedOut() {
	l.hub.log.Debug("write timed out", "remote", l.remote, "timeout", l.hub.cfg.WriteTimeout)
	l.abort()
}

// ping closes connections whose peer stopped answering, and times each
// ping: the round trip is the player's ping shown in its room. It runs on
// a goroutine of its own (started by the hub's sweep or a nudge) and sets
// the next one. Conn.Ping only completes while a reader is reading, which
// it always is.
func (l *link) ping() {
	l.qmu.Lock()
	if l.stopped {
		l.qmu.Unlock()
		return
	}
	l.wg.Add(1)
	l.qmu.Unlock()
	defer l.wg.Done()
	// A nudge while a ping is out: that ping answers it.
	if !l.pinging.CompareAndSwap(false, true) {
		return
	}
	defer l.pinging.Store(false)
	pctx, cancel := context.WithCancel(context.Background())
	l.qmu.Lock()
	if l.stopped {
		l.qmu.Unlock()
		cancel()
		return
	}
	l.pingCancel = cancel
	l.qmu.Unlock()
	deadline := l.pongDeadline(cancel)
	start := time.Now()
	l.pongDue.Store(true)
	err := l.conn.Ping(pctx)
	l.pongDue.Store(false)
	rtt := time.Since(start)
	deadline.Stop()
	l.qmu.Lock()
	l.pingCancel = nil
	l.qmu.Unlock()
	cancel()
	if err != nil {
		if !l.over.Load() {
			// abort, not kill: a peer that answers no ping will not
			// answer a close handshake either, and waiting for one would
			// keep its seat looking alive for the handshake timeout.
			l.hub.log.Info("dropping: ping timeout", "remote", l.remote, "err", err)
			l.abort()
		}
		return
	}
	if s := l.sessionLocked(); s != nil {
		l.hub.recordPing(s, rtt)
	}
	if !l.over.Load() {
		l.nextPing.Store(time.Now().Add(l.hub.cfg.PingInterval).UnixNano())
	}
}

// pongDeadline cancels a ping once PongTimeout passes with no pong, but
// not while the writer is busy with frames the peer has not taken yet, or
// the reader has waited for it (awaitWriter) since the last look: then the
// ping may still be queued behind those frames, or its pong unread behind
// the wait, and the writer's own timeout (WriteTimeout) is what judges the
// peer. Without this, a client that stalled for a moment in the middle of
// a burst, then read everything, was dropped for a pong the server had not
// read (found by the soak with floods, issue 24).
func (l *link) pongDeadline(cancel context.CancelFunc) *time.Timer {
	holds := l.holds.Load()
	// Armed only once t is set (Reset below): the callback resets t.
	var t *time.Timer
	t = time.AfterFunc(time.Duration(math.MaxInt64), func() {
		// Timer callbacks run one at a time: holds is this callback's.
		if now := l.holds.Load(); now != holds || l.writerBusy() {
			holds = now
			t.Reset(l.hub.cfg.PongTimeout)
			return
		}
		cancel()
	})
	t.Reset(l.hub.cfg.PongTimeout)
	return t
}

// sessionLocked reads l.session from a goroutine other than the reader.
func (l *link) sessionLocked() *Session {
	l.hub.mu.RLock()
	defer l.hub.mu.RUnlock()
	return l.session
}
