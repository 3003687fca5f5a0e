package webhook

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostrelay/hostrelay/signaling"
)

// Config configures a Sender. Start from DefaultConfig and set URL and
// Secret.
type Config struct {
	URL    string // where events are POSTed
	Secret []byte // signs each request (SignatureHeader); at least 16 bytes
	// QueueEvents and QueueBytes bound the events waiting (the one in
	// flight for each room included); past either an event is dropped
	// (queue_full). They are what a receiver that is down can lose at most
	// beyond: everything queued up to them is delivered once it is back.
	QueueEvents int
	QueueBytes  int
	// MaxAge is how long an event is retried; older, it is dropped
	// (too_old).
	MaxAge time.Duration
	// Timeout bounds one delivery attempt.
	Timeout time.Duration
	// A room's next attempt after a failure waits MinBackoff, doubling per
	// failure up to MaxBackoff, each with up to half of it taken off at
	// random (so rooms do not retry in step). The first delivery that
	// succeeds after failures ends every room's wait.
	MinBackoff, MaxBackoff time.Duration
	// Workers is how many deliveries may be in flight at once, each for a
	// different room.
	Workers int

	// Client sends the requests; nil: one of the sender's own.
	Client *http.Client
	// Logger receives the sender's logs; nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// DefaultConfig holds every default.
func DefaultConfig() Config {
	return Config{
		// About 200 bytes an event.
		QueueEvents: 10000,
		QueueBytes:  4 << 20,
		// Past the receiver's own replay window (MaxSignatureAge): a
		// delivery is signed when sent, not when the event happened.
		MaxAge:     10 * time.Minute,
		Timeout:    5 * time.Second,
		MinBackoff: 250 * time.Millisecond,
		MaxBackoff: 10 * time.Second,
		Workers:    4,
	}
}

func (c Config) validate() error {
	var errs []error
	if c.URL == "" {
		errs = append(errs, errors.New("URL is required"))
	}
	if len(c.Secret) < 16 {
		errs = append(errs, errors.New("webhook: the secret must be at least 16 bytes"))
	}
	if c.QueueEvents < 1 || c.QueueBytes < 1 || c.Workers < 1 {
		errs = append(errs, errors.New("QueueEvents, QueueBytes and Workers must be at least 1"))
	}
	if c.MaxAge <= 0 || c.Timeout <= 0 || c.MinBackoff <= 0 || c.MaxBackoff < c.MinBackoff {
		errs = append(errs, errors.New("MaxAge, Timeout and MinBackoff must be positive, MaxBackoff at least MinBackoff"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("webhook: config: %w", err)
	}
	return nil
}

// Event is the JSON body of one webhook request.
type Event struct {
	// ID is unique per event: a receiver that sees one twice (a retry of a
	// delivery whose answer was lost) ignores the second.
	ID   string `json:"id"`
	Type string `json:"type"` // room.created, player.joined, ... (signaling.RoomEventType)
	Room string `json:"room"` // the room code
	// Seq counts a room's events from 1, dropped ones included: a gap says
	// events were dropped. A room code may be reused after room.closed;
	// its seq may then start from 1 again.
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"` // when it happened
	Session string    `json:"session,omitempty"`
	Player  string    `json:"player,omitempty"`
	Host    string    `json:"host,omitempty"`
	Reason  string    `json:"reason,omitempty"`
}

// Drop reasons, the metrics' labels.
const (
	DropQueueFull = "queue_full" // over QueueEvents or QueueBytes
	DropTooOld    = "too_old"    // still failing at MaxAge
	DropRejected  = "rejected"   // the receiver answered 4xx (but 408, 429): retrying would not help
	DropShutdown  = "shutdown"   // still queued when Close's deadline came
)

var dropReasons = [...]string{DropQueueFull, DropTooOld, DropRejected, DropShutdown} //nolint:gochecknoglobals // read-only

// Indexes of Sender.dropped, in dropReasons' order.
const (
	queueFull = iota
	tooOld
	refused
	shutdown
)

// Stats are the sender's figures.
type Stats struct {
	Delivered uint64            // events the receiver took (2xx)
	Retried   uint64            // failed attempts that were tried again
	Dropped   map[string]uint64 // events lost, by reason (Drop*)
	Queued    int               // events waiting now, in flight included
	Bytes     int               // their bytes
}

// Sender delivers room events to one URL: in order per room (one delivery
// in flight per room, rooms independent), retried with backoff, bounded in
// memory. It is a signaling.RoomEvents: OnRoomEvent only queues.
type Sender struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client
	prefix string // of event ids, random per sender

	ctx    context.Context // ends in-flight attempts at Close's deadline
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards what follows. It is never held across I/O: OnRoomEvent,
	// called under the hub's lock, waits only for queue operations.
	mu       sync.Mutex
	work     *sync.Cond // signalled when ready gains a room or stopping is set
	rooms    map[string]*roomQueue
	ready    []*roomQueue // rooms with an event to send and none in flight, oldest first
	events   int
	bytes    int
	nextID   uint64
	closed   bool          // Close was called: events are no longer taken
	stopping bool          // workers return
	drained  chan struct{} // closed when events reach 0 after Close
	failing  bool          // the last attempt failed (logged once per spell)
	full     bool          // dropping for queue_full (logged once per spell)

	delivered, retried atomic.Uint64
	dropped            [len(dropReasons)]atomic.Uint64
}

// roomQueue is one room's events. Guarded by Sender.mu.
type roomQueue struct {
	code    string
	seq     uint64
	pending []*item
	// busy: on the ready list, in flight or waiting for a retry; a room
	// that is not busy has nothing pending.
	busy    bool
	attempt int
	retry   *time.Timer
	closed  bool // room.closed was queued: forget the room once empty
}

type item struct {
	body []byte
	at   time.Time
	typ  string
	id   string
}

// New validates cfg and starts the sender's workers.
func New(cfg Config) (*Sender, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		cfg.Client = newClient(cfg.Timeout, cfg.Workers)
	}
	var b [4]byte
	_, _ = crand.Read(b[:])
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sender{cfg: cfg, log: cfg.Logger.With("component", "webhook"), client: cfg.Client,
		prefix: hex.EncodeToString(b[:]) + "-", ctx: ctx, cancel: cancel, rooms: make(map[string]*roomQueue)}
	s.work = sync.NewCond(&s.mu)
	for range cfg.Workers {
		s.wg.Go(s.worker)
	}
	return s, nil
}

// newClient is an HTTP client that follows no redirect: a signed request
// is for the URL configured, and a redirect means that URL is wrong.
func newClient(timeout time.Duration, conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // the standard library's
	t.MaxIdleConnsPerHost = conns
	return &http.Client{Timeout: timeout, Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// OnRoomEvent queues e, or drops it when the queue is full. It never waits
// for the network (signaling.RoomEvents).
func (s *Sender) OnRoomEvent(e signaling.RoomEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.dropped[shutdown].Add(1)
		return
	}
	q := s.rooms[e.Room]
	if q == nil {
		q = &roomQueue{code: e.Room}
		s.rooms[e.Room] = q
	}
	q.seq++
	q.closed = e.Type == signaling.RoomClosed // a code reused before its queue emptied: not closed
	if s.events+1 > s.cfg.QueueEvents {
		s.dropLocked(q)
		return
	}
	s.nextID++
	ev := Event{ID: s.prefix + strconv.FormatUint(s.nextID, 10), Type: string(e.Type), Room: e.Room, Seq: q.seq,
		Time: e.Time.UTC(), Session: e.Session, Player: e.Player, Host: e.Host, Reason: e.Reason}
	body, err := json.Marshal(ev)
	if err != nil { // cannot happen: strings, numbers, a time
		s.log.Error("encode event", "err", err)
		return
	}
	if s.bytes+len(body) > s.cfg.QueueBytes {
		s.dropLocked(q)
		return
	}
	q.pending = append(q.pending, &item{body: body, at: e.Time, typ: ev.Type, id: ev.ID})
	s.events++
	s.bytes += len(body)
	if !q.busy {
		s.readyLocked(q)
	}
}

// dropLocked drops an event of q for a full queue.
func (s *Sender) dropLocked(q *roomQueue) {
	s.dropped[queueFull].Add(1)
	if !s.full {
		s.full = true
		s.log.Warn("webhook queue full: dropping events until it drains", "queued", s.events, "bytes", s.bytes)
	}
	s.forgetLocked(q)
}

// readyLocked puts q on the ready list and wakes a worker.
func (s *Sender) readyLocked(q *roomQueue) {
	q.busy = true
	s.ready = append(s.ready, q)
	s.work.Signal()
}

// forgetLocked drops a closed room's queue once nothing of it is left.
func (s *Sender) forgetLocked(q *roomQueue) {
	if q.closed && !q.busy && len(q.pending) == 0 && s.rooms[q.code] == q {
		delete(s.rooms, q.code)
	}
}

// popLocked removes q's head event, sent or dropped.
func (s *Sender) popLocked(q *roomQueue) {
	s.events--
	s.bytes -= len(q.pending[0].body)
	q.pending[0] = nil
	q.pending = q.pending[1:]
	q.attempt = 0
	if s.full && s.events <= s.cfg.QueueEvents/2 {
		s.full = false
	}
	if s.drained != nil && s.events == 0 {
		close(s.drained)
		s.drained = nil
	}
}

func (s *Sender) worker() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.ready) == 0 && !s.stopping {
			s.work.Wait()
		}
		if s.stopping {
			return
		}
		q := s.ready[0]
		s.ready[0] = nil
		s.ready = s.ready[1:]
		// An event that waited past MaxAge (behind failing ones) goes now.
		for len(q.pending) > 0 && s.cfg.Now().Sub(q.pending[0].at) > s.cfg.MaxAge {
			s.dropped[tooOld].Add(1)
			s.popLocked(q)
		}
		if len(q.pending) == 0 {
			q.busy = false
			s.forgetLocked(q)
			continue
		}
		it := q.pending[0]
		s.mu.Unlock()
		res := s.post(it)
		s.mu.Lock()
		s.settleLocked(q, res)
	}
}

