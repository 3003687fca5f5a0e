package signaling

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/protocol"
)

var testSecret = []byte("signaling-test-secret-of-32-bytes!") //nolint:gochecknoglobals // test data

func authHub(t *testing.T, mode auth.Mode, mutate func(*Config)) string {
	t.Helper()
	_, url := authHubWith(t, mode, mutate)
	return url
}

// authHubWith is authHub with the hub.
func authHubWith(t *testing.T, mode auth.Mode, mutate func(*Config)) (*Hub, string) {
	t.Helper()
	ac := auth.DefaultConfig()
	ac.Mode = mode
	ac.HS256Secret = testSecret
	v, err := auth.New(ac, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return testHub(t, func(c *Config) {
		c.Auth = v
		if mutate != nil {
			mutate(c)
		}
	})
}

func testToken(t *testing.T, sub string, extra jwt.MapClaims) string {
	t.Helper()
	c := jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range extra {
		c[k] = v
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// connectAs completes a hello with token.
func connectAs(t *testing.T, url, name, token string) (*client, protocol.Welcome) {
	t.Helper()
	c := dial(t, url, nil)
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: name, Token: token})
	var w protocol.Welcome
	c.expect(protocol.TypeWelcome, &w)
	return c, w
}

// until reads past other frames to the next of type typ.
func (c *client) until(typ string, body any) {
	c.t.Helper()
	for {
		env, err := c.read()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", typ, err)
		}
		if env.Type == typ {
			if err := protocol.DecodeBody(env, body); err != nil {
				c.t.Fatal(err)
			}
			return
		}
	}
}

func TestHelloTokenRequired(t *testing.T) {
	url := authHub(t, auth.ModeRequired, nil)
	for _, tc := range []struct{ token, code string }{
		{"", protocol.CodeAuthRequired},
		{"not-a-token", protocol.CodeAuthInvalid},
		{testToken(t, "u1", jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()}), protocol.CodeAuthInvalid},
	} {
		c := dial(t, url, nil)
		c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada", Token: tc.token})
		c.expectError(tc.code)
	}
	c, _ := connectAs(t, url, "", testToken(t, "u1", jwt.MapClaims{"name": "Ada", "meta": map[string]int{"rank": 3}}))
	rj := c.create("room", 4, "")
	if p := rj.Players[0]; !p.Verified || p.UserID != "u1" || p.Name != "Ada" || p.Meta != `{"rank":3}` {
		t.Fatalf("player = %+v, want verified u1 named by the token", p)
	}
}

func TestHelloTokenOptional(t *testing.T) {
	url := authHub(t, auth.ModeOptional, nil)
	anon := connect(t, url, "Anon")
	if p := anon.create("room", 4, "").Players[0]; p.Verified || p.UserID != "" {
		t.Fatalf("player without a token = %+v", p)
	}
	c := dial(t, url, nil)
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada", Token: "x.y.z"})
	c.expectError(protocol.CodeAuthInvalid) // a bad token is refused even where none is needed
}

func TestHelloTokenIgnoredWhenOff(t *testing.T) {
	_, url := testHub(t, nil)
	c, _ := connectAs(t, url, "Ada", "anything at all")
	if p := c.create("room", 4, "").Players[0]; p.Verified || p.UserID != "" {
		t.Fatalf("auth off: player = %+v", p)
	}
}

func TestMembersOnlyRoom(t *testing.T) {
	url := authHub(t, auth.ModeOptional, nil)
	anon := connect(t, url, "Anon")
	anon.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "club", MaxPlayers: 4, MembersOnly: true})
	anon.expectError(protocol.CodeMembersOnly)

	host, _ := connectAs(t, url, "Host", testToken(t, "host", nil))
	host.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "club", MaxPlayers: 4, MembersOnly: true})
	var rj protocol.RoomJoined
	host.expect(protocol.TypeRoomJoined, &rj)
	if !rj.Room.MembersOnly {
		t.Fatalf("room = %+v", rj.Room)
	}
	anon.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code})
	anon.expectError(protocol.CodeMembersOnly)
	member, _ := connectAs(t, url, "Member", testToken(t, "member", nil))
	if got := member.join(rj.Room.Code, ""); len(got.Players) != 2 {
		t.Fatalf("players = %+v", got.Players)
	}
}

