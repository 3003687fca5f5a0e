package signaling

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

// connectSeat is connect, returning the Welcome too.
func connectSeat(t *testing.T, url, name string) (*client, protocol.Welcome) {
	c := dial(t, url, nil)
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: name})
	var w protocol.Welcome
	c.expect(protocol.TypeWelcome, &w)
	return c, w
}

// resumeOn dials a new connection and resumes old's session on it.
func resumeOn(t *testing.T, url string, token string, received uint64) (*client, protocol.Envelope) {
	c := dialWith(t, url, lobbytest.Options{Received: received})
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Resume: token, Received: received})
	env, err := c.read()
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	return c, env
}

func expectAway(t *testing.T, c *client, id string, away bool) {
	t.Helper()
	var u protocol.PlayerUpdated
	c.expect(protocol.TypePlayerUpdated, &u)
	if u.Player.ID != id || u.Player.Away != away {
		t.Fatalf("PlayerUpdated %+v, want %s away=%v", u.Player, id, away)
	}
}

func TestResumeIntoHeldSeat(t *testing.T) {
	hub, url := testHub(t, func(c *Config) { c.Grace = 5 * time.Second })
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, w := connectSeat(t, url, "Bob")
	bj := bob.join(code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	if w.Resume == "" || w.Grace != 5 {
		t.Fatalf("welcome %+v", w)
	}

	bob.conn.CloseNow()
	expectAway(t, host, bj.You, true)
	// Events while Bob is away are kept for him.
	host.request(protocol.TypeChat, &protocol.Chat{Text: "still there?"})
	var cm protocol.ChatMessage
	host.expect(protocol.TypeChatMessage, &cm)
	host.expect(protocol.TypeOK, &protocol.OK{})

	back, env := resumeOn(t, url, w.Resume, bob.Received())
	var rw protocol.Welcome
	if env.Type != protocol.TypeWelcome || protocol.DecodeBody(env, &rw) != nil || !rw.Resumed ||
		rw.Session != w.Session || rw.Resume == "" || rw.Resume == w.Resume || rw.Token != w.Token {
		t.Fatalf("resume reply %s %+v", env.Type, rw)
	}
	back.expect(protocol.TypeChatMessage, &cm)
	if cm.Text != "still there?" {
		t.Fatalf("replayed %+v", cm)
	}
	expectAway(t, host, bj.You, false)
	// The seat is the same player: signalling and chat work, nobody joined or left.
	back.request(protocol.TypeSignal, &protocol.Signal{To: "p1", Kind: protocol.SignalOffer, SDP: "v=0"})
	back.expect(protocol.TypeOK, &protocol.OK{})
	var sig protocol.Signal
	host.expect(protocol.TypeSignal, &sig)
	if sig.From != bj.You {
		t.Fatalf("signal from %s", sig.From)
	}
	if n := len(hub.rooms[code].members); n != 2 {
		t.Fatalf("room has %d members", n)
	}

	// The old token is spent.
	again, env := resumeOn(t, url, w.Resume, 0)
	var e protocol.Error
	if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeResumeFailed {
		t.Fatalf("second resume with one token: %s %+v", env.Type, e)
	}
	// A failed resume leaves the connection able to start over.
	again.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Fresh"})
	again.expect(protocol.TypeWelcome, &protocol.Welcome{})
}

func TestSeatReleasedAfterGrace(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.Grace = 300 * time.Millisecond })
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, w := connectSeat(t, url, "Bob")
	bj := bob.join(code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	bob.conn.CloseNow()
	expectAway(t, host, bj.You, true)
	var pl protocol.PlayerLeft
	host.expect(protocol.TypePlayerLeft, &pl)
	if pl.ID != bj.You || pl.Reason != protocol.ReasonDisconnect {
		t.Fatalf("PlayerLeft %+v", pl)
	}
	_, env := resumeOn(t, url, w.Resume, bob.Received())
	var e protocol.Error
	if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeResumeFailed {
		t.Fatalf("resume after grace: %s %+v", env.Type, e)
	}
}

