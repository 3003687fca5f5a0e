package signaling

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

func TestHandshake(t *testing.T) {
	hub, url := testHub(t, nil)

	c := dial(t, url, nil)
	c.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 2})
	c.expectError(protocol.CodeHelloRequired)

	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version + 1, Name: "Ada"})
	c.expectError(protocol.CodeUnsupportedVersion)

	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: strings.Repeat("n", protocol.MaxPlayerName+1)})
	c.expectError(protocol.CodeInvalidArgument)

	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "  Ada  "})
	var w protocol.Welcome
	c.expect(protocol.TypeWelcome, &w)
	if w.Version != protocol.Version || !strings.HasPrefix(w.Session, "s_") || w.MaxFrame != protocol.MaxFrame ||
		!strings.HasPrefix(w.Token, "st_") {
		t.Fatalf("welcome = %+v", w)
	}
	if id, ok := hub.SessionByToken(w.Token); !ok || id != w.Session {
		t.Fatalf("SessionByToken = %q %v", id, ok)
	}
	if _, ok := hub.SessionByToken(w.Token + "x"); ok {
		t.Fatal("a wrong token matched")
	}
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada"})
	c.expectError(protocol.CodeInvalidArgument)

	c.request("teleport", nil)
	c.expectError(protocol.CodeUnknownType)

	c.conn.Close(websocket.StatusNormalClosure, "")
	waitFor(t, "token revoked", func() bool { _, ok := hub.SessionByToken(w.Token); return !ok })
}

func TestCreateJoinLeave(t *testing.T) {
	hub, url := testHub(t, nil)
	host := connect(t, url, "Ada")
	rj := host.create("Friday", 3, "")
	if rj.You == "" || rj.Room.Host != rj.You || len(rj.Players) != 1 || len(rj.Room.Code) != protocol.RoomCodeLength {
		t.Fatalf("create reply = %+v", rj)
	}
	if len(rj.ICE.Servers) != 1 || !strings.HasSuffix(rj.ICE.Servers[0].Username, ":"+sessionOf(t, hub, rj.Room.Code, rj.You)) {
		t.Fatalf("ICE not bound to the session: %+v", rj.ICE)
	}
	code := rj.Room.Code

	bob := connect(t, url, "Bob")
	// Codes are case-insensitive and may be typed with a dash.
	brj := bob.join(strings.ToLower(code[:3])+"-"+code[3:], "")
	if brj.Room.Host != rj.You || brj.You == rj.You || len(brj.Players) != 2 || brj.Players[0].Name != "Ada" {
		t.Fatalf("join reply = %+v", brj)
	}
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	if pj.Player.ID != brj.You || pj.Player.Name != "Bob" {
		t.Fatalf("PlayerJoined = %+v", pj)
	}
	if room, ok := hub.RoomOf(sessionOf(t, hub, code, brj.You)); !ok || room != code {
		t.Fatalf("RoomOf = %q %v", room, ok)
	}

	bob.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	bob.expectError(protocol.CodeAlreadyInRoom)
	bob.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "x", MaxPlayers: 2})
	bob.expectError(protocol.CodeAlreadyInRoom)

	bob.request(protocol.TypeLeaveRoom, nil)
	bob.expect(protocol.TypeOK, &protocol.OK{})
	var pl protocol.PlayerLeft
	host.expect(protocol.TypePlayerLeft, &pl)
	if pl.ID != brj.You || pl.Reason != protocol.ReasonLeft {
		t.Fatalf("PlayerLeft = %+v", pl)
	}
	bob.request(protocol.TypeLeaveRoom, nil)
	bob.expectError(protocol.CodeNotInRoom)

	// Rejoining gets a new player id; ids are never reused within a room.
	again := bob.join(code, "")
	if again.You == brj.You {
		t.Fatalf("player id %s reused", again.You)
	}
	host.expect(protocol.TypePlayerJoined, &pj)

	// A dropped connection is a leave with reason "disconnected".
	bob.conn.Close(websocket.StatusNormalClosure, "")
	host.expect(protocol.TypePlayerLeft, &pl)
	if pl.Reason != protocol.ReasonDisconnect {
		t.Fatalf("PlayerLeft = %+v", pl)
	}
}

