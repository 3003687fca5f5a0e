package signaling

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/protocol"
)

// connectWith dials and says hello with a device id and any options.
func connectWith(t *testing.T, url string, hello protocol.Hello) *client {
	t.Helper()
	c := dial(t, url, nil)
	hello.Version = protocol.Version
	c.request(protocol.TypeHello, &hello)
	c.expect(protocol.TypeWelcome, &protocol.Welcome{})
	return c
}

// reply sends a request and returns its reply; events that arrive first (a
// chat line's own echo, a player update) are held for later reads.
func (c *client) reply(typ string, body any) (protocol.Envelope, protocol.Error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), c.readTimeout)
	defer cancel()
	env, err := c.Request(ctx, typ, body)
	if err != nil {
		c.t.Fatalf("waiting for the reply to %s: %v", typ, err)
	}
	var e protocol.Error
	if env.Type == protocol.TypeError {
		_ = protocol.DecodeBody(env, &e)
	}
	return env, e
}

func (c *client) ok(typ string, body any) {
	c.t.Helper()
	if env, e := c.reply(typ, body); env.Type != protocol.TypeOK {
		c.t.Fatalf("%s: got %s %+v, want ok", typ, env.Type, e)
	}
}

func (c *client) refused(code, typ string, body any) protocol.Error {
	c.t.Helper()
	env, e := c.reply(typ, body)
	if env.Type != protocol.TypeError || e.Code != code {
		c.t.Fatalf("%s: got %s %+v, want error %s", typ, env.Type, e, code)
	}
	return e
}

func (c *client) playerUpdated() protocol.Player {
	c.t.Helper()
	var pu protocol.PlayerUpdated
	c.expect(protocol.TypePlayerUpdated, &pu)
	return pu.Player
}

// room3 makes a room hosted by Ada with Bob and Cy, every event read.
func room3(t *testing.T, url string) (host, bob, cy *client, code string) {
	t.Helper()
	host = connectWith(t, url, protocol.Hello{Name: "Ada", Device: "device-ada-0000000"})
	code = host.create("r", 4, "").Room.Code
	bob = connectWith(t, url, protocol.Hello{Name: "Bob", Device: "device-bob-0000000"})
	bob.join(code, "")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	cy = connectWith(t, url, protocol.Hello{Name: "Cy", Device: "device-cy-00000000"})
	cy.join(code, "")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	bob.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	return host, bob, cy, code
}

func TestNameRequiredAndDuplicatesToldApart(t *testing.T) {
	_, url := testHub(t, nil)
	host := connectWith(t, url, protocol.Hello{}) // browsing without a name is fine
	host.refused(protocol.CodeNameRequired, protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 4})
	host.refused(protocol.CodeInvalidArgument, protocol.TypeSetName, &protocol.SetName{Name: strings.Repeat("n", protocol.MaxPlayerName+1)})
	host.ok(protocol.TypeSetName, &protocol.SetName{Name: "  Ada "})
	code := host.create("r", 4, "").Room.Code

	nameless := connectWith(t, url, protocol.Hello{})
	nameless.refused(protocol.CodeNameRequired, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})

	// Two more Adas (any case) become "ADA (2)" and "Ada (3)".
	a2 := connectWith(t, url, protocol.Hello{Name: "ADA"})
	if rj := a2.join(code, ""); rj.Players[1].Name != "ADA (2)" {
		t.Fatalf("second Ada is %q", rj.Players[1].Name)
	}
	var pj protocol.PlayerJoined
	host.expect(protocol.TypePlayerJoined, &pj)
	if pj.Player.Name != "ADA (2)" {
		t.Fatalf("host saw %q", pj.Player.Name)
	}
	a3 := connectWith(t, url, protocol.Hello{Name: "Ada"})
	if rj := a3.join(code, ""); rj.Players[2].Name != "Ada (3)" {
		t.Fatalf("third Ada is %+v", rj.Players)
	}
	host.expect(protocol.TypePlayerJoined, &pj)
	a2.expect(protocol.TypePlayerJoined, &pj)

	// Renaming in the room is heard by everyone, deduplicated too.
	a3.ok(protocol.TypeSetName, &protocol.SetName{Name: "ada (2)"})
	for _, c := range []*client{host, a2} {
		if p := c.playerUpdated(); p.Name != "ada (2) (2)" {
			t.Fatalf("renamed to %q", p.Name)
		}
	}
	if p := a3.playerUpdated(); p.Name != "ada (2) (2)" {
		t.Fatalf("self sees %q", p.Name)
	}
	// A suffix never pushes a name past the limit.
	long := strings.Repeat("x", protocol.MaxPlayerName)
	host.ok(protocol.TypeSetName, &protocol.SetName{Name: long})
	a2.ok(protocol.TypeSetName, &protocol.SetName{Name: long})
	if p := host.playerUpdated(); p.Name != long {
		t.Fatalf("host renamed to %q", p.Name)
	}
	host.playerUpdated()
	a2.playerUpdated() // the host's rename
	if p := a2.playerUpdated(); p.Name != strings.Repeat("x", protocol.MaxPlayerName-4)+" (2)" {
		t.Fatalf("long duplicate is %q", p.Name)
	}
}

