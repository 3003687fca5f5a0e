package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/signaling"
)

var testSecret = []byte("0123456789abcdef-test-secret") //nolint:gochecknoglobals // a constant

// Receiver modes.
const (
	up     = iota
	down   // the connection is closed unanswered
	busy   // 503
	hang   // the request waits until released
	refuse // 400
)

// receiver is a real webhook receiver: it checks every request's
// signature and each room's order, and records what it took.
type receiver struct {
	t    testing.TB
	srv  *httptest.Server
	mode atomic.Int32

	mu       sync.Mutex
	seen     map[string]bool     // event ids taken
	last     map[string]uint64   // room: seq of the last event taken
	got      map[string][]uint64 // room: seqs taken, in order
	bad      []string            // what was wrong
	requests int
	release  chan struct{} // closed to let hung requests go
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{t: t, seen: map[string]bool{}, last: map[string]uint64{}, got: map[string][]uint64{},
		release: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.unhang()
		r.srv.CloseClientConnections()
		r.srv.Close()
	})
	return r
}

func (r *receiver) unhang() {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests++
	release := r.release
	r.mu.Unlock()
	switch r.mode.Load() {
	case down:
		hj, _ := w.(http.Hijacker)
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
		}
		return
	case busy:
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	case hang:
		select {
		case <-release:
		case <-req.Context().Done():
			return
		}
	case refuse:
		http.Error(w, "no", http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := Verify(testSecret, req.Header.Get(SignatureHeader), body, time.Now()); err != nil {
		r.bad = append(r.bad, "signature: "+err.Error())
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var e Event
	if err := json.Unmarshal(body, &e); err != nil {
		r.bad = append(r.bad, "body: "+err.Error())
		return
	}
	if req.Header.Get("X-Hostrelay-Delivery") != e.ID || req.Header.Get("X-Hostrelay-Event") != e.Type {
		r.bad = append(r.bad, "headers do not match the body")
	}
	if r.seen[e.ID] {
		return // a retry of one taken: ignored, as a receiver should
	}
	r.seen[e.ID] = true
	if e.Seq <= r.last[e.Room] {
		r.bad = append(r.bad, fmt.Sprintf("room %s: seq %d after %d", e.Room, e.Seq, r.last[e.Room]))
	}
	r.last[e.Room] = e.Seq
	r.got[e.Room] = append(r.got[e.Room], e.Seq)
}

// taken is how many events were taken.
func (r *receiver) taken() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

func (r *receiver) check() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) > 0 {
		r.t.Errorf("receiver found: %s", strings.Join(r.bad, "; "))
	}
}

