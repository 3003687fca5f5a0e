package signaling

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// roomList follows a subscriber's list the way a client would.
type roomList map[string]protocol.RoomSummary

func (c *client) subscribeList() roomList {
	c.t.Helper()
	var rl protocol.RoomList
	c.request(protocol.TypeWatchRooms, nil)
	c.expect(protocol.TypeRoomList, &rl)
	l := roomList{}
	for _, r := range rl.Rooms {
		l[r.Code] = r
	}
	return l
}

// apply reads one roomListUpdate into l and returns it.
func (c *client) apply(l roomList) protocol.RoomListUpdate {
	c.t.Helper()
	var u protocol.RoomListUpdate
	c.expect(protocol.TypeRoomListUpdate, &u)
	for _, code := range u.Del {
		delete(l, code)
	}
	for _, r := range u.Set {
		l[r.Code] = r
	}
	return u
}

func fastList(c *Config) { c.ListInterval = time.Millisecond }

func TestRoomListSnapshotThenDiffs(t *testing.T) {
	_, url := testHub(t, fastList)
	ada := connectWith(t, url, protocol.Hello{Name: "Ada"})
	ada.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "Lunch", MaxPlayers: 4, Public: true, Mode: "Teams", Password: "pw"})
	var rj protocol.RoomJoined
	ada.expect(protocol.TypeRoomJoined, &rj)
	secret := connectWith(t, url, protocol.Hello{Name: "Sid"})
	secret.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "Secret", MaxPlayers: 4})
	secret.expect(protocol.TypeRoomJoined, &protocol.RoomJoined{})

	w := connectWith(t, url, protocol.Hello{}) // a nameless browser may watch
	list := w.subscribeList()
	want := protocol.RoomSummary{Code: rj.Room.Code, Name: "Lunch", Host: "Ada", Players: 1, MaxPlayers: 4, Mode: "Teams", HasPassword: true}
	if len(list) != 1 || list[rj.Room.Code] != want {
		t.Fatalf("snapshot %+v, want only %+v", list, want)
	}

	// A player joins: the count changes, and only that room is sent.
	bob := connectWith(t, url, protocol.Hello{Name: "Bob"})
	bob.join(rj.Room.Code, "pw")
	if u := w.apply(list); len(u.Set) != 1 || u.Set[0].Players != 2 || len(u.Del) != 0 {
		t.Fatalf("update %+v", u)
	}
	// A new public room appears; the host renames itself; the game starts.
	cy := connectWith(t, url, protocol.Hello{Name: "Cy"})
	code2 := cy.create("Second", 2, "").Room.Code
	w.apply(list)
	if list[code2].Name != "Second" || list[code2].Host != "Cy" {
		t.Fatalf("new room %+v", list[code2])
	}
	ada.ok(protocol.TypeSetName, &protocol.SetName{Name: "Ada L."})
	w.apply(list)
	if list[rj.Room.Code].Host != "Ada L." {
		t.Fatalf("host name %+v", list[rj.Room.Code])
	}
	// Going private removes the room from the list; going public brings it back.
	ada.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "Lunch", MaxPlayers: 4, Mode: "Teams"})
	if u := w.apply(list); len(u.Del) != 1 || u.Del[0] != rj.Room.Code {
		t.Fatalf("private room update %+v", u)
	}
	ada.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "Lunch", MaxPlayers: 4, Public: true, Mode: "Teams"})
	w.apply(list)
	if _, ok := list[rj.Room.Code]; !ok {
		t.Fatal("public again but not listed")
	}
	// The host leaving closes the room: it leaves the list.
	cy.ok(protocol.TypeLeaveRoom, nil)
	if u := w.apply(list); len(u.Del) != 1 || u.Del[0] != code2 {
		t.Fatalf("closed room update %+v", u)
	}

	// Unwatching stops the updates; so does joining a room.
	w.ok(protocol.TypeUnwatchRooms, nil)
	w2 := connectWith(t, url, protocol.Hello{Name: "Dee"})
	w2.subscribeList()
	w2.join(rj.Room.Code, "pw")
	ada.ok(protocol.TypeSetName, &protocol.SetName{Name: "Ada"})
	w.ok(protocol.TypeSetName, &protocol.SetName{Name: "Wes"}) // the next frame w reads is its own ok
	w2.expect(protocol.TypePlayerUpdated, &protocol.PlayerUpdated{})
	w2.refused(protocol.CodeAlreadyInRoom, protocol.TypeWatchRooms, nil)
}