func TestConcurrentResumesOneWins(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.Grace = 5 * time.Second })
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, w := connectSeat(t, url, "Bob")
	bob.join(code, "")
	bob.conn.CloseNow()

	const n = 8
	conns := make([]*client, n)
	for i := range conns {
		conns[i] = dial(t, url, nil)
	}
	var wg sync.WaitGroup
	results := make([]string, n)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frame, _ := protocol.Encode(protocol.TypeHello, 1, &protocol.Hello{Version: protocol.Version, Resume: w.Resume, Received: bob.Received()})
			if err := c.conn.Write(t.Context(), websocket.MessageBinary, frame); err != nil {
				results[i] = err.Error()
				return
			}
			env, err := c.read()
			if err != nil {
				results[i] = err.Error()
				return
			}
			results[i] = env.Type
		}()
	}
	wg.Wait()
	won := 0
	for _, r := range results {
		switch r {
		case protocol.TypeWelcome:
			won++
		case protocol.TypeError:
		default:
			t.Errorf("result %q", r)
		}
	}
	if won != 1 {
		t.Fatalf("%d resumes won, want exactly 1: %v", won, results)
	}
}

// TestResumeReplacesHalfOpenConnection: the server has not noticed the old
// connection is dead (no close, no ping timeout yet); a resume takes the seat
// and the old connection is cut.
func TestResumeReplacesHalfOpenConnection(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.Grace = 5 * time.Second })
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, w := connectSeat(t, url, "Bob")
	bob.join(code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)

	back, env := resumeOn(t, url, w.Resume, bob.Received())
	if env.Type != protocol.TypeWelcome {
		t.Fatalf("resume reply %s", env.Type)
	}
	if _, err := bob.read(); err == nil {
		t.Fatal("old connection still open after resume")
	}
	back.request(protocol.TypeChat, &protocol.Chat{Text: "moved"})
	back.expect(protocol.TypeChatMessage, &protocol.ChatMessage{})
	back.expect(protocol.TypeOK, &protocol.OK{})
	var cm protocol.ChatMessage
	host.expect(protocol.TypeChatMessage, &cm)
	if cm.Text != "moved" {
		t.Fatalf("chat %+v", cm)
	}
}