// outcome is one attempt's result.
type outcome int

const (
	delivered outcome = iota
	retry
	rejected
)

// settleLocked acts on an attempt's outcome for q's head event.
func (s *Sender) settleLocked(q *roomQueue, res outcome) {
	switch res {
	case delivered:
		s.delivered.Add(1)
		if s.failing {
			s.failing = false
			s.log.Info("webhook receiver answering again", "queued", s.events)
			s.retryNowLocked()
		}
		s.popLocked(q)
	case rejected:
		s.dropped[refused].Add(1)
		s.popLocked(q)
	case retry:
		if s.stopping {
			return
		}
		s.retried.Add(1)
		q.attempt++
		wait := s.backoff(q.attempt)
		if s.closed {
			wait = s.cfg.MinBackoff // flushing: Close's deadline bounds it
		}
		q.retry = time.AfterFunc(wait, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			q.retry = nil
			if !s.stopping {
				s.ready = append(s.ready, q)
				s.work.Signal()
			}
		})
		return
	}
	if len(q.pending) > 0 {
		s.ready = append(s.ready, q) // behind the rooms already waiting
		s.work.Signal()
		return
	}
	q.busy = false
	s.forgetLocked(q)
}

// retryNowLocked ends every room's backoff: the receiver answers again
// (or Close is flushing), so none waits out a wait grown while it was down.
func (s *Sender) retryNowLocked() {
	for _, q := range s.rooms {
		if q.retry != nil && q.retry.Stop() {
			q.retry = nil
			s.ready = append(s.ready, q)
		}
	}
	s.work.Broadcast()
}