func sessionOf(t *testing.T, hub *Hub, code, player string) string {
	t.Helper()
	hub.mu.RLock()
	defer hub.mu.RUnlock()
	if r, ok := hub.rooms[code]; ok {
		if m := r.member(player); m != nil {
			return m.id
		}
	}
	t.Fatalf("no player %s in room %s", player, code)
	return ""
}

func TestJoinErrors(t *testing.T) {
	_, url := testHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("locked", 2, "hunter2").Room.Code

	c := connect(t, url, "Eve")
	c.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	if e := c.expectError(protocol.CodeWrongPassword); !strings.Contains(e.Message, "needs a password") {
		t.Fatalf("message %q", e.Message)
	}
	c.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code, Password: "hunter3"})
	c.expectError(protocol.CodeWrongPassword)
	c.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: "2345678"})
	c.expectError(protocol.CodeRoomNotFound)
	c.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: "not a code"})
	c.expectError(protocol.CodeInvalidArgument)

	// At the limit (2 of 2) the next join is refused as full.
	c.join(code, "hunter2")
	d := connect(t, url, "Dan")
	d.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code, Password: "hunter2"})
	d.expectError(protocol.CodeRoomFull)

	for _, bad := range []protocol.CreateRoom{
		{Name: "", MaxPlayers: 4},
		{Name: "r", MaxPlayers: protocol.MaxPlayers + 1},
		{Name: "r", MaxPlayers: 1},
	} {
		d.request(protocol.TypeCreateRoom, &bad)
		d.expectError(protocol.CodeInvalidArgument)
	}
}

func TestHostLeavingClosesRoom(t *testing.T) {
	hub, url := testHub(t, nil)
	host := connect(t, url, "Ada")
	code := host.create("r", 4, "").Room.Code
	a, b := connect(t, url, "A"), connect(t, url, "B")
	a.join(code, "")
	b.join(code, "")
	b.conn.CloseNow()
	var pj protocol.PlayerJoined
	var pl protocol.PlayerLeft
	host.expect(protocol.TypePlayerJoined, &pj)
	host.expect(protocol.TypePlayerJoined, &pj)
	host.expect(protocol.TypePlayerLeft, &pl)
	a.expect(protocol.TypePlayerJoined, &pj)
	a.expect(protocol.TypePlayerLeft, &pl)

	host.conn.Close(websocket.StatusNormalClosure, "")
	var rc protocol.RoomClosed
	a.expect(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonHostLeft {
		t.Fatalf("RoomClosed = %+v", rc)
	}
	waitFor(t, "room removed", func() bool { return hub.Stats().Rooms == 0 })

	// The remaining client is free to host its own room.
	a.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	a.expectError(protocol.CodeRoomNotFound)
	a.create("mine", 2, "")
}

func TestSignalRelay(t *testing.T) {
	_, url := testHub(t, nil)
	host := connect(t, url, "Host")
	rj := host.create("r", 4, "")
	a, b := connect(t, url, "A"), connect(t, url, "B")
	aj := a.join(rj.Room.Code, "")
	bj := b.join(rj.Room.Code, "")
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	host.expect(protocol.TypePlayerJoined, &pj)
	a.expect(protocol.TypePlayerJoined, &pj)

	// Client → host: delivered with From stamped, whatever the client claimed.
	a.request(protocol.TypeSignal, &protocol.Signal{To: rj.You, From: bj.You, Kind: protocol.SignalOffer, SDP: "v=0"})
	a.expect(protocol.TypeOK, &protocol.OK{})
	var sig protocol.Signal
	host.expect(protocol.TypeSignal, &sig)
	if sig.From != aj.You || sig.SDP != "v=0" || sig.Kind != protocol.SignalOffer {
		t.Fatalf("relayed %+v", sig)
	}
	// Host → client.
	host.request(protocol.TypeSignal, &protocol.Signal{To: aj.You, Kind: protocol.SignalCandidate, Candidate: "candidate:1", Mid: "0"})
	host.expect(protocol.TypeOK, &protocol.OK{})
	a.expect(protocol.TypeSignal, &sig)
	if sig.From != rj.You || sig.Candidate != "candidate:1" {
		t.Fatalf("relayed %+v", sig)
	}
	// Client → client is refused; so is a player of another room, or no one.
	a.request(protocol.TypeSignal, &protocol.Signal{To: bj.You, Kind: protocol.SignalOffer, SDP: "v=0"})
	a.expectError(protocol.CodeForbidden)
	other := connect(t, url, "Other")
	orj := other.create("other", 2, "")
	other.request(protocol.TypeSignal, &protocol.Signal{To: aj.You, Kind: protocol.SignalOffer, SDP: "v=0"})
	other.expectError(protocol.CodePeerNotFound)
	a.request(protocol.TypeSignal, &protocol.Signal{To: "p99", Kind: protocol.SignalOffer, SDP: "v=0"})
	a.expectError(protocol.CodePeerNotFound)
	a.request(protocol.TypeSignal, &protocol.Signal{To: aj.You, Kind: protocol.SignalOffer, SDP: "v=0"})
	a.expectError(protocol.CodePeerNotFound)
	_ = orj
	lonely := connect(t, url, "Lonely")
	lonely.request(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: "v=0"})
	lonely.expectError(protocol.CodeNotInRoom)
	// Oversized SDP is refused at the limit + 1 and accepted at the limit.
	a.request(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: strings.Repeat("s", protocol.MaxSDP+1)})
	a.expectError(protocol.CodeInvalidArgument)
	a.request(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: strings.Repeat("s", protocol.MaxSDP)})
	a.expect(protocol.TypeOK, &protocol.OK{})
	host.expect(protocol.TypeSignal, &sig)
}

