package signaling

import (
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/bans"
	"github.com/hostrelay/hostrelay/protocol"
)

// banHub is a hub with -auth optional and a ban list on a simulated clock.
func banHub(t *testing.T) (*Hub, string, *bans.Store, *time.Time) {
	t.Helper()
	now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	store, err := bans.Open(bans.Config{MaxBans: 10, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	h, url := authHubWith(t, auth.ModeOptional, func(c *Config) { c.Bans, c.Now = store, clock })
	return h, url, store, &now
}

// helloRefused says hello and expects it refused with code, then the
// connection closed with 1008.
func helloRefused(t *testing.T, url string, hello protocol.Hello, code string) protocol.Error {
	t.Helper()
	c := dial(t, url, nil)
	hello.Version = protocol.Version
	c.request(protocol.TypeHello, &hello)
	e := c.expectError(code)
	if st := c.expectClose(); st != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v, want 1008", st)
	}
	return e
}

func TestBannedUserRefusedAtHello(t *testing.T) {
	_, url, store, now := banHub(t)
	if _, err := store.Add(bans.Request{User: "user-bob", Duration: 2 * time.Hour, Reason: "griefing"}); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(30 * time.Minute)
	e := helloRefused(t, url, protocol.Hello{Name: "Bob", Token: testToken(t, "user-bob", nil)}, protocol.CodeBanned)
	if e.Message != "your user is banned from this server for 1 h 30 min more: griefing" {
		t.Fatalf("message %q", e.Message)
	}
	// Another user, and an unverified player, are let in.
	connectAs(t, url, "Carol", testToken(t, "user-carol", nil))
	connect(t, url, "Dan")
	// At its expiry the ban is lifted by itself.
	*now = now.Add(90 * time.Minute)
	connectAs(t, url, "Bob", testToken(t, "user-bob", nil))
}

func TestBannedNetworkRefusedBeforeASession(t *testing.T) {
	h, url, store, _ := banHub(t)
	if _, err := store.Add(bans.Request{IP: "127.0.0.0/8", Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	e := helloRefused(t, url, protocol.Hello{Name: "Bob"}, protocol.CodeBanned)
	if !strings.HasPrefix(e.Message, "your network is banned from this server for 1 h more") {
		t.Fatalf("message %q", e.Message)
	}
	// Even with a token that would not verify: the network is refused
	// before the token is looked at.
	helloRefused(t, url, protocol.Hello{Name: "Bob", Token: "not-a-token"}, protocol.CodeBanned)
	if st := h.Stats(); st.Sessions != 0 {
		t.Fatalf("%d sessions made for a banned network", st.Sessions)
	}
	if err := store.Lift("ip:127.0.0.0/8"); err != nil {
		t.Fatal(err)
	}
	connect(t, url, "Bob")
}

func TestDropBannedEndsTheSessionsANewBanCovers(t *testing.T) {
	h, url, store, _ := banHub(t)
	host := connect(t, url, "Ada")
	code := host.create("r", 8, "").Room.Code
	bob, _ := connectAs(t, url, "Bob", testToken(t, "user-bob", nil))
	id := bob.join(code, "").You
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	carol, _ := connectAs(t, url, "Carol", testToken(t, "user-carol", nil))
	carol.join(code, "")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})

	if n := h.DropBanned(); n != 0 {
		t.Fatalf("dropped %d with no ban", n)
	}
	if _, err := store.Add(bans.Request{User: "user-bob", Duration: time.Hour, Reason: "spam"}); err != nil {
		t.Fatal(err)
	}
	if n := h.DropBanned(); n != 1 {
		t.Fatalf("dropped %d, want 1", n)
	}
	var e protocol.Error
	bob.until(protocol.TypeError, &e) // past Carol's playerJoined
	if e.Code != protocol.CodeBanned || !strings.Contains(e.Message, "for 1 h more: spam") {
		t.Fatalf("message %q", e.Message)
	}
	var rc protocol.RoomClosed
	bob.expect(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonOperatorKicked {
		t.Fatalf("room closed %q", rc.Reason)
	}
	if st := bob.expectClose(); st != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v", st)
	}
	var left protocol.PlayerLeft
	host.until(protocol.TypePlayerLeft, &left)
	if left.ID != id || left.Reason != protocol.ReasonOperatorKicked {
		t.Fatalf("host heard %+v", left)
	}
	// Carol stays; Bob cannot come back.
	carol.ok(protocol.TypeSetReady, &protocol.SetReady{Ready: true})
	helloRefused(t, url, protocol.Hello{Name: "Bob", Token: testToken(t, "user-bob", nil)}, protocol.CodeBanned)
}
