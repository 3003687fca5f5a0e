package signaling

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

// refusals returns m's refusals as request/code -> count.
func refusals(m Metrics) map[string]uint64 {
	out := make(map[string]uint64, len(m.Refusals))
	for _, r := range m.Refusals {
		out[r.Request+"/"+r.Code] = r.Count
	}
	return out
}

// TestMetricsRoomLifecycle: a room's life as the counts and gauges show
// it: created, joined, refused joins by code, started, its host migrated,
// then closed.
func TestMetricsRoomLifecycle(t *testing.T) {
	hub, url := testHub(t, nil)
	host := connect(t, url, "Host")
	host.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 2, Migrate: true})
	var rj protocol.RoomJoined
	host.expect(protocol.TypeRoomJoined, &rj)
	code := rj.Room.Code
	bob := connect(t, url, "Bob")
	bob.join(code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)

	eve := connect(t, url, "Eve")
	eve.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: "2345678"})
	eve.expectError(protocol.CodeRoomNotFound)
	eve.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	eve.expectError(protocol.CodeRoomFull)
	eve.request(protocol.TypeStartGame, nil)
	eve.expectError(protocol.CodeNotInRoom)

	m := hub.Metrics()
	if m.Sessions != 3 || m.SessionsAway != 0 || m.RoomsOpen != 1 || m.RoomsStarted != 0 || m.RoomsCreated != 1 || m.Joins != 1 {
		t.Fatalf("after a create and a join: %+v", m)
	}
	want := map[string]uint64{"joinRoom/room_not_found": 1, "joinRoom/room_full": 1, "startGame/not_in_room": 1}
	if got := refusals(m); !maps.Equal(got, want) {
		t.Fatalf("refusals %v, want %v", got, want)
	}

	bob.request(protocol.TypeSetReady, &protocol.SetReady{Ready: true})
	bob.expect(protocol.TypePlayerUpdated, &protocol.PlayerUpdated{})
	bob.expect(protocol.TypeOK, &protocol.OK{})
	host.request(protocol.TypeStartGame, nil)
	waitFor(t, "room started", func() bool { return hub.Metrics().RoomsStarted == 1 })
	if m := hub.Metrics(); m.RoomsOpen != 0 {
		t.Fatalf("started room still open: %+v", m)
	}

	host.request(protocol.TypeLeaveRoom, nil)
	waitFor(t, "host migrated", func() bool { return hub.Metrics().HostMigrations == 1 })
	bob.request(protocol.TypeLeaveRoom, nil)
	waitFor(t, "room closed", func() bool { return hub.Metrics().RoomsClosed == 1 })
	if m := hub.Metrics(); m.RoomsOpen+m.RoomsStarted != 0 || m.HostMigrations != 1 || m.RoomsCreated != 1 {
		t.Fatalf("after the room closed: %+v", m)
	}
}