func TestResumeAfterMissingTooMuch(t *testing.T) {
	_, url := testHub(t, func(c *Config) {
		c.Grace = 5 * time.Second
		c.ReplayFrames = 4
		c.ChatBurst = 100
		c.ChatPerSecond = 100
	})
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, w := connectSeat(t, url, "Bob")
	bj := bob.join(code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	bob.conn.CloseNow()
	expectAway(t, host, bj.You, true)
	for i := 0; i < 6; i++ { // more than ReplayFrames
		host.request(protocol.TypeChat, &protocol.Chat{Text: "x"})
		host.expect(protocol.TypeChatMessage, &protocol.ChatMessage{})
		host.expect(protocol.TypeOK, &protocol.OK{})
	}
	_, env := resumeOn(t, url, w.Resume, bob.Received())
	var e protocol.Error
	if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeResumeFailed {
		t.Fatalf("resume past the replay window: %s %+v", env.Type, e)
	}
	// The seat was released at once, not at the end of the grace period.
	var pl protocol.PlayerLeft
	host.expect(protocol.TypePlayerLeft, &pl)
	if pl.ID != bj.You {
		t.Fatalf("PlayerLeft %+v", pl)
	}
}

func TestHostMigration(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.Grace = 300 * time.Millisecond })
	host, _ := connectSeat(t, url, "Host")
	host.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "m", MaxPlayers: 4, Migrate: true})
	var rj protocol.RoomJoined
	host.expect(protocol.TypeRoomJoined, &rj)
	if !rj.Room.Migrate {
		t.Fatalf("room %+v", rj.Room)
	}
	a, _ := connectSeat(t, url, "A")
	aj := a.join(rj.Room.Code, "")
	b, _ := connectSeat(t, url, "B")
	bj := b.join(rj.Room.Code, "")
	c, _ := connectSeat(t, url, "C")
	cj := c.join(rj.Room.Code, "")
	var pj protocol.PlayerJoined
	for range 3 {
		host.expect(protocol.TypePlayerJoined, &pj)
	}
	a.expect(protocol.TypePlayerJoined, &pj)
	a.expect(protocol.TypePlayerJoined, &pj)
	b.expect(protocol.TypePlayerJoined, &pj)

	// A, the longest present, is away: the rule skips it for B.
	a.conn.CloseNow()
	expectAway(t, b, aj.You, true)
	expectAway(t, c, aj.You, true)
	host.request(protocol.TypeLeaveRoom, nil)
	for _, m := range []*client{b, c} {
		var pl protocol.PlayerLeft
		m.expect(protocol.TypePlayerLeft, &pl)
		if pl.ID != rj.You || pl.Reason != protocol.ReasonLeft {
			t.Fatalf("PlayerLeft %+v", pl)
		}
		var hc protocol.HostChanged
		m.expect(protocol.TypeHostChanged, &hc)
		if hc.Host != bj.You || hc.Previous != rj.You {
			t.Fatalf("HostChanged %+v, want %s", hc, bj.You)
		}
	}
	// The new host acts as host: signals to clients pass, host-only requests work.
	b.request(protocol.TypeSignal, &protocol.Signal{To: cj.You, Kind: protocol.SignalAnswer, SDP: "v=0"})
	b.expect(protocol.TypeOK, &protocol.OK{})
	var sig protocol.Signal
	c.expect(protocol.TypeSignal, &sig)
	// A's seat expires; then B's connection dies past the grace period and C
	// becomes host.
	var pl protocol.PlayerLeft
	c.expect(protocol.TypePlayerLeft, &pl)
	if pl.ID != aj.You {
		t.Fatalf("PlayerLeft %+v", pl)
	}
	b.conn.CloseNow()
	expectAway(t, c, bj.You, true)
	c.expect(protocol.TypePlayerLeft, &pl)
	var hc protocol.HostChanged
	c.expect(protocol.TypeHostChanged, &hc)
	if hc.Host != cj.You {
		t.Fatalf("HostChanged %+v", hc)
	}
	// The last member leaving closes the room.
	c.request(protocol.TypeLeaveRoom, nil)
	c.expect(protocol.TypeOK, &protocol.OK{})
	c.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code})
	c.expectError(protocol.CodeRoomNotFound)
}

func TestICERefreshBeforeExpiry(t *testing.T) {
	var mu sync.Mutex
	issued := 0
	_, url := testHub(t, func(c *Config) {
		c.ICE = func(sessionID, host string) protocol.ICE {
			mu.Lock()
			defer mu.Unlock()
			issued++
			return protocol.ICE{TTL: 1, Servers: []protocol.ICEServer{{URLs: []string{"turn:x"},
				Username: sessionID, Credential: string(rune('a' + issued))}}}
		}
	})
	host, _ := connectSeat(t, url, "Host")
	rj := host.create("r", 2, "")
	last := rj.ICE.Servers[0].Credential
	for range 2 { // refreshed at 3/4 of the TTL, again and again
		var r protocol.ICERefresh
		host.expect(protocol.TypeICERefresh, &r)
		if r.ICE.TTL != 1 || r.ICE.Servers[0].Credential == last {
			t.Fatalf("refresh %+v", r.ICE)
		}
		last = r.ICE.Servers[0].Credential
	}
	// Out of a room there is nothing to refresh.
	host.request(protocol.TypeLeaveRoom, nil)
	host.expect(protocol.TypeOK, &protocol.OK{})
	host.readTimeout = 1500 * time.Millisecond
	for {
		env, err := host.read()
		if err != nil {
			break // timed out: nothing more was sent
		}
		if env.Type == protocol.TypeICERefresh {
			t.Fatal("ICE refreshed for a session in no room")
		}
	}
}