func TestRoomListMergesBursts(t *testing.T) {
	const interval = 500 * time.Millisecond
	_, url := testHub(t, func(c *Config) { c.ListInterval = interval })
	host := connectWith(t, url, protocol.Hello{Name: "Ada"})
	code := host.create("r", 16, "").Room.Code
	w := connectWith(t, url, protocol.Hello{})
	list := w.subscribeList()
	// Ten joins reach the watcher merged: at most one update per interval
	// (plus one for the interval under way when they began), each with the
	// room once. Counted against the time the joins took, not assumed to
	// fit one interval, so a slow machine tests the same rule.
	start := time.Now()
	for i := range 10 {
		connectWith(t, url, protocol.Hello{Name: fmt.Sprint("P", i)}).join(code, "")
	}
	most := int(time.Since(start)/interval) + 2
	updates := 0
	for list[code].Players != 11 {
		u := w.apply(list)
		if updates++; len(u.Set) != 1 || len(u.Del) != 0 || u.Set[0].Code != code {
			t.Fatalf("update %+v", u)
		}
	}
	if updates > most {
		t.Fatalf("10 joins in %v reached the watcher as %d updates, want at most %d (one per %v)",
			time.Since(start).Round(time.Millisecond), updates, most, interval)
	}
}

func TestRoomListSizeAndFrames(t *testing.T) {
	const max = roomsPerFrame*2 + 5 // a snapshot of three frames
	_, url := testHub(t, func(c *Config) {
		c.ListInterval = time.Millisecond
		c.MaxListedRooms = max
		c.MessageBurst = 1000
		c.MaxConnsPerIP = 1000 // every host connects from 127.0.0.1
	})
	hosts := make([]*client, max+1)
	codes := make([]string, max+1)
	for i := range hosts {
		hosts[i] = connectWith(t, url, protocol.Hello{Name: "H"})
		codes[i] = hosts[i].create(fmt.Sprint("room ", i), 2, "").Room.Code
	}
	// Past the limit: the watcher sees exactly max rooms, the newest, in a
	// reply of roomsPerFrame and updates of at most roomsPerFrame each.
	w := connectWith(t, url, protocol.Hello{})
	var rl protocol.RoomList
	w.request(protocol.TypeWatchRooms, nil)
	w.expect(protocol.TypeRoomList, &rl)
	if len(rl.Rooms) != roomsPerFrame || rl.Rooms[0].Code != codes[max] {
		t.Fatalf("first frame has %d rooms, first %s", len(rl.Rooms), rl.Rooms[0].Code)
	}
	list := roomList{}
	for _, r := range rl.Rooms {
		list[r.Code] = r
	}
	for _, n := range []int{roomsPerFrame, 5} {
		if u := w.apply(list); len(u.Set) != n {
			t.Fatalf("snapshot frame of %d rooms, want %d", len(u.Set), n)
		}
	}
	if len(list) != max {
		t.Fatalf("list of %d, want %d", len(list), max)
	}
	if _, ok := list[codes[0]]; ok {
		t.Fatal("the oldest room is listed past the limit")
	}
	// A listed room closes: the oldest, unlisted one takes its place.
	hosts[max].ok(protocol.TypeLeaveRoom, nil)
	u := w.apply(list)
	if len(u.Del) != 1 || u.Del[0] != codes[max] || len(u.Set) != 1 || u.Set[0].Code != codes[0] {
		t.Fatalf("backfill update %+v", u)
	}
	// A new room while the list is full is not sent.
	extra := connectWith(t, url, protocol.Hello{Name: "X"})
	extra.create("extra", 2, "")
	hosts[1].ok(protocol.TypeSetName, &protocol.SetName{Name: "Renamed"})
	if u := w.apply(list); len(u.Set) != 1 || u.Set[0].Host != "Renamed" {
		t.Fatalf("update %+v", u)
	}
	if len(list) != max {
		t.Fatalf("list of %d, want %d", len(list), max)
	}
}

// TestRoomsPerFrameFits: a frame of roomsPerFrame summaries with every text
// field at its longest (4-byte runes) fits in MaxFrame.
func TestRoomsPerFrameFits(t *testing.T) {
	worst := protocol.RoomSummary{
		Code: "ABC2345", Name: strings.Repeat("😀", protocol.MaxRoomName), Host: strings.Repeat("😀", protocol.MaxPlayerName),
		Players: protocol.MaxPlayers, MaxPlayers: protocol.MaxPlayers, Mode: strings.Repeat("😀", protocol.MaxMode),
		HasPassword: true, Started: true,
	}
	rooms := make([]protocol.RoomSummary, roomsPerFrame)
	for i := range rooms {
		rooms[i] = worst
	}
	dels := make([]string, delsPerFrame)
	for i := range dels {
		dels[i] = "ABC2345"
	}
	if _, err := protocol.Encode(protocol.TypeRoomListUpdate, 0, &protocol.RoomListUpdate{Set: rooms, Del: dels}); err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.Encode(protocol.TypeRoomList, 1<<31, &protocol.RoomList{Rooms: rooms}); err != nil {
		t.Fatal(err)
	}
}