// TestMetricsResumes: a held seat shows as away until it is resumed; a
// resume with a token that holds no seat counts as failed.
func TestMetricsResumes(t *testing.T) {
	hub, url := testHub(t, func(c *Config) { c.Grace = 5 * time.Second })
	host, _ := connectSeat(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	bob, w := connectSeat(t, url, "Bob")
	bj := bob.join(code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)

	bob.conn.CloseNow()
	expectAway(t, host, bj.You, true)
	if m := hub.Metrics(); m.Sessions != 2 || m.SessionsAway != 1 {
		t.Fatalf("with a seat held: %+v", m)
	}
	back, env := resumeOn(t, url, w.Resume, bob.Received())
	var rw protocol.Welcome
	if env.Type != protocol.TypeWelcome || protocol.DecodeBody(env, &rw) != nil {
		t.Fatalf("resume answered %s", env.Type)
	}
	expectAway(t, host, bj.You, false)
	if m := hub.Metrics(); m.Resumes != 1 || m.ResumesFailed != 0 || m.SessionsAway != 0 {
		t.Fatalf("after a resume: %+v", m)
	}

	_, env = resumeOn(t, url, w.Resume, 0) // single use: spent above
	var e protocol.Error
	if env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil || e.Code != protocol.CodeResumeFailed {
		t.Fatalf("stale resume answered %s %+v", env.Type, e)
	}
	m := hub.Metrics()
	if m.Resumes != 1 || m.ResumesFailed != 1 || refusals(m)["hello/resume_failed"] != 1 {
		t.Fatalf("after a failed resume: %+v", m)
	}

	// A resume claiming frames never sent cannot be trusted: it fails too.
	back.conn.CloseNow()
	expectAway(t, host, bj.You, true)
	_, env = resumeOn(t, url, rw.Resume, back.Received()+1000)
	if env.Type != protocol.TypeError {
		t.Fatalf("resume past what was sent answered %s", env.Type)
	}
	if m := hub.Metrics(); m.Resumes != 1 || m.ResumesFailed != 2 || m.Sessions != 1 {
		t.Fatalf("after a resume past what was sent: %+v", m)
	}
}

// TestMetricsFailedJoins: the failed-join budget counts the joins it
// refuses, apart from the join rate.
func TestMetricsFailedJoins(t *testing.T) {
	hub, url := testHub(t, func(c *Config) { c.JoinFailureBurst, c.JoinFailureEvery = 2, time.Hour })
	c := connect(t, url, "Guesser")
	for range 2 {
		c.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: "2345678"})
		c.expectError(protocol.CodeRoomNotFound)
	}
	if n := hub.Metrics().RateLimited["failed_joins_per_ip"]; n != 0 {
		t.Fatalf("within the budget: %d refused", n)
	}
	c.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: "2345678"})
	c.expectError(protocol.CodeRateLimited)
	m := hub.Metrics()
	if m.RateLimited["failed_joins_per_ip"] != 1 || m.RateLimited["joins_per_ip"] != 0 {
		t.Fatalf("past the budget: %v", m.RateLimited)
	}
	if r := refusals(m); r["joinRoom/room_not_found"] != 2 || r["joinRoom/rate_limited"] != 1 {
		t.Fatalf("refusals %v", r)
	}
}

// dialRefused dials /ws expecting the upgrade refused, and returns its
// HTTP status.
func dialRefused(t *testing.T, url string, header http.Header) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := lobbytest.Dial(ctx, url, lobbytest.Options{Header: header})
	if err == nil {
		_ = c.CloseNow()
		t.Fatal("upgrade accepted")
	}
	if resp == nil {
		t.Fatalf("no HTTP response: %v", err)
	}
	return resp.StatusCode
}