func TestSignalRateLimit(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.SignalBurst = 5; c.SignalsPerSecond = 0.001 })
	host := connect(t, url, "Host")
	rj := host.create("r", 2, "")
	a := connect(t, url, "A")
	a.join(rj.Room.Code, "")
	for i := 0; i < 5; i++ {
		a.request(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalCandidate, Candidate: "c"})
		a.expect(protocol.TypeOK, &protocol.OK{})
	}
	a.request(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalCandidate, Candidate: "c"})
	a.expectError(protocol.CodeRateLimited)
}

func TestJoinFailuresRateLimitedPerIP(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.JoinFailureBurst = 3 })
	host := connect(t, url, "Host")
	code := host.create("r", 4, "").Room.Code

	guesser := dial(t, url, http.Header{"X-Test-IP": {"203.0.113.7"}})
	guesser.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Mallory"})
	guesser.expect(protocol.TypeWelcome, &protocol.Welcome{})
	for i := 0; i < 3; i++ { // at the limit: each failure is reported truthfully
		guesser.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: "2345678"})
		guesser.expectError(protocol.CodeRoomNotFound)
	}
	// Past the limit even the right code is refused, from any connection of that IP.
	guesser.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	guesser.expectError(protocol.CodeRateLimited)
	again := dial(t, url, http.Header{"X-Test-IP": {"203.0.113.7"}})
	again.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Mallory"})
	again.expect(protocol.TypeWelcome, &protocol.Welcome{})
	again.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	again.expectError(protocol.CodeRateLimited)

	// Another IP is unaffected.
	friend := dial(t, url, http.Header{"X-Test-IP": {"198.51.100.1"}})
	friend.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Friend"})
	friend.expect(protocol.TypeWelcome, &protocol.Welcome{})
	friend.join(code, "")
}