// Issue 16: a new session's Welcome carries its TURN credentials, so a
// client can gather relay candidates while its join is on the way; they
// start no refreshes (nothing to keep alive out of a room), and a resumed
// Welcome has none (the session already holds its own).
func TestWelcomeCarriesICE(t *testing.T) {
	_, url := testHub(t, func(c *Config) {
		c.Grace = time.Minute
		c.ICE = func(sessionID, host string) protocol.ICE {
			return protocol.ICE{TTL: 1, Servers: []protocol.ICEServer{{URLs: []string{"turn:" + host},
				Username: "9999999999:" + sessionID, Credential: "c"}}}
		}
	})
	c, w := connectSeat(t, url, "Ada")
	if w.ICE == nil || len(w.ICE.Servers) != 1 || w.ICE.Servers[0].Username != "9999999999:"+w.Session ||
		!strings.HasPrefix(w.ICE.Servers[0].URLs[0], "turn:127.0.0.1:") || w.ICE.TTL != 1 {
		t.Fatalf("welcome ICE %+v for session %s", w.ICE, w.Session)
	}
	c.readTimeout = 1500 * time.Millisecond // past 3/4 of the TTL
	for {
		env, err := c.read()
		if err != nil {
			break // timed out: nothing more was sent
		}
		if env.Type == protocol.TypeICERefresh {
			t.Fatal("ICE refreshed for a session in no room")
		}
	}
	// (The read timeout closed c: a second session, in a room so that its
	// seat is held, shows the resume.)
	d, w2 := connectSeat(t, url, "Bea")
	d.create("r", 2, "")
	_ = d.conn.CloseNow()
	_, env := resumeOn(t, url, w2.Resume, d.Received())
	var rw protocol.Welcome
	if env.Type != protocol.TypeWelcome || protocol.DecodeBody(env, &rw) != nil || !rw.Resumed || rw.ICE != nil {
		var e protocol.Error
		_ = protocol.DecodeBody(env, &e)
		t.Fatalf("resumed: %s %+v %+v", env.Type, rw, e)
	}
}

func TestConnectionsPerIPLimit(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.MaxConnsPerIP = 3 })
	conns := make([]*client, 3)
	for i := range conns { // at the limit
		conns[i] = dial(t, url, http.Header{"X-Test-IP": {"203.0.113.9"}})
	}
	_, resp, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{HTTPHeader: http.Header{"X-Test-IP": {"203.0.113.9"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("past the limit: %v %v", resp, err)
	}
	dial(t, url, http.Header{"X-Test-IP": {"203.0.113.10"}}) // another IP is unaffected
	conns[0].conn.Close(websocket.StatusNormalClosure, "")
	waitFor(t, "a slot to free", func() bool {
		c, _, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{HTTPHeader: http.Header{"X-Test-IP": {"203.0.113.9"}}})
		if err != nil {
			return false
		}
		c.CloseNow()
		return true
	})
}

func TestJoinsPerMinuteLimit(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.JoinsPerMinute = 3 })
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 8, "").Room.Code
	p, _ := connectSeat(t, url, "P")
	for i := 0; i < 3; i++ { // at the limit: join and leave
		p.join(code, "")
		p.request(protocol.TypeLeaveRoom, nil)
		p.expect(protocol.TypeOK, &protocol.OK{})
	}
	p.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	p.expectError(protocol.CodeRateLimited)
}

func TestCloseEndsHeldSeats(t *testing.T) {
	hub, url := testHub(t, func(c *Config) { c.Grace = time.Minute })
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, _ := connectSeat(t, url, "Bob")
	bob.join(code, "")
	bob.conn.CloseNow()
	waitFor(t, "seat held", func() bool {
		hub.mu.RLock()
		defer hub.mu.RUnlock()
		for _, s := range hub.sessions {
			if s.away {
				return true
			}
		}
		return false
	})
	if err := hub.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := hub.Stats(); st.Sessions != 0 || st.Rooms != 0 {
		t.Fatalf("after Close: %+v", st)
	}
}

