package signaling

import (
	"encoding/binary"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// spectatorHeld is the bytes of spectator frames the hub's rooms hold, by
// their own per-room accounting (data as encoded, pending and history).
func spectatorHeld(h *Hub) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	for _, r := range h.rooms {
		if st := r.stream; st != nil {
			st.mu.Lock()
			n += st.pendingBytes + st.historyBytes
			st.mu.Unlock()
		}
	}
	return n
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC() // a second pass frees what the first one's finalizers let go
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// streamFrames sends a keyframe and deltas of size bytes each, pipelined
// (id 0, no answer), then a request whose OK proves the hub took them all:
// an Error read instead fails the test.
func (c *client) streamFrames(first uint32, deltas, size int) {
	c.t.Helper()
	data := make([]byte, size)
	for i := range deltas + 1 {
		binary.BigEndian.PutUint32(data, first+uint32(i))
		frame, err := protocol.Encode(protocol.TypeSpectatorFrame, 0, &protocol.SpectatorFrame{Key: i == 0, Data: data})
		if err != nil {
			c.t.Fatal(err)
		}
		c.writeRaw(frame)
	}
	c.nothingQueued()
}

// Issue 24, finding 2: rooms whose hosts stream to nobody and go idle must
// not keep the delay's worth of frames each. 200 rooms, each a keyframe
// and 30 deltas of the largest size, no spectator anywhere.
func TestSpectatorBuffersOfUnwatchedRoomsStaySmall(t *testing.T) {
	const rooms, deltas, size = 200, 30, protocol.MaxSpectatorData
	h, url, clock := spectatorHub(t, func(c *Config) {
		c.SpectatorFrameBurst = deltas + 1
		// A host reads nothing while the others stream, so a ping (one is
		// nudged on create) may wait long for its pong on a slow run.
		c.PingInterval, c.PongTimeout = time.Hour, time.Hour
		// Nor may fresh TURN credentials come (before a 60 s TTL ends) to a
		// host that must have nothing queued: a run on busy cores took 90 s.
		ice := c.ICE
		c.ICE = func(session, host string) protocol.ICE {
			i := ice(session, host)
			i.TTL = 3600
			return i
		}
	})
	hosts := make([]*client, rooms)
	for i := range hosts {
		hosts[i] = connect(t, url, "Ada")
		hosts[i].create("Final", 2, "")
	}
	before := heapInUse()
	for _, host := range hosts {
		host.streamFrames(0, deltas, size)
	}
	held := spectatorHeld(h)
	clock.Advance(2 * time.Second) // every frame released: what is kept for joiners now
	idle := spectatorHeld(h)
	after := heapInUse()
	growth := int64(after) - int64(before)
	t.Logf("%d unwatched rooms: %d bytes held in the delay (%d a room), %d after it (%d a room); heap %d → %d KiB (%+d KiB, %d a room)",
		rooms, held, held/rooms, idle, idle/rooms, before>>10, after>>10, growth>>10, growth/rooms)
	// One largest frame a room, and room to spare: a keyframe is what a
	// joiner needs.
	const perRoom = 2 * protocol.MaxFrame
	if held > rooms*perRoom || idle > rooms*perRoom {
		t.Errorf("held %d bytes in the delay and %d after, want at most %d (%d a room)", held, idle, rooms*perRoom, perRoom)
	}
	// The hub's own figure: frame buffers as allocated.
	if m := h.Metrics(); m.SpectatorBufferBytes > rooms*perRoom || m.SpectatorBufferBytes > h.cfg.SpectatorBudgetBytes {
		t.Errorf("hub holds %d bytes of spectator frames, want at most %d", m.SpectatorBufferBytes, rooms*perRoom)
	}
	// The heap as a backstop for what the accounting might miss, with a
	// wide margin: 64 KiB a room.
	if growth > rooms*64<<10 {
		t.Errorf("heap grew %d KiB for %d unwatched rooms, want under %d KiB", growth>>10, rooms, rooms*64)
	}
	for _, host := range hosts {
		host.nothingQueued() // every host still served
	}
}

// tryFrame sends a spectator frame as frame does and reports whether it
// was taken; a refusal must be rate_limited.
func (c *client) tryFrame(n uint32, key bool, size int) bool {
	c.t.Helper()
	data := make([]byte, max(size, 4))
	binary.BigEndian.PutUint32(data, n)
	c.request(protocol.TypeSpectatorFrame, &protocol.SpectatorFrame{Key: key, Data: data})
	env, err := c.read()
	if err != nil {
		c.t.Fatal(err)
	}
	if env.Type == protocol.TypeError {
		var e protocol.Error
		if err := protocol.DecodeBody(env, &e); err != nil || e.Code != protocol.CodeRateLimited {
			c.t.Fatalf("frame %d refused with %+v, want rate_limited", n, e)
		}
		return false
	}
	if env.Type != protocol.TypeOK {
		c.t.Fatalf("got %s, want ok", env.Type)
	}
	return true
}

// checkSpectatorAccounting fails t unless every stream's held bytes are
// the memory of its frames, and the budget's figures their sums.
func checkSpectatorAccounting(t *testing.T, h *Hub) {
	t.Helper()
	h.mu.RLock()
	defer h.mu.RUnlock()
	held, idle := 0, 0
	for _, r := range h.rooms {
		st := r.stream
		if st == nil {
			continue
		}
		st.mu.Lock()
		n := 0
		for _, f := range append(append([]stampedFrame(nil), st.history...), st.pending...) {
			n += f.mem()
		}
		if n != st.held {
			t.Errorf("room %s: held %d, its frames %d", r.code, st.held, n)
		}
		held += n
		if st.idle {
			idle += n
		}
		st.mu.Unlock()
	}
	b := &h.spectators
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held != held || b.idle != idle {
		t.Errorf("budget: held %d idle %d, the streams' %d and %d", b.held, b.idle, held, idle)
	}
	if b.held > b.limit || b.idle > b.idleLimit() {
		t.Errorf("budget: held %d (idle %d), past its %d (%d)", b.held, b.idle, b.limit, b.idleLimit())
	}
}

// expectFrames reads spectator frames until the connection has nothing
// queued, and returns their numbers and whether each was a keyframe.
func (c *client) spectatorFrames() (nums []uint32, keys []bool) {
	c.t.Helper()
	c.request(protocol.TypeUnwatchRooms, nil)
	for {
		env, err := c.read()
		if err != nil {
			c.t.Fatal(err)
		}
		if env.Type == protocol.TypeOK {
			return nums, keys
		}
		var f protocol.SpectatorFrame
		if env.Type != protocol.TypeSpectatorFrame || protocol.DecodeBody(env, &f) != nil {
			c.t.Fatalf("got %s, want spectator frames", env.Type)
		}
		nums, keys = append(nums, binary.BigEndian.Uint32(f.Data)), append(keys, f.Key)
	}
}

// usable fails t unless frames start at a keyframe and every delta follows
// the frame numbered just before it: a spectator could apply them all.
func usable(t *testing.T, who string, nums []uint32, keys []bool) {
	t.Helper()
	for i := range nums {
		if i == 0 && !keys[0] || i > 0 && !keys[i] && nums[i] != nums[i-1]+1 {
			t.Fatalf("%s got frames %v (keys %v): frame %d cannot be applied", who, nums, keys, nums[i])
		}
	}
}

// The server-wide budget at and past its limit: it is never passed, a
// room's history goes first, then frames are refused (and the deltas after
// them until a keyframe), each counted; the viewers' stream and a joiner's
// stay keyframe-first and applicable; rooms nobody watches hold at most a
// quarter of it.
func TestSpectatorBudget(t *testing.T) {
	const budget, size = 64 << 10, 4000 // a frame holds 4 KiB: 16 fit
	h, url, clock := spectatorHub(t, func(c *Config) {
		c.SpectatorBudgetBytes = budget
		c.SpectatorFrameBurst = 1000
		c.MessagesPerSecond, c.MessageBurst = 1000, 1000
	})
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	v1 := connect(t, url, "")
	v1.spectate(code)
	clock.Advance(protocol.SpectatorCountInterval)
	host.expectSpectators(1)

	// 8 frames released: the history a joiner would get.
	for n := range uint32(8) {
		host.frame(n, n == 0, size)
	}
	clock.Advance(2 * time.Second)
	checkSpectatorAccounting(t, h)
	// Pending fills the rest, then eats the history (keyframe last), then
	// the frame is refused.
	n := uint32(8)
	host.frame(n, true, size)
	for n++; host.tryFrame(n, false, size); n++ {
		checkSpectatorAccounting(t, h)
		if n > 100 {
			t.Fatal("no frame refused past the budget")
		}
	}
	checkSpectatorAccounting(t, h)
	refusedAt := n
	m := h.Metrics()
	t.Logf("refused frame %d: %d bytes held of %d, %d refused, %d dropped", refusedAt, m.SpectatorBufferBytes, budget,
		m.SpectatorBudgetRefused, m.SpectatorBudgetDropped)
	if m.SpectatorBudgetRefused != 1 || m.SpectatorBudgetDropped != 8 {
		t.Fatalf("budget refused %d and dropped %d frames, want 1 and the 8 of the history", m.SpectatorBudgetRefused,
			m.SpectatorBudgetDropped)
	}
	// The deltas after it are refused until a keyframe: nobody could apply them.
	host.request(protocol.TypeSpectatorFrame, &protocol.SpectatorFrame{Data: make([]byte, 4)})
	host.expectError(protocol.CodeRateLimited)
	if m := h.Metrics(); m.SpectatorBudgetRefused != 2 {
		t.Fatalf("budget refused %d frames, want 2", m.SpectatorBudgetRefused)
	}
	// Once the delay lets the pending frames out, a keyframe fits again
	// (the history, now its frames, cut back to make room).
	clock.Advance(2 * time.Second)
	host.frame(1000, true, size)
	host.frame(1001, false, size)
	checkSpectatorAccounting(t, h)
	late := connect(t, url, "")
	late.spectate(code)
	clock.Advance(2 * time.Second)
	nums, keys := v1.spectatorFrames()
	usable(t, "the viewer", nums, keys)
	if nums[len(nums)-1] != 1001 || len(nums) != int(refusedAt)+2 {
		t.Fatalf("the viewer got frames %v, want 0 to %d, 1000 and 1001", nums, refusedAt-1)
	}
	nums, keys = late.spectatorFrames()
	usable(t, "a joiner", nums, keys)
	t.Logf("a joiner past the budget got frames %v", nums)
	if nums[len(nums)-1] != 1001 {
		t.Fatalf("a joiner got frames %v, want the stream up to 1001", nums)
	}

	// Rooms nobody watches: a quarter of the budget, 4 keyframes of 4 KiB
	// (the watched room's frames leave room for them); the others are
	// taken and not kept, and counted.
	refused := h.Metrics().SpectatorBudgetRefused
	for i := range 8 {
		idle := connect(t, url, "Bo")
		idle.create("Idle", 2, "")
		idle.frame(uint32(i), true, size)
		checkSpectatorAccounting(t, h)
	}
	if got := h.Metrics().SpectatorBudgetRefused - refused; got != 4 {
		t.Fatalf("%d unwatched rooms' keyframes refused, want 4 of 8", got)
	}
}

// A spectator joining a room nobody watched starts as before: the newest
// released keyframe and its deltas at once, then the stream at its delay.
// Deltas past what an unwatched room keeps are taken and not kept; the
// joiner then gets the keyframe and waits for the host's next.
func TestSpectatorJoiningAnUnwatchedRoom(t *testing.T) {
	const big = 8000 // a keyframe and one delta fit what an unwatched room keeps
	h, url, clock := spectatorHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	for n := range uint32(5) {
		host.frame(n, n == 0, 100)
	}
	clock.Advance(2 * time.Second)
	host.frame(5, false, 100)
	host.frame(6, false, 100)
	checkSpectatorAccounting(t, h)
	early := connect(t, url, "")
	early.spectate(code)
	for n := range uint32(5) {
		early.expectFrame(n, n == 0)
	}
	early.nothingQueued()
	clock.Advance(2 * time.Second)
	early.expectFrame(5, false)
	early.expectFrame(6, false)
	early.request(protocol.TypeStopSpectating, nil)
	early.expect(protocol.TypeOK, &protocol.OK{})
	clock.Advance(protocol.SpectatorCountInterval)
	host.expectSpectators(1)
	host.expectSpectators(0)

	// Large frames to nobody: keyframe 10 and delta 11 kept, 12 to 14 not.
	host.frame(10, true, big)
	for n := range uint32(4) {
		host.frame(11+n, false, big)
	}
	checkSpectatorAccounting(t, h)
	if m := h.Metrics(); m.SpectatorBufferBytes > 2*h.idleSegmentBytes() {
		t.Fatalf("%d bytes held for nobody, want at most two keyframes' %d", m.SpectatorBufferBytes, 2*h.idleSegmentBytes())
	}
	clock.Advance(2 * time.Second)
	late := connect(t, url, "")
	late.spectate(code)
	host.frame(15, false, big) // its keyframe's deltas are gone: not kept
	host.frame(16, true, big)
	host.frame(17, false, 100)
	clock.Advance(2 * time.Second)
	nums, keys := late.spectatorFrames()
	usable(t, "a joiner", nums, keys)
	if want := []uint32{10, 11, 16, 17}; !slices.Equal(nums, want) {
		t.Fatalf("a joiner got frames %v, want %v", nums, want)
	}
}

// When the last spectator leaves, the room keeps only what a joiner needs,
// in the budget's idle share, and the next joiner's stream is applicable.
func TestSpectatorStreamShrinksWhenTheLastViewerLeaves(t *testing.T) {
	h, url, clock := spectatorHub(t, func(c *Config) {
		c.SpectatorFrameBurst = 1000
		c.MessagesPerSecond, c.MessageBurst = 1000, 1000
	})
	host := connect(t, url, "Ada")
	code := host.create("Final", 2, "").Room.Code
	v := connect(t, url, "")
	v.spectate(code)
	clock.Advance(protocol.SpectatorCountInterval)
	host.expectSpectators(1)
	// 40 frames of 4 KB, a keyframe every 10: half released, half pending.
	for n := range uint32(40) {
		host.frame(n, n%10 == 0, 4000)
		if n == 19 {
			clock.Advance(2 * time.Second)
		}
	}
	watched := h.Metrics().SpectatorBufferBytes
	nums, keys := v.spectatorFrames()
	usable(t, "the viewer", nums, keys)
	v.request(protocol.TypeStopSpectating, nil)
	v.expect(protocol.TypeOK, &protocol.OK{})
	checkSpectatorAccounting(t, h)
	idle := h.Metrics().SpectatorBufferBytes
	t.Logf("held %d bytes watched, %d once nobody watches", watched, idle)
	if idle > 2*h.idleSegmentBytes() {
		t.Fatalf("%d bytes held for nobody, want at most %d", idle, 2*h.idleSegmentBytes())
	}
	host.frame(40, false, 4000) // not kept: past the pending keyframe's share
	late := connect(t, url, "")
	late.spectate(code)
	clock.Advance(2 * time.Second)
	host.frame(41, true, 100)
	clock.Advance(2 * time.Second)
	nums, keys = late.spectatorFrames()
	usable(t, "a joiner", nums, keys)
	t.Logf("a joiner got frames %v", nums)
	if nums[0] != 10 || nums[len(nums)-1] != 41 {
		t.Fatalf("a joiner got frames %v, want from the released keyframe 10 to 41", nums)
	}
}