func TestOneSeatPerUser(t *testing.T) {
	url := authHub(t, auth.ModeOptional, nil)
	host, _ := connectAs(t, url, "Host", testToken(t, "host", nil))
	rj := host.create("room", 2, "") // host and one seat: the second tab still gets in
	first, _ := connectAs(t, url, "Ada", testToken(t, "ada", nil))
	was := first.join(rj.Room.Code, "")
	var joined protocol.PlayerJoined
	host.until(protocol.TypePlayerJoined, &joined)

	second, _ := connectAs(t, url, "Ada", testToken(t, "ada", nil))
	now := second.join(rj.Room.Code, "")
	if len(now.Players) != 2 || now.You == was.You {
		t.Fatalf("second session: players %+v, you %s (first was %s)", now.Players, now.You, was.You)
	}
	var closed protocol.RoomClosed
	first.until(protocol.TypeRoomClosed, &closed)
	if closed.Reason != protocol.ReasonReplaced {
		t.Fatalf("first session told %q", closed.Reason)
	}
	var left protocol.PlayerLeft
	host.until(protocol.TypePlayerLeft, &left)
	if left.ID != was.You || left.Reason != protocol.ReasonReplaced {
		t.Fatalf("host saw %+v", left)
	}
	host.until(protocol.TypePlayerJoined, &joined)
	if joined.Player.ID != now.You || joined.Player.UserID != "ada" {
		t.Fatalf("host saw %+v join", joined.Player)
	}
	// An unverified player is no one's duplicate: the room is full.
	anon := connect(t, url, "Ada")
	anon.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code})
	anon.expectError(protocol.CodeRoomFull)
}

func TestResumeTokenMustNameTheSameUser(t *testing.T) {
	url := authHub(t, auth.ModeOptional, func(c *Config) { c.Grace = time.Minute })
	_, w := connectAs(t, url, "Ada", testToken(t, "ada", nil))
	other := dial(t, url, nil)
	other.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Resume: w.Resume, Token: testToken(t, "eve", nil)})
	other.expectError(protocol.CodeAuthInvalid)
	same := dial(t, url, nil)
	same.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Resume: w.Resume, Received: 1, Token: testToken(t, "ada", nil)})
	var back protocol.Welcome
	same.expect(protocol.TypeWelcome, &back)
	if !back.Resumed {
		t.Fatalf("welcome = %+v", back)
	}
}

// TestQuickPlaySkipsRoomsByIdentity: quick play never seats an unverified
// player in a members-only room, nor a user in a room it already sits in.
func TestQuickPlaySkipsRoomsByIdentity(t *testing.T) {
	url := authHub(t, auth.ModeOptional, nil)
	host, _ := connectAs(t, url, "Host", testToken(t, "host", nil))
	host.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "club", MaxPlayers: 4, Public: true, Mode: "duel", MembersOnly: true})
	var club protocol.RoomJoined
	host.expect(protocol.TypeRoomJoined, &club)

	anon := connect(t, url, "Anon")
	anon.request(protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "duel"})
	var got protocol.RoomJoined
	anon.expect(protocol.TypeRoomJoined, &got)
	if got.Room.Code == club.Room.Code {
		t.Fatal("quick play seated an unverified player in a members-only room")
	}
	again, _ := connectAs(t, url, "Host", testToken(t, "host", nil))
	again.request(protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "duel"})
	again.expect(protocol.TypeRoomJoined, &got)
	if got.Room.Code == club.Room.Code {
		t.Fatal("quick play seated a user in a room it already sits in")
	}
}