func TestReadyAndStart(t *testing.T) {
	_, url := testHub(t, nil)
	host := connectWith(t, url, protocol.Hello{Name: "Ada"})
	rj := host.create("r", 4, "")
	bob := connectWith(t, url, protocol.Hello{Name: "Bob"})
	brj := bob.join(rj.Room.Code, "")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})

	// Host-only requests from a client are forbidden.
	bob.refused(protocol.CodeForbidden, protocol.TypeStartGame, nil)
	bob.refused(protocol.CodeForbidden, protocol.TypeKick, &protocol.Kick{ID: rj.You})
	bob.refused(protocol.CodeForbidden, protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "mine", MaxPlayers: 4})

	host.refused(protocol.CodeNotReady, protocol.TypeStartGame, nil)
	bob.ok(protocol.TypeSetReady, &protocol.SetReady{Ready: true})
	for _, c := range []*client{host, bob} {
		if p := c.playerUpdated(); p.ID != brj.You || !p.Ready {
			t.Fatalf("update %+v", p)
		}
	}
	bob.ok(protocol.TypeSetReady, &protocol.SetReady{Ready: true}) // no change, no event
	host.ok(protocol.TypeStartGame, nil)
	for _, c := range []*client{bob, host} {
		var gs protocol.GameStarted
		c.expect(protocol.TypeGameStarted, &gs)
	}
	host.refused(protocol.CodeInvalidArgument, protocol.TypeStartGame, nil)

	// A late joiner learns the game is on from roomJoined.
	late := connectWith(t, url, protocol.Hello{Name: "Late"})
	if lj := late.join(rj.Room.Code, ""); !lj.Room.Started || lj.Players[1].Ready != true {
		t.Fatalf("late join %+v", lj)
	}

	outsider := connectWith(t, url, protocol.Hello{Name: "Out"})
	outsider.refused(protocol.CodeNotInRoom, protocol.TypeSetReady, &protocol.SetReady{Ready: true})
	outsider.refused(protocol.CodeNotInRoom, protocol.TypeStartGame, nil)
}

func TestStartWithModeAndUpdateRoom(t *testing.T) {
	_, url := testHub(t, nil)
	host := connectWith(t, url, protocol.Hello{Name: "Ada"})
	host.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "r", MaxPlayers: 3, Mode: "Teams", Password: "pw"})
	var rj protocol.RoomJoined
	host.expect(protocol.TypeRoomJoined, &rj)
	if rj.Room.Mode != "Teams" || !rj.Room.HasPassword {
		t.Fatalf("room %+v", rj.Room)
	}
	bob := connectWith(t, url, protocol.Hello{Name: "Bob"})
	bob.join(rj.Room.Code, "pw")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})

	host.refused(protocol.CodeInvalidArgument, protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "r", MaxPlayers: protocol.MaxPlayers + 1})
	host.refused(protocol.CodeInvalidArgument, protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "r", MaxPlayers: 4, Mode: strings.Repeat("m", protocol.MaxMode+1)})
	// Two players are in: 2 is the lowest maximum that holds them.
	e := host.refused(protocol.CodeInvalidArgument, protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "r", MaxPlayers: 1})
	if !strings.Contains(e.Message, "maxPlayers") {
		t.Fatalf("message %q", e.Message)
	}

	// Without SetPassword the password stays.
	host.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "renamed", MaxPlayers: 2, Public: true, Mode: "Duel"})
	for _, c := range []*client{host, bob} {
		var ru protocol.RoomUpdated
		c.expect(protocol.TypeRoomUpdated, &ru)
		if ru.Room.Name != "renamed" || ru.Room.MaxPlayers != 2 || !ru.Room.Public || ru.Room.Mode != "Duel" || !ru.Room.HasPassword {
			t.Fatalf("room updated %+v", ru.Room)
		}
	}
	// The room is full at its new maximum.
	third := connectWith(t, url, protocol.Hello{Name: "Cy"})
	third.refused(protocol.CodeRoomFull, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code, Password: "pw"})

	host.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "renamed", MaxPlayers: 3, Mode: "Duel", SetPassword: true})
	var ru protocol.RoomUpdated
	host.expect(protocol.TypeRoomUpdated, &ru)
	if ru.Room.HasPassword {
		t.Fatal("password not removed")
	}
	third.join(rj.Room.Code, "")

	bob.ok(protocol.TypeSetReady, &protocol.SetReady{Ready: true})
	third.ok(protocol.TypeSetReady, &protocol.SetReady{Ready: true})
	drain := func(c *client, types ...string) {
		for _, typ := range types {
			c.expect(typ, &struct{}{})
		}
	}
	drain(host, protocol.TypePlayerJoined, protocol.TypePlayerUpdated, protocol.TypePlayerUpdated)
	host.ok(protocol.TypeStartGame, nil)
	var gs protocol.GameStarted
	host.expect(protocol.TypeGameStarted, &gs)
	if gs.Mode != "Duel" {
		t.Fatalf("started in mode %q", gs.Mode)
	}
}