// TestConcurrentJoinsFillExactly: 20 players race for the 8 free seats of a
// room (9 places, one of them the host's). Exactly 8 get in, and every other
// one is told the room is full, not some other error a race could produce.
func TestConcurrentJoinsFillExactly(t *testing.T) {
	const free, players = 8, 20
	hub, url := testHub(t, nil)
	host := connect(t, url, "Host")
	code := host.create("r", free+1, "").Room.Code
	clients := make([]*client, players)
	for i := range clients {
		clients[i] = connect(t, url, "P")
	}
	type result struct {
		typ, code string // code: the Error's, if typ is Error
		err       error
	}
	results := make([]result, len(clients))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frame, err := protocol.Encode(protocol.TypeJoinRoom, 1, &protocol.JoinRoom{Code: code})
			if err != nil {
				results[i].err = err
				return
			}
			<-start // all writes go out together, so the joins really race
			if err := c.conn.Write(t.Context(), websocket.MessageBinary, frame); err != nil {
				results[i].err = err
				return
			}
			for {
				env, err := c.read()
				if err != nil {
					results[i].err = err
					return
				}
				if env.ID != 1 {
					continue // an event, not the reply
				}
				results[i].typ = env.Type
				if env.Type == protocol.TypeError {
					var e protocol.Error
					results[i].err = protocol.DecodeBody(env, &e)
					results[i].code = e.Code
				}
				return
			}
		}()
	}
	close(start)
	wg.Wait()
	joined, full := 0, 0
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("player %d: %v", i, r.err)
		case r.typ == protocol.TypeRoomJoined:
			joined++
		case r.typ == protocol.TypeError && r.code == protocol.CodeRoomFull:
			full++
		default:
			t.Errorf("player %d: %s %q, want RoomJoined or room_full", i, r.typ, r.code)
		}
	}
	if joined != free || full != players-free {
		t.Fatalf("joined %d, refused as full %d; want %d and %d", joined, full, free, players-free)
	}
	hub.mu.RLock()
	n := len(hub.rooms[code].members)
	hub.mu.RUnlock()
	if n != free+1 {
		t.Fatalf("room has %d members, want %d", n, free+1)
	}
}

// A page on an origin the server does not allow gets a reason it can show:
// a refused upgrade (HTTP 403) reached it only as close 1006. The upgrade is
// accepted, nothing is read, and the connection closes with 1008 and
// OriginRefusedReason; a hello sent meanwhile is never served.
func TestCrossOriginRefusedWithAReason(t *testing.T) {
	hub, url := testHub(t, nil)
	conn, _, err := websocketDialWithOrigin(t, url, "https://evil.example")
	if err != nil {
		t.Fatalf("upgrade refused: %v", err)
	}
	defer conn.CloseNow()
	hello, err := protocol.Encode(protocol.TypeHello, 1, &protocol.Hello{Version: protocol.Version, Name: "Mallory"})
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Write(t.Context(), websocket.MessageBinary, hello)
	typ, frame, err := conn.Read(t.Context())
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != OriginRefusedReason {
		t.Fatalf("read %v %x, %v; want close 1008 %q", typ, frame, err, OriginRefusedReason)
	}
	if n := hub.Metrics().OriginsRefused; n != 1 {
		t.Fatalf("origins refused %d, want 1", n)
	}
	if n := hub.Metrics().Sessions; n != 0 {
		t.Fatalf("%d sessions, want none", n)
	}
}

func TestOriginAllowed(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		patterns     []string
		ok           bool
	}{
		{"", "relay.example:8080", nil, true}, // not a browser
		{"https://relay.example:8080", "relay.example:8080", nil, true},
		{"https://RELAY.example:8080", "relay.example:8080", nil, true},
		{"https://game.example", "relay.example", nil, false},
		{"https://game.example", "relay.example", []string{"game.example"}, true},
		{"https://a.game.example", "relay.example", []string{"*.game.example"}, true},
		{"https://game.example", "relay.example", []string{"*.game.example"}, false},
		{"http://game.example", "relay.example", []string{"https://game.example"}, false},
		{"https://game.example", "relay.example", []string{"https://game.example"}, true},
		{"null", "relay.example", []string{"*"}, false}, // no host
		{"https://game.example", "relay.example", []string{"["}, false},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://"+tc.host+"/ws", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if err := originAllowed(r, tc.patterns); (err == nil) != tc.ok {
			t.Errorf("origin %q host %q patterns %q: %v, want allowed %v", tc.origin, tc.host, tc.patterns, err, tc.ok)
		}
	}
}

