package signaling

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/protocol"
)

// Room bans: a host's kick with ban (issue 27, "bans that stick").

func TestKickWithBanRefusesTheUserOnEverySession(t *testing.T) {
	url := authHub(t, auth.ModeOptional, nil)
	host := connect(t, url, "Ada")
	code := host.create("r", 8, "").Room.Code
	token := testToken(t, "user-bob", nil)

	bob, _ := connectAs(t, url, "Bob", token)
	id := bob.join(code, "").You
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	host.ok(protocol.TypeKick, &protocol.Kick{ID: id, Ban: true})
	bob.expect(protocol.TypeRoomClosed, &protocol.RoomClosed{})

	// The same session, a new one with another name and no device, and one
	// more with a device: all the same user, all refused as banned.
	e := bob.refused(protocol.CodeBanned, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	if !strings.Contains(e.Message, "banned you from room "+code) {
		t.Fatalf("message %q does not say who banned whom from where", e.Message)
	}
	again, _ := connectAs(t, url, "Robert", token)
	again.refused(protocol.CodeBanned, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	third := connectWith(t, url, protocol.Hello{Name: "B0b", Token: token, Device: "another-device-0123456789"})
	third.refused(protocol.CodeBanned, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	third.refused(protocol.CodeBanned, protocol.TypeSpectate, &protocol.Spectate{Code: code})

	// Another user, and bob in another room, are not concerned.
	carol, _ := connectAs(t, url, "Carol", testToken(t, "user-carol", nil))
	carol.join(code, "")
	other := connect(t, url, "Dan").create("other", 4, "").Room.Code
	again.join(other, "")
}

// A plain kick bans the session and device only: the same verified user on
// a new session and device is let back in. This is what ban adds.
func TestPlainKickDoesNotBanTheUser(t *testing.T) {
	url := authHub(t, auth.ModeOptional, nil)
	token := testToken(t, "user-bob", nil)
	bob, _ := connectAs(t, url, "Bob", token)
	host := connect(t, url, "Ada")
	code := host.create("r", 8, "").Room.Code
	id := bob.join(code, "").You
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	host.ok(protocol.TypeKick, &protocol.Kick{ID: id})
	bob.refused(protocol.CodeKicked, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	again, _ := connectAs(t, url, "Bob", token)
	again.join(code, "")
}

// An unverified player is banned by what identifies it: its session
// (which a resume keeps) and its device. A new device is a new player.
func TestKickWithBanOfAnUnverifiedPlayer(t *testing.T) {
	_, url := testHub(t, nil)
	const device = "bobs-browser-device-0123456789"
	bob := connectWith(t, url, protocol.Hello{Name: "Bob", Device: device})
	host := connect(t, url, "Ada")
	code := host.create("r", 8, "").Room.Code
	id := bob.join(code, "").You
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	host.ok(protocol.TypeKick, &protocol.Kick{ID: id, Ban: true})
	bob.expect(protocol.TypeRoomClosed, &protocol.RoomClosed{})
	bob.refused(protocol.CodeBanned, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	reload := connectWith(t, url, protocol.Hello{Name: "Robert", Device: device})
	reload.refused(protocol.CodeBanned, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: code})
	// A private window: no device in common, nothing to recognise.
	fresh := connectWith(t, url, protocol.Hello{Name: "Bob", Device: "a-private-window-0123456789"})
	fresh.join(code, "")
}

func TestRoomBansAtAndPastTheLimit(t *testing.T) {
	r := &room{}
	_ = r.ban(&Session{id: "s_plain"}, false)
	for i := range maxBansPerRoom - 1 {
		s := &Session{id: fmt.Sprintf("s_%d", i), identity: auth.Identity{UserID: fmt.Sprintf("u_%d", i)}}
		if err := r.ban(s, true); err != nil {
			t.Fatalf("ban %d: %v", i, err)
		}
	}
	// At the limit: one plain kick and 255 bans. The 256th ban forgets the
	// plain kick, never a ban.
	if err := r.ban(&Session{id: "s_at", identity: auth.Identity{UserID: "u_at"}}, true); err != nil {
		t.Fatalf("ban at the limit: %v", err)
	}
	if kicked, _ := r.banned(&Session{id: "s_plain"}); kicked || len(r.bans) != maxBansPerRoom {
		t.Fatalf("at the limit: plain kick still held %v, %d held", kicked, len(r.bans))
	}
	// Past it: refused, nothing changed.
	if err := r.ban(&Session{id: "s_past", identity: auth.Identity{UserID: "u_past"}}, true); !errors.Is(err, errRoomBansFull) {
		t.Fatalf("ban past the limit: %v, want %v", err, errRoomBansFull)
	}
	if kicked, _ := r.banned(&Session{id: "s_other", identity: auth.Identity{UserID: "u_past"}}); kicked {
		t.Fatal("a refused ban was recorded")
	}
	if _, ban := r.banned(&Session{id: "new", identity: auth.Identity{UserID: "u_0"}}); !ban {
		t.Fatal("the oldest ban was forgotten")
	}
	// A plain kick past it is done but not remembered.
	if err := r.ban(&Session{id: "s_plain2"}, false); err != nil || len(r.bans) != maxBansPerRoom {
		t.Fatalf("plain kick on a full list: %v, %d held", err, len(r.bans))
	}
}

// Past the limit the host's kick with ban is refused with a clear message
// and the player stays; a plain kick still removes it.
func TestKickWithBanPastTheLimitOnTheWire(t *testing.T) {
	h, url := testHub(t, nil)
	bob := connect(t, url, "Bob")
	host := connect(t, url, "Ada")
	code := host.create("r", 8, "").Room.Code
	id := bob.join(code, "").You
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	h.mu.Lock()
	r := h.rooms[code]
	for i := range maxBansPerRoom {
		r.bans = append(r.bans, roomBan{session: fmt.Sprintf("s_%d", i), user: fmt.Sprintf("u_%d", i), ban: true})
	}
	h.mu.Unlock()
	e := host.refused(protocol.CodeInvalidArgument, protocol.TypeKick, &protocol.Kick{ID: id, Ban: true})
	if !strings.Contains(e.Message, fmt.Sprintf("already bans %d players", maxBansPerRoom)) {
		t.Fatalf("message %q", e.Message)
	}
	host.ok(protocol.TypeKick, &protocol.Kick{ID: id})
	bob.expect(protocol.TypeRoomClosed, &protocol.RoomClosed{})
}
