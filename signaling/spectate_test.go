package signaling

import (
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

// fakeClock is the hub's Now and AfterFunc, advanced by the test: the
// spectator delay is then exact, with no sleep and no timing assertion.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) interface{ Stop() bool } {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Advance moves the clock and runs every timer now due, in order, on the
// caller's goroutine (as often as they re-arm within the new time).
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due *fakeTimer
		for _, t := range c.timers {
			if !t.stopped && !t.at.After(c.now) && (due == nil || t.at.Before(due.at)) {
				due = t
			}
		}
		if due != nil {
			due.stopped = true
		}
		c.mu.Unlock()
		if due == nil {
			return
		}
		due.f()
	}
}

// spectatorHub is a hub on a fake clock with the per-IP limits out of the
// way (every client here is 127.0.0.1).
func spectatorHub(t testing.TB, mutate func(*Config)) (*Hub, string, *fakeClock) {
	clock := newFakeClock()
	h, url := testHub(t, func(c *Config) {
		c.Now, c.AfterFunc = clock.Now, clock.AfterFunc
		c.MaxConnsPerIP, c.JoinsPerMinute = 1000, 1000
		if mutate != nil {
			mutate(c)
		}
	})
	return h, url, clock
}

func (c *client) spectate(code string) protocol.Spectating {
	c.t.Helper()
	c.request(protocol.TypeSpectate, &protocol.Spectate{Code: code})
	var sp protocol.Spectating
	c.expect(protocol.TypeSpectating, &sp)
	return sp
}

// frame sends a spectator frame carrying n (and OK-acknowledged, so the hub
// has taken it when this returns).
func (c *client) frame(n uint32, key bool, size int) {
	c.t.Helper()
	data := make([]byte, max(size, 4))
	binary.BigEndian.PutUint32(data, n)
	c.request(protocol.TypeSpectatorFrame, &protocol.SpectatorFrame{Key: key, Data: data})
	c.expect(protocol.TypeOK, &protocol.OK{})
}

// expectFrame reads the next frame, a spectator frame carrying n.
func (c *client) expectFrame(n uint32, key bool) {
	c.t.Helper()
	var f protocol.SpectatorFrame
	c.expect(protocol.TypeSpectatorFrame, &f)
	if got := binary.BigEndian.Uint32(f.Data); got != n || f.Key != key {
		c.t.Fatalf("spectator frame %d (key %v), want %d (key %v)", got, f.Key, n, key)
	}
}

// expectSpectators reads the next frame, a roomUpdated with n spectators.
func (c *client) expectSpectators(n int) {
	c.t.Helper()
	var u protocol.RoomUpdated
	c.expect(protocol.TypeRoomUpdated, &u)
	if u.Room.Spectators != n {
		c.t.Fatalf("roomUpdated with %d spectators, want %d", u.Room.Spectators, n)
	}
}

// nothingQueued asks the hub for a reply: frames are written in order, so
// an OK read next proves no spectator frame was queued before it.
func (c *client) nothingQueued() {
	c.t.Helper()
	c.request(protocol.TypeUnwatchRooms, nil)
	c.expect(protocol.TypeOK, &protocol.OK{})
}

func TestSpectatorsSeeFramesAfterTheDelay(t *testing.T) {
	const delay = 2 * time.Second
	h, url, clock := spectatorHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	viewers := make([]*client, 50)
	for i := range viewers {
		viewers[i] = connect(t, url, "")
		if sp := viewers[i].spectate(code); sp.DelayMs != 2000 || sp.Room.Players != 1 {
			t.Fatalf("spectating %+v", sp)
		}
	}
	clock.Advance(protocol.SpectatorCountInterval)
	host.expectSpectators(50)
	for n := range uint32(10) {
		host.frame(n, n%5 == 0, 100)
		clock.Advance(100 * time.Millisecond)
	}
	// Frame 0 was taken at +0 and is due at +2s; the clock is at +1s.
	clock.Advance(delay - time.Second - time.Nanosecond)
	for _, v := range viewers {
		v.nothingQueued()
	}
	clock.Advance(time.Nanosecond)
	for _, v := range viewers {
		v.expectFrame(0, true)
		v.nothingQueued()
	}
	clock.Advance(time.Second)
	for _, v := range viewers {
		for n := range uint32(10) {
			if n > 0 {
				v.expectFrame(n, n%5 == 0)
			}
		}
		v.nothingQueued()
	}
	m := h.Metrics()
	if m.Spectators != 50 || m.SpectatorFramesIn != 10 || m.SpectatorFramesOut != 500 || m.SpectatorFramesDropped != 0 {
		t.Fatalf("metrics: %d spectators, frames in %d, out %d, dropped %d", m.Spectators, m.SpectatorFramesIn,
			m.SpectatorFramesOut, m.SpectatorFramesDropped)
	}
}