// TestRoomsPerMinuteLimit: a session creates rooms up to its budget, the
// next create is refused (and leaves it in no room), and the budget refills
// with time.
func TestRoomsPerMinuteLimit(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Unix(1795000000, 0).UnixNano())
	_, url := testHub(t, func(c *Config) {
		c.RoomsPerMinute = 3
		c.Now = func() time.Time { return time.Unix(0, now.Load()) }
	})
	host, _ := connectSeat(t, url, "Host")
	for i := 0; i < 3; i++ { // at the limit: create and leave
		host.create("r", 2, "")
		host.request(protocol.TypeLeaveRoom, nil)
		host.expect(protocol.TypeOK, &protocol.OK{})
	}
	host.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 2})
	if e := host.expectError(protocol.CodeRateLimited); !strings.Contains(e.Message, "too fast") {
		t.Fatalf("message %q", e.Message)
	}
	// Refused, not half-done: the session is in no room, so leaving fails.
	host.request(protocol.TypeLeaveRoom, nil)
	host.expectError(protocol.CodeNotInRoom)
	// One room's worth of budget comes back after a third of a minute.
	now.Add(int64(20 * time.Second))
	host.create("r", 2, "")
}

// awayRoom is a room of Host and Bob whose connection has just died: Bob's
// seat is held. Chat is unthrottled so the host can make Bob miss a lot.
func awayRoom(t *testing.T, mutate func(*Config)) (url string, host, bob *client, bobID string, w protocol.Welcome) {
	t.Helper()
	_, url = testHub(t, func(c *Config) {
		c.Grace = time.Minute
		c.ChatBurst, c.ChatPerSecond = 1000, 1000
		c.MessageBurst, c.MessagesPerSecond = 1000, 1000
		if mutate != nil {
			mutate(c)
		}
	})
	host, _ = connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, w = connectSeat(t, url, "Bob")
	bobID = bob.join(code, "").You
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	bob.conn.CloseNow()
	expectAway(t, host, bobID, true)
	return url, host, bob, bobID, w
}

// say has the host send n chat lines, each text(i), and returns the size of
// the frame the room got for the last one.
func (c *client) say(n int, text func(i int) string) int {
	c.t.Helper()
	size := 0
	c.SetRaw(func(frame []byte) bool { // sees the frame as sent, for its size
		if env, err := protocol.Decode(frame); err == nil && env.Type == protocol.TypeChatMessage {
			size = len(frame)
		}
		return false
	})
	defer c.SetRaw(nil)
	for i := range n {
		c.request(protocol.TypeChat, &protocol.Chat{Text: text(i)})
		c.expect(protocol.TypeChatMessage, &protocol.ChatMessage{})
		c.expect(protocol.TypeOK, &protocol.OK{})
	}
	return size
}

func numbered(i int) string { return fmt.Sprintf("line %03d", i) }

// expectResumed requires a resumed Welcome, then the n missed lines in
// order, then the host's next line: each missed frame exactly once.
func expectResumed(t *testing.T, back *client, env protocol.Envelope, host *client, n int, text func(i int) string) {
	t.Helper()
	var rw protocol.Welcome
	if env.Type != protocol.TypeWelcome || protocol.DecodeBody(env, &rw) != nil || !rw.Resumed {
		var e protocol.Error
		_ = protocol.DecodeBody(env, &e)
		t.Fatalf("resume after missing %d frames: %s %+v", n, env.Type, e)
	}
	for i := range n {
		var cm protocol.ChatMessage
		back.expect(protocol.TypeChatMessage, &cm)
		if cm.Text != text(i) {
			t.Fatalf("replayed frame %d is %q, want %q", i, cm.Text, text(i))
		}
	}
	host.say(1, func(int) string { return "after" })
	var cm protocol.ChatMessage
	back.expect(protocol.TypeChatMessage, &cm)
	if cm.Text != "after" {
		t.Fatalf("after the replay: %q, want the next line", cm.Text)
	}
}

// TestResumeAfterMissingMany: a seat that missed 250 frames (far more than
// the 64-frame outgoing queue) resumes and gets every one of them, in order,
// once; the room sees the player come back.
func TestResumeAfterMissingMany(t *testing.T) {
	const missed = 250
	url, host, bob, bobID, w := awayRoom(t, nil)
	host.say(missed, numbered)
	back, env := resumeOn(t, url, w.Resume, bob.Received())
	expectAway(t, host, bobID, false)
	expectResumed(t, back, env, host, missed, numbered)
	if back.Received() != bob.Received()+missed+1 {
		t.Fatalf("the resumed session counted %d frames, want %d", back.Received(), bob.Received()+missed+1)
	}
}