// backoff is the wait before attempt n+1 of an event.
func (s *Sender) backoff(n int) time.Duration {
	d := s.cfg.MaxBackoff
	if n < 30 {
		d = min(d, s.cfg.MinBackoff<<(n-1))
	}
	return d - time.Duration(rand.Int64N(int64(d/2)+1)) //nolint:gosec // jitter, not a secret
}

// post makes one delivery attempt.
func (s *Sender) post(it *item) outcome {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(it.body))
	if err != nil {
		s.log.Error("webhook request", "err", err)
		return rejected
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hostrelay-webhook")
	req.Header.Set("X-Hostrelay-Event", it.typ)
	req.Header.Set("X-Hostrelay-Delivery", it.id)
	req.Header.Set(SignatureHeader, Sign(s.cfg.Secret, s.cfg.Now(), it.body))
	resp, err := s.client.Do(req)
	if err != nil {
		s.noteFailure("err", err)
		return retry
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // so the connection is kept
	_ = resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return delivered
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		s.noteFailure("status", c)
		return retry
	default:
		s.log.Warn("webhook receiver refused an event: dropped", "status", c, "type", it.typ, "id", it.id)
		return rejected
	}
}

// noteFailure logs the start of a spell of failures, once.
func (s *Sender) noteFailure(attrs ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failing && !s.stopping {
		s.failing = true
		s.log.Warn("webhook receiver failing: retrying with backoff", append(attrs, "url", s.cfg.URL, "queued", s.events)...)
	}
}

// Stats returns the sender's figures.
func (s *Sender) Stats() Stats {
	st := Stats{Delivered: s.delivered.Load(), Retried: s.retried.Load(), Dropped: make(map[string]uint64, len(dropReasons))}
	for i, r := range dropReasons {
		st.Dropped[r] = s.dropped[i].Load()
	}
	s.mu.Lock()
	st.Queued, st.Bytes = s.events, s.bytes
	s.mu.Unlock()
	return st
}

// Close takes no more events and delivers those queued until ctx ends; what
// is left then is dropped (shutdown) and reported in the error. Rooms in
// backoff are retried at once, then every MinBackoff.
func (s *Sender) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	drained := make(chan struct{})
	if s.events == 0 {
		close(drained)
	} else {
		s.drained = drained
	}
	s.retryNowLocked()
	s.mu.Unlock()

	select {
	case <-drained:
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.stopping = true
	s.drained = nil
	for _, q := range s.rooms {
		if q.retry != nil {
			q.retry.Stop()
		}
	}
	s.work.Broadcast()
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()

	s.mu.Lock()
	left := s.events
	s.dropped[shutdown].Add(uint64(left)) //nolint:gosec // a count
	s.events, s.bytes, s.ready, s.rooms = 0, 0, nil, map[string]*roomQueue{}
	s.mu.Unlock()
	if left > 0 {
		return fmt.Errorf("webhook: close: %d events not delivered: %w", left, ctx.Err())
	}
	return nil
}