// countingConn counts the bytes a client writes: the host's upload.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func countingClient(n *atomic.Int64) *http.Client {
	d := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, n}, nil
	}}}
}

// hostUpload runs one game of frames watched by spectators and returns the
// bytes the host wrote from the upgrade on.
func hostUpload(t *testing.T, url string, clock *fakeClock, spectators int) int64 {
	var sent atomic.Int64
	host := dialWith(t, url, lobbytest.Options{HTTPClient: countingClient(&sent)})
	host.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada"})
	host.expect(protocol.TypeWelcome, &protocol.Welcome{})
	code := host.create("Final", 2, "").Room.Code
	viewers := make([]*client, spectators)
	for i := range viewers {
		viewers[i] = connect(t, url, "")
		viewers[i].spectate(code)
	}
	if spectators > 0 {
		clock.Advance(protocol.SpectatorCountInterval)
		host.expectSpectators(spectators)
	}
	for n := range uint32(40) {
		host.frame(n, n%10 == 0, 1000)
		clock.Advance(100 * time.Millisecond)
	}
	clock.Advance(2 * time.Second)
	for _, v := range viewers {
		for n := range uint32(40) {
			v.expectFrame(n, n%10 == 0)
		}
	}
	host.request(protocol.TypeLeaveRoom, nil)
	host.expect(protocol.TypeOK, &protocol.OK{})
	for _, v := range viewers {
		v.expect(protocol.TypeSpectateEnded, &protocol.SpectateEnded{})
	}
	return sent.Load()
}

func TestSpectatorsCostTheHostNoUpload(t *testing.T) {
	_, url, clock := spectatorHub(t, nil)
	alone := hostUpload(t, url, clock, 0)
	watched := hostUpload(t, url, clock, 50)
	t.Logf("host upload: %d bytes with no spectator, %d with 50", alone, watched)
	if d := watched - alone; d*10 > alone || -d*10 > alone {
		t.Fatalf("host upload %d bytes with 50 spectators, %d with none: more than 10%% apart", watched, alone)
	}
}

func TestSpectatorJoiningMidGameGetsTheLastKeyframe(t *testing.T) {
	_, url, clock := spectatorHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	// Keyframes 0 and 3, deltas between; all released; 5 and 6 still held.
	for n := range uint32(5) {
		host.frame(n, n%3 == 0, 100)
	}
	clock.Advance(2 * time.Second)
	host.frame(5, false, 100)
	host.frame(6, true, 100)
	late := connect(t, url, "")
	late.spectate(code)
	// The game as of the delay: the last released keyframe and its deltas.
	late.expectFrame(3, true)
	late.expectFrame(4, false)
	late.nothingQueued()
	// Then the stream, each frame exactly at its delay.
	clock.Advance(2 * time.Second)
	late.expectFrame(5, false)
	late.expectFrame(6, true)
	late.nothingQueued()
}

func TestSpectatorHistoryWithoutKeyframeSendsNothing(t *testing.T) {
	_, url, clock := spectatorHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	host.frame(1, false, 100) // a delta with no keyframe before it is useless
	clock.Advance(2 * time.Second)
	late := connect(t, url, "")
	late.spectate(code)
	late.nothingQueued()
	host.frame(2, false, 100)
	host.frame(3, true, 100)
	clock.Advance(2 * time.Second)
	// A new spectator's link waits for a keyframe.
	late.expectFrame(3, true)
	late.nothingQueued()
}

func TestSlowSpectatorHoldsNobodyBack(t *testing.T) {
	// 13 MB for each spectator, well past what loopback's socket buffers
	// take from a reader that stopped.
	const frames, size, step = 800, protocol.MaxSpectatorData, 2 * time.Millisecond
	h, url, clock := spectatorHub(t, func(c *Config) {
		c.SpectatorQueue = 8
		c.SpectatorFrameBurst = frames
		c.SpectatorBufferBytes = 16 << 20
		c.MessagesPerSecond, c.MessageBurst = 10000, 10000
	})
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	slow := connect(t, url, "") // never reads again
	slow.spectate(code)
	fast := connect(t, url, "")
	fast.spectate(code)
	clock.Advance(protocol.SpectatorCountInterval)
	host.expectSpectators(2)
	for n := range uint32(frames) {
		host.frame(n, true, size)
		clock.Advance(step)
	}
	// All taken within the delay; now one frame is released per step, and
	// the fast spectator gets every one.
	clock.Advance(2*time.Second - frames*step)
	for n := range uint32(frames) {
		fast.expectFrame(n, true)
		clock.Advance(step)
	}
	// The host is answered at once: its session never waited.
	host.nothingQueued()
	if m := h.Metrics(); m.SpectatorFramesDropped == 0 || m.SpectatorFramesDropped > frames {
		t.Fatalf("dropped %d frames, want some of the slow spectator's %d", m.SpectatorFramesDropped, frames)
	}
	t.Logf("dropped %d of the slow spectator's %d frames", h.Metrics().SpectatorFramesDropped, frames)
}

