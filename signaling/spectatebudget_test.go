package signaling

import (
	"encoding/binary"
	"runtime"
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