func TestKickBansSessionAndDevice(t *testing.T) {
	_, url := testHub(t, nil)
	host, bob, cy, code := room3(t, url)
	hostID, bobID := "p1", "p2"

	host.refused(protocol.CodePeerNotFound, protocol.TypeKick, &protocol.Kick{ID: "p99"})
	host.refused(protocol.CodeInvalidArgument, protocol.TypeKick, &protocol.Kick{ID: hostID})
	host.refused(protocol.CodeInvalidArgument, protocol.TypeKick, &protocol.Kick{})
	cy.refused(protocol.CodeForbidden, protocol.TypeKick, &protocol.Kick{ID: bobID})

	host.ok(protocol.TypeKick, &protocol.Kick{ID: bobID})
	var rc protocol.RoomClosed
	bob.expect(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonKicked {
		t.Fatalf("kicked player told %+v", rc)
	}
	for _, c := range []*client{host, cy} {
		var pl protocol.PlayerLeft
		c.expect(protocol.TypePlayerLeft, &pl)
		if pl.ID != bobID || pl.Reason != protocol.ReasonKicked {
			t.Fatalf("PlayerLeft %+v", pl)
		}
	}
	// Bob is in no room and cannot come back: not on this connection...
	bob.refused(protocol.CodeNotInRoom, protocol.TypeChat, &protocol.Chat{Text: "hey"})
	bob.refused(protocol.CodeKicked, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	// ...nor after a reload (same device, new session)...
	bob.conn.Close(websocket.StatusNormalClosure, "")
	again := connectWith(t, url, protocol.Hello{Name: "Bobby", Device: "device-bob-0000000"})
	again.refused(protocol.CodeKicked, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	// ...while another device with the same name is welcome.
	other := connectWith(t, url, protocol.Hello{Name: "Bob", Device: "device-bob-1111111"})
	other.join(code, "")
	// The signal relay no longer reaches the kicked player's old id.
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	host.refused(protocol.CodePeerNotFound, protocol.TypeSignal, &protocol.Signal{To: bobID, Kind: protocol.SignalOffer, SDP: "x"})
}

func TestKickWithoutDeviceBansTheSession(t *testing.T) {
	_, url := testHub(t, nil)
	host := connectWith(t, url, protocol.Hello{Name: "Ada"})
	code := host.create("r", 4, "").Room.Code
	bob := connectWith(t, url, protocol.Hello{Name: "Bob"})
	brj := bob.join(code, "")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	host.ok(protocol.TypeKick, &protocol.Kick{ID: brj.You})
	bob.expect(protocol.TypeRoomClosed, &protocol.RoomClosed{})
	bob.refused(protocol.CodeKicked, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
}

func TestBanListIsBounded(t *testing.T) {
	r := &room{}
	first := &Session{id: "s_first", device: "dev-first"}
	_ = r.ban(first, false)
	for i := range maxBansPerRoom - 1 {
		_ = r.ban(&Session{id: fmt.Sprintf("s_%d", i), device: fmt.Sprintf("d_%d", i)}, false)
	}
	// At the limit every kick is still held.
	if kicked, _ := r.banned(first); len(r.bans) != maxBansPerRoom || !kicked {
		t.Fatalf("at the limit: %d kicks, first kicked %v", len(r.bans), kicked)
	}
	// Past it the oldest goes first.
	_ = r.ban(&Session{id: "s_last", device: "dev-last"}, false)
	kicked, _ := r.banned(first)
	last, _ := r.banned(&Session{id: "s_last"})
	if len(r.bans) != maxBansPerRoom || kicked || !last {
		t.Fatalf("past the limit: %d kicks, first kicked %v, last %v", len(r.bans), kicked, last)
	}
}

func TestChatRelayAndLimits(t *testing.T) {
	now := time.Unix(1795000000, 0)
	_, url := testHub(t, func(c *Config) {
		c.ChatBurst = 3
		c.ChatPerSecond = 0.001
		c.Now = func() time.Time { return now }
	})
	host, bob, cy, _ := room3(t, url)

	// Markup is relayed untouched as text; rendering it as text is the client's job.
	line := `<img src=x onerror="alert(1)"> hi`
	bob.ok(protocol.TypeChat, &protocol.Chat{Text: "  " + line + "  "})
	for _, c := range []*client{host, cy, bob} {
		var cm protocol.ChatMessage
		c.expect(protocol.TypeChatMessage, &cm)
		if cm.From != "p2" || cm.Name != "Bob" || cm.Text != line || cm.At != now.UnixMilli() {
			t.Fatalf("chat %+v", cm)
		}
	}

	// Length: at the limit accepted, past it refused.
	bob.ok(protocol.TypeChat, &protocol.Chat{Text: strings.Repeat("é", protocol.MaxChatText)})
	bob.refused(protocol.CodeInvalidArgument, protocol.TypeChat, &protocol.Chat{Text: strings.Repeat("é", protocol.MaxChatText+1)})
	bob.refused(protocol.CodeInvalidArgument, protocol.TypeChat, &protocol.Chat{Text: "   "})
	// Rate: the burst is 3; the third line is the last one.
	bob.ok(protocol.TypeChat, &protocol.Chat{Text: "three"})
	bob.expect(protocol.TypeChatMessage, &protocol.ChatMessage{})
	bob.expect(protocol.TypeChatMessage, &protocol.ChatMessage{})
	bob.refused(protocol.CodeRateLimited, protocol.TypeChat, &protocol.Chat{Text: "four"})
	// Another player's budget is its own.
	cy.ok(protocol.TypeChat, &protocol.Chat{Text: "cy"})
	for _, want := range []string{strings.Repeat("é", protocol.MaxChatText), "three", "cy"} {
		var cm protocol.ChatMessage
		host.expect(protocol.TypeChatMessage, &cm)
		if cm.Text != want {
			t.Fatalf("host got %q, want %q", cm.Text, want)
		}
	}
	outsider := connectWith(t, url, protocol.Hello{Name: "Out"})
	outsider.refused(protocol.CodeNotInRoom, protocol.TypeChat, &protocol.Chat{Text: "hello?"})
}

func TestPingsMeasuredAndSentToThoseWhoAsked(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.PingInterval = 20 * time.Millisecond })
	host := connectWith(t, url, protocol.Hello{Name: "Ada", Pings: true})
	code := host.create("r", 4, "").Room.Code
	bob := connectWith(t, url, protocol.Hello{Name: "Bob"}) // did not ask
	brj := bob.join(code, "")
	// Bob must be reading for the server's pings to him to complete: the
	// WebSocket library answers pings only inside a read.
	bobSaw := make(chan []string, 1)
	go func() {
		var types []string
		for {
			env, err := bob.read()
			if err != nil {
				types = append(types, err.Error())
				break
			}
			types = append(types, env.Type)
			if env.Type == protocol.TypeChatMessage {
				break
			}
		}
		bobSaw <- types
	}()
	// The host learns Bob's ping from playerJoined if it was measured before
	// he joined, else from playerUpdated once it is: ≥ 1 ms either way.
	// The host's own ping may come and go in between.
	ping, joined := 0, false
	for !joined || ping == 0 {
		env, err := host.read()
		if err != nil {
			t.Fatal(err)
		}
		var p protocol.Player
		switch env.Type {
		case protocol.TypePlayerJoined:
			var pj protocol.PlayerJoined
			_ = protocol.DecodeBody(env, &pj)
			p, joined = pj.Player, true
		case protocol.TypePlayerUpdated:
			var pu protocol.PlayerUpdated
			_ = protocol.DecodeBody(env, &pu)
			p = pu.Player
		default:
			t.Fatalf("host got %s", env.Type)
		}
		if p.ID == brj.You && p.Ping != 0 {
			ping = p.Ping
		}
	}
	if ping < 1 {
		t.Fatalf("ping %d", ping)
	}
	// Bob asked for none: his ping has been measured (the host saw it), yet
	// the first thing he reads is the chat line.
	host.ok(protocol.TypeChat, &protocol.Chat{Text: "hi"})
	if types := <-bobSaw; len(types) != 1 || types[0] != protocol.TypeChatMessage {
		t.Fatalf("bob read %v", types)
	}
}
