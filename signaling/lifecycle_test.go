package signaling

import (
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// TestPingTimeout: a client that stops answering pings (it stops reading,
// as a frozen tab or a dead network does) is dropped, and its room is told.
func TestPingTimeout(t *testing.T) {
	_, url := testHub(t, func(c *Config) {
		c.PingInterval = 100 * time.Millisecond
		c.PongTimeout = 200 * time.Millisecond
	})
	host := connect(t, url, "Host")
	code := host.create("r", 2, "").Room.Code
	frozen := connect(t, url, "Frozen")
	fj := frozen.join(code, "")
	// From here frozen never reads again, so its library answers no ping.
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	host.readTimeout = 5 * time.Second
	for {
		env, err := host.read()
		if err != nil {
			t.Fatalf("host: %v", err)
		}
		if env.Type != protocol.TypePlayerLeft {
			continue // the host's own pings keep coming as updates
		}
		var pl protocol.PlayerLeft
		if err := protocol.DecodeBody(env, &pl); err != nil {
			t.Fatal(err)
		}
		if pl.ID != fj.You {
			t.Fatalf("PlayerLeft %+v", pl)
		}
		return
	}
}

// TestIdleRoomCollected: a room whose every member is gone past the grace
// period is removed, with nothing left behind.
func TestIdleRoomCollected(t *testing.T) {
	hub, url := testHub(t, func(c *Config) { c.Grace = 200 * time.Millisecond })
	host := connect(t, url, "Host")
	host.create("r", 2, "")
	host.conn.CloseNow() // dies without a close: the seat is held, then released
	waitFor(t, "room collected", func() bool {
		st := hub.Stats()
		return st.Rooms == 0 && st.Sessions == 0
	})
}