func TestSpectatorLimits(t *testing.T) {
	_, url, clock := spectatorHub(t, func(c *Config) {
		c.SpectatorsPerRoom = 3
		c.SpectatorFrameBytes = 1000
		c.SpectatorFramesPerSecond, c.SpectatorFrameBurst = 5, 5
	})
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	for range 3 {
		connect(t, url, "").spectate(code)
	}
	fourth := connect(t, url, "")
	fourth.request(protocol.TypeSpectate, &protocol.Spectate{Code: code})
	fourth.expectError(protocol.CodeRoomFull)

	host.frame(0, true, 1000) // at the frame limit
	host.request(protocol.TypeSpectatorFrame, &protocol.SpectatorFrame{Data: make([]byte, 1001)})
	host.expectError(protocol.CodeInvalidArgument)
	for n := range uint32(4) { // the burst of 5, with frame 0
		host.frame(n+1, false, 10)
	}
	host.request(protocol.TypeSpectatorFrame, &protocol.SpectatorFrame{Data: []byte{1}})
	host.expectError(protocol.CodeRateLimited)
	clock.Advance(200 * time.Millisecond) // one frame's worth at 5/s
	host.frame(5, false, 10)
	host.request(protocol.TypeSpectatorFrame, &protocol.SpectatorFrame{Data: []byte{1}})
	host.expectError(protocol.CodeRateLimited)
}

func TestSpectatorBufferBound(t *testing.T) {
	_, url, _ := spectatorHub(t, func(c *Config) {
		c.SpectatorBufferBytes = 1000
		c.SpectatorFrameBurst = 100
	})
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	// Watched: a room nobody watches holds no delay's worth to bound.
	connect(t, url, "").spectate(code)
	frame, err := protocol.Encode(protocol.TypeSpectatorFrame, 0, &protocol.SpectatorFrame{Data: make([]byte, 100)})
	if err != nil {
		t.Fatal(err)
	}
	fit := 1000 / len(frame)
	for n := range uint32(fit) {
		host.frame(n, false, 100)
	}
	host.request(protocol.TypeSpectatorFrame, &protocol.SpectatorFrame{Data: make([]byte, 100)})
	host.expectError(protocol.CodeRateLimited)
}

func TestSpectatorsAreNotPlayers(t *testing.T) {
	h, url, _ := spectatorHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	v := connect(t, url, "Eve")
	v.spectate(code)
	host.nothingQueued() // no playerJoined
	for _, m := range []struct {
		typ  string
		body any
	}{
		{protocol.TypeSignal, &protocol.Signal{To: "p1", Kind: protocol.SignalCandidate, Candidate: "candidate:1 1 udp 1 127.0.0.1 9 typ host"}},
		{protocol.TypeChat, &protocol.Chat{Text: "psst"}},
		{protocol.TypeSetReady, &protocol.SetReady{Ready: true}},
		{protocol.TypeStartGame, nil},
		{protocol.TypeKick, &protocol.Kick{ID: "p1"}},
		{protocol.TypeSpectatorFrame, &protocol.SpectatorFrame{Key: true, Data: []byte{1}}},
	} {
		v.request(m.typ, m.body)
		v.expectError(protocol.CodeNotInRoom)
	}
	host.nothingQueued()
	h.mu.RLock()
	players := len(h.rooms[code].members)
	h.mu.RUnlock()
	if players != 1 {
		t.Fatalf("%d players, want the host alone", players)
	}
	// A spectator taking a seat stops watching.
	rj := v.join(code, "")
	if len(rj.Players) != 2 {
		t.Fatalf("players %+v", rj.Players)
	}
	if m := h.Metrics(); m.Spectators != 0 {
		t.Fatalf("%d spectators after the spectator joined", m.Spectators)
	}
	// And a player cannot watch.
	v.request(protocol.TypeSpectate, &protocol.Spectate{Code: code})
	v.expectError(protocol.CodeAlreadyInRoom)
}