// TestResumeReplayLimits: the documented replay is 256 frames or 64 KiB,
// whichever is less. At either limit the seat resumes whole; one frame past
// it the resume fails with resume_failed and the seat is released at once.
func TestResumeReplayLimits(t *testing.T) {
	// 600 bytes of text: 64 KiB is then about 100 frames, under 256.
	wide := func(i int) string { return fmt.Sprintf("%03d ", i) + strings.Repeat("語", 196) }
	for _, tc := range []struct {
		name string
		text func(int) string
		past bool
	}{
		{"256 frames", numbered, false},
		{"257 frames", numbered, true},
		{"64 KiB", wide, false},
		{"64 KiB and a frame", wide, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, host, bob, bobID, w := awayRoom(t, nil)
			size := host.say(1, tc.text)
			n := min(256, (64<<10)/size)
			if tc.past {
				n++
			}
			host.say(n-1, func(i int) string { return tc.text(i + 1) })
			back, env := resumeOn(t, url, w.Resume, bob.Received())
			if !tc.past {
				expectAway(t, host, bobID, false)
				expectResumed(t, back, env, host, n, tc.text)
				return
			}
			var e protocol.Error
			if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeResumeFailed {
				t.Fatalf("resume after missing %d frames of %d bytes: %s %+v", n, size, env.Type, e)
			}
			var pl protocol.PlayerLeft
			host.expect(protocol.TypePlayerLeft, &pl)
			if pl.ID != bobID || pl.Reason != protocol.ReasonDisconnect {
				t.Fatalf("PlayerLeft %+v", pl)
			}
		})
	}
}

// TestResumedLinkDropsASlowConsumer: the replay does not count against the
// outgoing queue, but what comes after it does: a client that resumes, takes
// a long replay and then stops reading is dropped as any slow consumer is,
// and its seat is held again.
func TestResumedLinkDropsASlowConsumer(t *testing.T) {
	url, host, bob, bobID, w := awayRoom(t, func(c *Config) {
		c.QueueSize = 16
		c.SignalBurst, c.SignalsPerSecond = 1<<20, 1e6
		c.MessageBurst, c.MessagesPerSecond = 1<<20, 1e6
	})
	host.say(250, numbered)
	_, env := resumeOn(t, url, w.Resume, bob.Received()) // and never read again
	if env.Type != protocol.TypeWelcome {
		t.Fatalf("resume: %s", env.Type)
	}
	expectAway(t, host, bobID, false)
	floodSignals(t, host, bobID, func(env protocol.Envelope) bool {
		var u protocol.PlayerUpdated
		return env.Type == protocol.TypePlayerUpdated && protocol.DecodeBody(env, &u) == nil &&
			u.Player.ID == bobID && u.Player.Away
	})
}

// TestResumeClaimingUnsentFrames: a resume that claims more frames than
// the session was sent is refused (resume_failed) and the seat released;
// the server goes on serving. The replay ring sized its answer as
// sent-received, which wrapped around: makeslice panicked and took the
// whole process down, for any client with its own resume token.
func TestResumeClaimingUnsentFrames(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.Grace = 5 * time.Second })
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, w := connectSeat(t, url, "Bob")
	bj := bob.join(code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)

	bob.conn.CloseNow()
	expectAway(t, host, bj.You, true)
	_, env := resumeOn(t, url, w.Resume, bob.Received()+1000)
	var e protocol.Error
	if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeResumeFailed {
		t.Fatalf("resume past what was sent answered %s %+v", env.Type, e)
	}
	var pl protocol.PlayerLeft
	host.expect(protocol.TypePlayerLeft, &pl)
	if pl.ID != bj.You {
		t.Fatalf("PlayerLeft %+v, want %s", pl, bj.You)
	}
	host.request(protocol.TypeChat, &protocol.Chat{Text: "still serving"})
	var cm protocol.ChatMessage
	host.expect(protocol.TypeChatMessage, &cm)
}