func TestAllowedOrigin(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.OriginPatterns = []string{"game.example"} })
	conn, _, err := websocketDialWithOrigin(t, url, "https://game.example")
	if err != nil {
		t.Fatalf("allowed origin refused: %v", err)
	}
	conn.CloseNow()
}

func websocketDialWithOrigin(t *testing.T, url, origin string) (*websocket.Conn, *http.Response, error) {
	return websocket.Dial(t.Context(), url, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
}

// TestConcurrentWrongCodesSpendExactlyTheBudget: 48 connections of one IP
// send a wrong code at once against a failed-join budget of 14. Exactly 14
// are told the truth (room_not_found) and every other one rate_limited: the
// budget is checked and spent in one step, so a race cannot buy a guesser
// extra codes. The clock stands still during a race, so nothing refills;
// between races it moves on until the budget is whole again, and the race
// runs again: against a check-then-spend budget a race overshot it in one
// run of two to eight.
func TestConcurrentWrongCodesSpendExactlyTheBudget(t *testing.T) {
	const budget, guessers, races = 14, 48, 32
	var now atomic.Int64
	now.Store(time.Unix(1795000000, 0).UnixNano())
	_, url := testHub(t, func(c *Config) {
		c.JoinFailureBurst = budget
		c.JoinFailureEvery = time.Second
		c.JoinsPerMinute = 1000
		c.MaxConnsPerIP = guessers + 1
		c.Now = func() time.Time { return time.Unix(0, now.Load()) }
	})
	ip := http.Header{"X-Test-IP": {"203.0.113.7"}}
	clients := make([]*client, guessers)
	for i := range clients {
		clients[i] = dial(t, url, ip)
		clients[i].request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Mallory"})
		clients[i].expect(protocol.TypeWelcome, &protocol.Welcome{})
	}
	for race := range races {
		codes := raceWrongCodes(t, clients)
		notFound, limited := 0, 0
		for i, c := range codes {
			switch c {
			case protocol.CodeRoomNotFound:
				notFound++
			case protocol.CodeRateLimited:
				limited++
			default:
				t.Errorf("race %d, guesser %d: %s, want room_not_found or rate_limited", race, i, c)
			}
		}
		if notFound != budget || limited != guessers-budget {
			t.Fatalf("race %d: %d codes checked, %d refused; want exactly %d checked (the budget) and %d refused",
				race, notFound, limited, budget, guessers-budget)
		}
		now.Add(int64(budget * time.Second)) // the budget refills
	}
	// Past the budget a right code is refused too, so nothing is learned.
	host := connect(t, url, "Host")
	code := host.create("r", 4, "").Room.Code
	raceWrongCodes(t, clients)
	clients[0].request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	clients[0].expectError(protocol.CodeRateLimited)
}

// raceWrongCodes has every client send joinRoom with a code no room has, all
// at once, and returns each one's Error code (or what went wrong).
func raceWrongCodes(t *testing.T, clients []*client) []string {
	codes := make([]string, len(clients))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frame, err := protocol.Encode(protocol.TypeJoinRoom, 1, &protocol.JoinRoom{Code: "2345678"})
			if err != nil {
				codes[i] = err.Error()
				return
			}
			<-start // all writes go out together, so the joins really race
			if err := c.conn.Write(t.Context(), websocket.MessageBinary, frame); err != nil {
				codes[i] = err.Error()
				return
			}
			env, err := c.read()
			var e protocol.Error
			switch {
			case err != nil:
				codes[i] = err.Error()
			case env.Type != protocol.TypeError || protocol.DecodeBody(env, &e) != nil:
				codes[i] = "reply " + env.Type
			default:
				codes[i] = e.Code
			}
		}()
	}
	close(start)
	wg.Wait()
	return codes
}