type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func newSender(t testing.TB, url string, mutate func(*Config)) *Sender {
	t.Helper()
	cfg := DefaultConfig()
	cfg.URL, cfg.Secret = url, testSecret
	cfg.MinBackoff, cfg.MaxBackoff = 10*time.Millisecond, 100*time.Millisecond
	cfg.Timeout = 2 * time.Second
	cfg.Logger = slog.New(slog.NewTextHandler(testLog{t}, nil))
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

func event(room string, typ signaling.RoomEventType) signaling.RoomEvent {
	return signaling.RoomEvent{Type: typ, Room: room, Session: "s1", Player: "p1", Host: "p1", Time: time.Now()}
}

// emit sends n events to each of rooms rooms, interleaved.
func emit(s *Sender, rooms, n int) {
	for i := range n {
		for r := range rooms {
			typ := signaling.PlayerJoined
			if i == 0 {
				typ = signaling.RoomCreated
			}
			s.OnRoomEvent(event(fmt.Sprintf("R%03d", r), typ))
		}
	}
}

func waitStats(t *testing.T, s *Sender, what string, cond func(Stats) bool) Stats {
	t.Helper()
	var st Stats
	testwait.For(t, what, func() bool { st = s.Stats(); return cond(st) })
	return st
}

// Events reach a real receiver signed and in order per room, all of them.
func TestDeliveredSignedInOrder(t *testing.T) {
	rcv := newReceiver(t)
	s := newSender(t, rcv.srv.URL, nil)
	emit(s, 20, 10)
	st := waitStats(t, s, "200 delivered", func(st Stats) bool { return st.Delivered == 200 })
	rcv.check()
	if rcv.taken() != 200 || st.Queued != 0 || st.Bytes != 0 || st.Retried != 0 {
		t.Errorf("taken %d, stats %+v", rcv.taken(), st)
	}
	for room, seqs := range rcv.got {
		if len(seqs) != 10 || seqs[0] != 1 || seqs[9] != 10 {
			t.Errorf("room %s: seqs %v", room, seqs)
		}
	}
}

// A receiver that is down (connections closed, then 503) for a while: the
// events wait, are retried with backoff and all arrive in order once it is
// back; none is dropped.
func TestReceiverDownThenUp(t *testing.T) {
	rcv := newReceiver(t)
	rcv.mode.Store(down)
	s := newSender(t, rcv.srv.URL, nil)
	emit(s, 10, 5)
	waitStats(t, s, "retries", func(st Stats) bool { return st.Retried >= 10 })
	rcv.mode.Store(busy)
	emit(s, 10, 5)
	time.Sleep(300 * time.Millisecond)
	if st := s.Stats(); st.Delivered != 0 || st.Queued != 100 {
		t.Fatalf("while down: %+v", st)
	}
	rcv.mode.Store(up)
	st := waitStats(t, s, "100 delivered", func(st Stats) bool { return st.Delivered == 100 })
	rcv.check()
	for room, seqs := range rcv.got {
		if len(seqs) != 10 {
			t.Errorf("room %s: seqs %v", room, seqs)
		}
	}
	for r, n := range st.Dropped {
		if n != 0 {
			t.Errorf("dropped %d (%s)", n, r)
		}
	}
	t.Logf("stats %+v", st)
}

// The queue takes QueueEvents events (the one in flight included) and
// drops the next, counted, leaving a gap in the room's seq the receiver can
// see.
func TestQueueEventsAtAndPastLimit(t *testing.T) {
	rcv := newReceiver(t)
	rcv.mode.Store(hang)
	s := newSender(t, rcv.srv.URL, func(c *Config) { c.QueueEvents, c.Workers = 10, 1 })
	for range 10 {
		s.OnRoomEvent(event("AAAA", signaling.PlayerJoined))
	}
	if st := s.Stats(); st.Queued != 10 || st.Dropped[DropQueueFull] != 0 {
		t.Fatalf("at the limit: %+v", st)
	}
	s.OnRoomEvent(event("AAAA", signaling.PlayerJoined)) // seq 11
	if st := s.Stats(); st.Queued != 10 || st.Dropped[DropQueueFull] != 1 {
		t.Fatalf("past the limit: %+v", st)
	}
	rcv.mode.Store(up)
	rcv.unhang()
	waitStats(t, s, "10 delivered", func(st Stats) bool { return st.Delivered == 10 && st.Queued == 0 })
	s.OnRoomEvent(event("AAAA", signaling.PlayerLeft)) // seq 12
	waitStats(t, s, "11 delivered", func(st Stats) bool { return st.Delivered == 11 })
	rcv.check()
	if got := fmt.Sprint(rcv.got["AAAA"]); got != "[1 2 3 4 5 6 7 8 9 10 12]" {
		t.Errorf("seqs %s: want 1-10 and 12 (11 dropped)", got)
	}
}

// QueueBytes bounds the bytes queued the same way.
func TestQueueBytesAtAndPastLimit(t *testing.T) {
	rcv := newReceiver(t)
	rcv.mode.Store(hang)
	e := event("BBBB", signaling.PlayerJoined)
	e.Time = e.Time.Truncate(time.Second) // so every event's JSON has one length
	probe := newSender(t, rcv.srv.URL, nil)
	probe.OnRoomEvent(e)
	size := probe.Stats().Bytes // every event below has this size
	s := newSender(t, rcv.srv.URL, func(c *Config) { c.QueueBytes, c.Workers = 3*size, 1 })
	for range 3 {
		s.OnRoomEvent(e)
	}
	if st := s.Stats(); st.Queued != 3 || st.Bytes != 3*size || st.Dropped[DropQueueFull] != 0 {
		t.Fatalf("at the limit (%d bytes): %+v", 3*size, st)
	}
	s.OnRoomEvent(e)
	if st := s.Stats(); st.Queued != 3 || st.Dropped[DropQueueFull] != 1 {
		t.Fatalf("past the limit: %+v", st)
	}
}

// Rooms do not wait for each other: a room whose event the receiver holds
// does not hold up another room's.
func TestRoomsIndependent(t *testing.T) {
	var held atomic.Bool
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"room":"SLOW"`) {
			held.Store(true)
			<-release
		}
	}))
	defer srv.Close()
	defer close(release)
	s := newSender(t, srv.URL, func(c *Config) { c.Workers = 2 })
	s.OnRoomEvent(event("SLOW", signaling.RoomCreated))
	s.OnRoomEvent(event("SLOW", signaling.PlayerJoined))
	testwait.For(t, "the slow room held", held.Load)
	emit(s, 5, 4)
	st := waitStats(t, s, "the other rooms' 20 delivered", func(st Stats) bool { return st.Delivered == 20 })
	if st.Queued != 2 {
		t.Errorf("queued %d, want SLOW's 2", st.Queued)
	}
}

// An event still failing at MaxAge is dropped (too_old) and its room's next
// event goes on; a 4xx answer drops the event at once (rejected).
func TestDroppedTooOldAndRejected(t *testing.T) {
	rcv := newReceiver(t)
	rcv.mode.Store(busy)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	s := newSender(t, rcv.srv.URL, func(c *Config) { c.MaxAge, c.Now = time.Minute, clock })
	e := event("OLDR", signaling.RoomCreated)
	e.Time = clock()
	s.OnRoomEvent(e)
	waitStats(t, s, "retries", func(st Stats) bool { return st.Retried >= 2 })
	now.Add(int64(time.Minute + time.Second))
	rcv.mode.Store(up)
	e = event("OLDR", signaling.PlayerJoined)
	e.Time = clock()
	s.OnRoomEvent(e)
	st := waitStats(t, s, "one too old, one delivered", func(st Stats) bool { return st.Delivered == 1 })
	if st.Dropped[DropTooOld] != 1 {
		t.Errorf("stats %+v", st)
	}
	rcv.mode.Store(refuse)
	s.OnRoomEvent(e)
	s.OnRoomEvent(e)
	st = waitStats(t, s, "two rejected", func(st Stats) bool { return st.Dropped[DropRejected] == 2 })
	if st.Queued != 0 {
		t.Errorf("stats %+v", st)
	}
	rcv.check()
}

// A receiver that hangs never holds up OnRoomEvent, which the lobby calls
// under its lock: 100,000 events (most dropped, queue_full) are taken
// within a generous bound while every worker waits on the receiver.
func TestHungReceiverNeverBlocks(t *testing.T) {
	rcv := newReceiver(t)
	rcv.mode.Store(hang)
	s := newSender(t, rcv.srv.URL, func(c *Config) { c.QueueEvents = 1000 })
	emit(s, 10, 1) // the workers are now all in a request
	start := time.Now()
	emit(s, 100, 1000)
	d := time.Since(start)
	st := s.Stats()
	if d > 5*time.Second || st.Queued != 1000 || st.Dropped[DropQueueFull] != 100000+10-1000 {
		t.Errorf("100,000 events took %v; stats %+v", d, st)
	}
	t.Logf("100,000 events queued or dropped in %v (%v each) with the receiver hung", d, d/100000)
}

// Close delivers what is queued, retrying at once a room in backoff; at its
// deadline it drops the rest (shutdown) and says so.
func TestCloseFlushes(t *testing.T) {
	rcv := newReceiver(t)
	rcv.mode.Store(busy)
	s := newSender(t, rcv.srv.URL, func(c *Config) { c.MinBackoff, c.MaxBackoff = 50*time.Millisecond, time.Hour })
	emit(s, 3, 3)
	waitStats(t, s, "in backoff", func(st Stats) bool { return st.Retried >= 6 })
	go func() { time.Sleep(100 * time.Millisecond); rcv.mode.Store(up) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Delivered != 9 || time.Since(start) > 2*time.Second {
		t.Errorf("after %v: %+v", time.Since(start), st)
	}
	s.OnRoomEvent(event("LATE", signaling.RoomCreated))
	if st := s.Stats(); st.Dropped[DropShutdown] != 1 {
		t.Errorf("an event after Close: %+v", st)
	}

	rcv.mode.Store(down)
	s2 := newSender(t, rcv.srv.URL, nil)
	emit(s2, 2, 2)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if err := s2.Close(ctx2); err == nil || !strings.Contains(err.Error(), "4 events not delivered") {
		t.Errorf("Close with the receiver down: %v", err)
	}
	if st := s2.Stats(); st.Dropped[DropShutdown] != 4 || st.Queued != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestConfigValidate(t *testing.T) {
	cfg := DefaultConfig()
	if _, err := New(cfg); err == nil {
		t.Error("no URL, no secret: want an error")
	}
	cfg.URL, cfg.Secret = "http://127.0.0.1:1/", []byte("short")
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "16 bytes") {
		t.Errorf("short secret: %v", err)
	}
}

// The first delivery that succeeds after an outage ends every room's
// backoff: with a wait grown to an hour, the rooms still drain at once.
func TestRecoveryEndsBackoff(t *testing.T) {
	rcv := newReceiver(t)
	rcv.mode.Store(busy)
	s := newSender(t, rcv.srv.URL, func(c *Config) { c.MinBackoff, c.MaxBackoff = 20*time.Millisecond, time.Hour })
	emit(s, 5, 2)
	waitStats(t, s, "backoff grown", func(st Stats) bool { return st.Retried >= 5*5 })
	rcv.mode.Store(up)
	s.OnRoomEvent(event("NEWR", signaling.RoomCreated)) // not in backoff: goes at once
	start := time.Now()
	waitStats(t, s, "all 11 delivered", func(st Stats) bool { return st.Delivered == 11 })
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("drained in %v", d)
	}
	rcv.check()
}

// BenchmarkOnRoomEvent is what the lobby pays, under its lock, for one
// event queued (the receiver hung, the queue never full).
func BenchmarkOnRoomEvent(b *testing.B) {
	rcv := newReceiver(b)
	rcv.mode.Store(hang)
	s := newSender(b, rcv.srv.URL, func(c *Config) { c.QueueEvents, c.QueueBytes = 1<<30, 1<<40 })
	e := event("BENCH1", signaling.PlayerJoined)
	b.ReportAllocs()
	for b.Loop() {
		s.OnRoomEvent(e)
	}
}