func TestSpectateNeedsTheRoomsPassword(t *testing.T) {
	_, url, _ := spectatorHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "pw").Room.Code
	v := connect(t, url, "")
	v.request(protocol.TypeSpectate, &protocol.Spectate{Code: code})
	v.expectError(protocol.CodeWrongPassword)
	v.request(protocol.TypeSpectate, &protocol.Spectate{Code: "ZZZZZZZ"})
	v.expectError(protocol.CodeRoomNotFound)
	v.request(protocol.TypeSpectate, &protocol.Spectate{Code: code, Password: "pw"})
	v.expect(protocol.TypeSpectating, &protocol.Spectating{})
	v.request(protocol.TypeStopSpectating, nil)
	v.expect(protocol.TypeOK, &protocol.OK{})
	v.request(protocol.TypeStopSpectating, nil)
	v.expectError(protocol.CodeNotInRoom)
}

// BenchmarkSpectatorFanOut is the server's cost of one spectator frame
// delivered: a host streams 200-byte frames to 50 spectators on real
// WebSockets, with no delay; ns/op and the CPU figures are per frame the
// host sends, delivered/op counts the frames written to spectators.
func BenchmarkSpectatorFanOut(b *testing.B) {
	const viewers = 50
	_, url := testHub(b, func(c *Config) {
		c.SpectatorDelay = 0
		c.MaxConnsPerIP, c.JoinsPerMinute = 1000, 1000
		c.SpectatorFramesPerSecond, c.SpectatorFrameBurst = 1e9, 1<<30
		c.MessagesPerSecond, c.MessageBurst = 1e9, 1<<30
		c.SpectatorQueue = 1 << 16
	})
	host := connect(b, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	var got atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range viewers {
		v := connect(b, url, "")
		v.spectate(code)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, _, err := v.conn.Read(ctx); err != nil {
					return
				}
				got.Add(1)
			}
		}()
	}
	frame, err := protocol.Encode(protocol.TypeSpectatorFrame, 0, &protocol.SpectatorFrame{Key: true, Data: make([]byte, 200)})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := host.conn.Write(ctx, 2, frame); err != nil {
			b.Fatal(err)
		}
	}
	want := int64(b.N) * viewers
	deadline := time.Now().Add(30 * time.Second)
	for got.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(got.Load())/float64(b.N), "delivered/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(got.Load()), "ns/delivered")
	cancel()
	wg.Wait()
}

// The host hears its spectator count, so it can stop streaming to nobody:
// every change within protocol.SpectatorCountInterval comes as one
// roomUpdated at its end, to every member, and none if the count is back
// where they last heard it.
func TestHostHearsItsSpectatorCount(t *testing.T) {
	const tick = protocol.SpectatorCountInterval
	_, url, clock := spectatorHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("Final", 4, "").Room.Code
	player := connect(t, url, "Bob")
	if rj := player.join(code, ""); rj.Room.Spectators != 0 {
		t.Fatalf("roomJoined with %d spectators, want 0", rj.Room.Spectators)
	}
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	both := func(n int) {
		t.Helper()
		host.expectSpectators(n)
		player.expectSpectators(n)
		host.nothingQueued()
		player.nothingQueued()
	}

	a := connect(t, url, "Dee")
	a.spectate(code)
	clock.Advance(tick - time.Nanosecond) // at the interval, not before
	host.nothingQueued()
	clock.Advance(time.Nanosecond)
	both(1)

	b := connect(t, url, "")
	b.spectate(code)
	clock.Advance(tick)
	both(2)
	late := connect(t, url, "Cy")
	if rj := late.join(code, ""); rj.Room.Spectators != 2 {
		t.Fatalf("roomJoined with %d spectators, want 2", rj.Room.Spectators)
	}
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	player.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})

	b.request(protocol.TypeStopSpectating, nil)
	b.expect(protocol.TypeOK, &protocol.OK{})
	clock.Advance(tick)
	both(1)
	late.expectSpectators(1)

	// A spectator taking a seat stops watching: 0, with its playerJoined first.
	a.join(code, "")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	player.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	late.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	clock.Advance(tick)
	both(0)
	late.expectSpectators(0)
}

// A crowd arriving, and a watcher who comes and goes, cost the room at most
// one roomUpdated per interval.
func TestSpectatorCountIsCoalesced(t *testing.T) {
	const tick = protocol.SpectatorCountInterval
	_, url, clock := spectatorHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	for range 30 {
		connect(t, url, "").spectate(code)
	}
	clock.Advance(tick)
	host.expectSpectators(30)
	host.nothingQueued()

	// Back to where the host last heard it within one interval: nothing.
	v := connect(t, url, "")
	v.spectate(code)
	v.request(protocol.TypeStopSpectating, nil)
	v.expect(protocol.TypeOK, &protocol.OK{})
	clock.Advance(tick)
	host.nothingQueued()

	// Changes in the next interval wait for its end: one event, the last count.
	v.spectate(code)
	clock.Advance(tick / 2)
	connect(t, url, "").spectate(code)
	host.nothingQueued()
	clock.Advance(tick / 2)
	host.expectSpectators(32)
	host.nothingQueued()
}
