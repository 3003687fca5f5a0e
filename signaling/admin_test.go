package signaling

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// TestOperatorRoomsView: Rooms lists every room newest first with its
// players in join order, the host, the creation time from the hub's clock,
// and each player's session id (what TURN credentials name).
func TestOperatorRoomsView(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	hub, url := testHub(t, func(c *Config) { c.Now = func() time.Time { return now } })
	if got := hub.Rooms(); len(got) != 0 {
		t.Fatalf("empty hub: %+v", got)
	}
	_, bob, _, code := room3(t, url)
	other := connectWith(t, url, protocol.Hello{Name: "Dee"})
	otherCode := other.create("second", 2, "pw").Room.Code
	bob.ok(protocol.TypeSetReady, &protocol.SetReady{Ready: true})

	rooms := hub.Rooms()
	if len(rooms) != 2 || rooms[0].Code != otherCode || rooms[1].Code != code {
		t.Fatalf("rooms %+v, want %s then %s", rooms, otherCode, code)
	}
	r := rooms[1]
	if r.Name != "r" || r.Host != "p1" || r.MaxPlayers != 4 || !r.Public || r.HasPassword || !r.Created.Equal(now) {
		t.Fatalf("room %+v", r)
	}
	if !rooms[0].HasPassword {
		t.Fatalf("password room %+v", rooms[0])
	}
	var names []string
	for _, p := range r.Players {
		names = append(names, p.ID+" "+p.Name)
		if !hub.SessionLive(p.Session) {
			t.Fatalf("player %+v: session not live", p)
		}
		if room, _ := hub.RoomOf(p.Session); room != code {
			t.Fatalf("player %+v: RoomOf %q", p, room)
		}
	}
	if want := "[p1 Ada p2 Bob p3 Cy]"; fmt.Sprint(names) != want {
		t.Fatalf("players %v, want %s", names, want)
	}
	if !r.Players[1].Ready || r.Players[2].Ready {
		t.Fatalf("ready flags %+v", r.Players)
	}
}

// TestOperatorKick: the kicked player is told operator_kicked and is in no
// room, the others hear it left for that reason, the ban holds as a host's
// kick does, and unknown rooms or players are errors, not no-ops.
func TestOperatorKick(t *testing.T) {
	hub, url := testHub(t, nil)
	host, bob, cy, code := room3(t, url)

	if err := hub.KickPlayer("NOPE234", "p2"); !errors.Is(err, ErrRoomNotFound) {
		t.Fatalf("unknown room: %v", err)
	}
	if err := hub.KickPlayer(code, "p99"); !errors.Is(err, ErrPlayerNotFound) {
		t.Fatalf("unknown player: %v", err)
	}
	if err := hub.KickPlayer(code, "p2"); err != nil {
		t.Fatal(err)
	}
	var rc protocol.RoomClosed
	bob.expect(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonOperatorKicked {
		t.Fatalf("kicked player told %+v", rc)
	}
	for _, c := range []*client{host, cy} {
		var pl protocol.PlayerLeft
		c.expect(protocol.TypePlayerLeft, &pl)
		if pl.ID != "p2" || pl.Reason != protocol.ReasonOperatorKicked {
			t.Fatalf("PlayerLeft %+v", pl)
		}
	}
	bob.refused(protocol.CodeNotInRoom, protocol.TypeChat, &protocol.Chat{Text: "hey"})
	bob.refused(protocol.CodeKicked, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	if err := hub.KickPlayer(code, "p2"); !errors.Is(err, ErrPlayerNotFound) {
		t.Fatalf("kicking again: %v", err)
	}
	if rooms := hub.Rooms(); len(rooms) != 1 || len(rooms[0].Players) != 2 {
		t.Fatalf("after the kick: %+v", rooms)
	}
}

// TestOperatorKickHost: removing the host of a room without migration closes
// it for the others (the host is gone), and of a migrating room hands it on.
func TestOperatorKickHost(t *testing.T) {
	hub, url := testHub(t, nil)
	host, bob, cy, code := room3(t, url)
	if err := hub.KickPlayer(code, "p1"); err != nil {
		t.Fatal(err)
	}
	var rc protocol.RoomClosed
	host.expect(protocol.TypeRoomClosed, &rc)
	if rc.Reason != protocol.ReasonOperatorKicked {
		t.Fatalf("host told %+v", rc)
	}
	for _, c := range []*client{bob, cy} {
		c.expect(protocol.TypeRoomClosed, &rc)
		if rc.Reason != protocol.ReasonHostLeft {
			t.Fatalf("member told %+v", rc)
		}
	}
	if len(hub.Rooms()) != 0 {
		t.Fatalf("rooms left: %+v", hub.Rooms())
	}

	ada := connectWith(t, url, protocol.Hello{Name: "Ada"})
	id := ada.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "m", MaxPlayers: 4, Migrate: true})
	var rj protocol.RoomJoined
	if env := ada.expect(protocol.TypeRoomJoined, &rj); env.ID != id {
		t.Fatal("reply id")
	}
	bob.join(rj.Room.Code, "")
	ada.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	if err := hub.KickPlayer(rj.Room.Code, rj.You); err != nil {
		t.Fatal(err)
	}
	bob.expect(protocol.TypePlayerLeft, &protocol.PlayerLeft{})
	var hc protocol.HostChanged
	bob.expect(protocol.TypeHostChanged, &hc)
	if hc.Previous != rj.You || hc.Host == "" {
		t.Fatalf("HostChanged %+v", hc)
	}
}

// TestOperatorCloseRoom: every member is told operator_closed and is in no
// room; the room is gone from the list and from RoomOf, and a second close
// is ErrRoomNotFound.
func TestOperatorCloseRoom(t *testing.T) {
	hub, url := testHub(t, nil)
	host, bob, cy, code := room3(t, url)
	if err := hub.CloseRoom("NOPE234"); !errors.Is(err, ErrRoomNotFound) {
		t.Fatalf("unknown room: %v", err)
	}
	sessions := hub.Rooms()[0].Players
	if err := hub.CloseRoom(code); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*client{host, bob, cy} {
		var rc protocol.RoomClosed
		c.expect(protocol.TypeRoomClosed, &rc)
		if rc.Reason != protocol.ReasonOperatorClosed {
			t.Fatalf("told %+v", rc)
		}
		c.refused(protocol.CodeNotInRoom, protocol.TypeChat, &protocol.Chat{Text: "hey"})
	}
	for _, p := range sessions {
		if _, in := hub.RoomOf(p.Session); in {
			t.Fatalf("%s still in a room", p.Name)
		}
	}
	if err := hub.CloseRoom(code); !errors.Is(err, ErrRoomNotFound) {
		t.Fatalf("closing again: %v", err)
	}
	// Closing is not a ban: a member may make or join another room.
	bob.join(host.create("again", 4, "").Room.Code, "")
}