// TestMetricsRateLimits: each rate limit counts its own refusals: at the
// limit none, past it one each.
func TestMetricsRateLimits(t *testing.T) {
	hub, url := testHub(t, func(c *Config) {
		c.MaxConnsPerIP = 2
		c.RoomsPerMinute = 1
		c.JoinsPerMinute = 1
		c.SignalsPerSecond, c.SignalBurst = 0.001, 1
		c.ChatPerSecond, c.ChatBurst = 0.001, 1
	})
	if got := slices.Sorted(maps.Keys(hub.Metrics().RateLimited)); !slices.Equal(got, slices.Sorted(slices.Values(RateLimits()))) {
		t.Fatalf("RateLimited has %v, want every limit %v", got, RateLimits())
	}
	counted := map[string]uint64{}
	for _, l := range RateLimits() {
		counted[l] = 0
	}
	// past expects one more refusal by limit than before, and no other.
	past := func(limit string) {
		t.Helper()
		counted[limit]++
		if got := hub.Metrics().RateLimited; !maps.Equal(got, counted) {
			t.Fatalf("past %s: rate limited %v, want %v", limit, got, counted)
		}
	}
	atLimit := func(step string) {
		t.Helper()
		if got := hub.Metrics().RateLimited; !maps.Equal(got, counted) {
			t.Fatalf("%s: rate limited %v, want %v", step, got, counted)
		}
	}

	ip := http.Header{"X-Test-IP": {"192.0.2.7"}}
	hello := func(name string) *client {
		c := dial(t, url, ip)
		c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: name})
		c.expect(protocol.TypeWelcome, &protocol.Welcome{})
		return c
	}
	host, guest := hello("Host"), hello("Guest")
	atLimit("two connections from one IP")
	if code := dialRefused(t, url, ip); code != http.StatusTooManyRequests {
		t.Fatalf("third connection: HTTP %d, want 429", code)
	}
	past("connections_per_ip")

	code := host.create("r", 4, "").Room.Code
	guest.join(code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	atLimit("one room, one join")

	host.request(protocol.TypeChat, &protocol.Chat{Text: "hi"})
	var cm protocol.ChatMessage
	host.expect(protocol.TypeChatMessage, &cm)
	host.expect(protocol.TypeOK, &protocol.OK{})
	guest.expect(protocol.TypeChatMessage, &cm)
	atLimit("one chat line")
	host.request(protocol.TypeChat, &protocol.Chat{Text: "hi again"})
	host.expectError(protocol.CodeRateLimited)
	past("chat_per_session")

	host.request(protocol.TypeSignal, &protocol.Signal{To: "p2", Kind: protocol.SignalOffer, SDP: "v=0"})
	host.expect(protocol.TypeOK, &protocol.OK{})
	guest.expect(protocol.TypeSignal, &protocol.Signal{})
	atLimit("one signal")
	host.request(protocol.TypeSignal, &protocol.Signal{To: "p2", Kind: protocol.SignalOffer, SDP: "v=0"})
	host.expectError(protocol.CodeRateLimited)
	past("signals_per_session")

	guest.request(protocol.TypeLeaveRoom, nil)
	guest.expect(protocol.TypeOK, &protocol.OK{})
	host.expect(protocol.TypePlayerLeft, &protocol.PlayerLeft{})
	guest.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	guest.expectError(protocol.CodeRateLimited)
	past("joins_per_ip")

	host.request(protocol.TypeLeaveRoom, nil)
	host.expect(protocol.TypeOK, &protocol.OK{})
	host.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r2", MaxPlayers: 4})
	host.expectError(protocol.CodeRateLimited)
	past("rooms_per_session")

	// Frames before hello: up to the limit are answered, the next closes.
	pre := dial(t, url, nil)
	for range FramesBeforeHello {
		pre.request(protocol.TypeChat, &protocol.Chat{Text: "no hello"})
		pre.expectError(protocol.CodeHelloRequired)
	}
	atLimit("frames before hello at the limit")
	pre.request(protocol.TypeChat, &protocol.Chat{Text: "no hello"})
	pre.expectError(protocol.CodeRateLimited)
	past("frames_before_hello")

	r := refusals(hub.Metrics())
	for _, k := range []string{"createRoom/rate_limited", "joinRoom/rate_limited", "chat/rate_limited", "signal/rate_limited", "other/rate_limited"} {
		if r[k] != 1 {
			t.Errorf("refusals %s = %d, want 1 (all: %v)", k, r[k], r)
		}
	}
	if r["chat/hello_required"] != FramesBeforeHello {
		t.Errorf("refusals chat/hello_required = %d, want %d", r["chat/hello_required"], FramesBeforeHello)
	}
}

// TestMetricsMessageRate: the per-session message rate counts what it
// refuses.
func TestMetricsMessageRate(t *testing.T) {
	hub, url := testHub(t, func(c *Config) { c.MessagesPerSecond, c.MessageBurst = 0.001, 3 })
	c := connect(t, url, "Chatty") // hello is not a message of the session
	for range 3 {
		c.request(protocol.TypeSetName, &protocol.SetName{Name: "Chatty"})
		c.expect(protocol.TypeOK, &protocol.OK{})
	}
	if n := hub.Metrics().RateLimited["messages_per_session"]; n != 0 {
		t.Fatalf("at the burst: %d refused", n)
	}
	c.request(protocol.TypeSetName, &protocol.SetName{Name: "Chatty"})
	c.expectError(protocol.CodeRateLimited)
	m := hub.Metrics()
	if n := m.RateLimited["messages_per_session"]; n != 1 {
		t.Fatalf("past the burst: %d refused, want 1", n)
	}
	// The frame was refused unread: its type is not trusted as a label.
	if r := refusals(m); r["other/rate_limited"] != 1 || r["setName/rate_limited"] != 0 {
		t.Fatalf("refusals %v", r)
	}
}

// TestMetricsLabelsBounded: a request type or code outside the protocol's
// is counted as other, never under what the client sent.
func TestMetricsLabelsBounded(t *testing.T) {
	hub, url := testHub(t, nil)
	c := connect(t, url, "Mallory")
	c.request("x'); DROP TABLE rooms; --", nil)
	c.expectError(protocol.CodeUnknownType)
	c.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 1000})
	c.expectError(protocol.CodeInvalidArgument)
	// No request yields an unknown code, so that half is shown directly.
	hub.counters.refused(protocol.TypeKick, "made_up_code")

	want := map[string]uint64{"other/unknown_type": 1, "createRoom/invalid_argument": 1, "kick/other": 1}
	if got := refusals(hub.Metrics()); !maps.Equal(got, want) {
		t.Fatalf("refusals %v, want %v", got, want)
	}
}
