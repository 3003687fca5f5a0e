package signaling

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// eventLog records room events.
type eventLog struct {
	mu     sync.Mutex
	events []RoomEvent
}

func (l *eventLog) OnRoomEvent(e RoomEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// summary is the events as "type room player host reason" lines, room codes
// replaced by R.
func (l *eventLog) summary(code string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if e.Time.IsZero() {
			out = append(out, "no time")
		}
		room := e.Room
		if room == code {
			room = "R"
		}
		out = append(out, fmt.Sprintf("%s %s %s %s %s", e.Type, room, e.Player, e.Host, e.Reason))
	}
	return out
}

// Every event of a room's life is reported, in order, with its ids.
func TestRoomEvents(t *testing.T) {
	var log eventLog
	_, url := testHub(t, func(c *Config) { c.Events = &log })
	host := connect(t, url, "host")
	rj := host.create("evented", 4, "")
	code := rj.Room.Code
	a := connect(t, url, "a")
	a.join(code, "")
	b := connect(t, url, "b")
	b.join(code, "")
	host.ok(protocol.TypeKick, &protocol.Kick{ID: "p3"})
	a.ok(protocol.TypeSetReady, &protocol.SetReady{Ready: true})
	host.ok(protocol.TypeStartGame, nil)
	a.ok(protocol.TypeLeaveRoom, nil)
	host.ok(protocol.TypeLeaveRoom, nil)

	// And a migrating room: the host leaves, a member takes over.
	m := connect(t, url, "m")
	m.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "mig", MaxPlayers: 4, Migrate: true})
	var mj protocol.RoomJoined
	m.expect(protocol.TypeRoomJoined, &mj)
	n := connect(t, url, "n")
	n.join(mj.Room.Code, "")
	m.ok(protocol.TypeLeaveRoom, nil)

	want := []string{
		"room.created R p1 p1 ", "player.joined R p2 p1 ", "player.joined R p3 p1 ",
		"player.left R p3 p1 kicked", "room.started R p1 p1 ", "player.left R p2 p1 left",
		"player.left R p1  left", "room.closed R   host_left",
		"room.created " + mj.Room.Code + " p1 p1 ", "player.joined " + mj.Room.Code + " p2 p1 ",
		"player.left " + mj.Room.Code + " p1  left", "host.changed " + mj.Room.Code + " p1 p2 ",
	}
	got := log.summary(code)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// joinChecker answers with err after delay, recording what it was asked.
type joinChecker struct {
	mu    sync.Mutex
	asked []JoinRequest
	err   error
	delay time.Duration
}

func (c *joinChecker) CheckJoin(ctx context.Context, j JoinRequest) error {
	c.mu.Lock()
	c.asked = append(c.asked, j)
	err, delay := c.err, c.delay
	c.mu.Unlock()
	time.Sleep(delay)
	return err
}

func (c *joinChecker) set(err error, delay time.Duration) {
	c.mu.Lock()
	c.err, c.delay = err, delay
	c.mu.Unlock()
}

// The join check is asked before create, join and quick play; a refusal is
// join_refused with the backend's message (cut to MaxRefusalMessage, one
// line), any other error is unavailable, and nothing changed either way.
func TestJoinCheck(t *testing.T) {
	check := &joinChecker{}
	var log eventLog
	_, url := testHub(t, func(c *Config) { c.JoinCheck, c.Events = check, &log })
	host := connect(t, url, "host")
	rj := host.create("checked", 4, "")
	a := connect(t, url, "a")

	check.set(&JoinRefused{Message: "banned\nuntil tomorrow"}, 0)
	a.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code})
	if e := a.expectError(protocol.CodeJoinRefused); e.Message != "banned until tomorrow" {
		t.Errorf("message %q", e.Message)
	}
	check.set(&JoinRefused{Message: strings.Repeat("é", MaxRefusalMessage)}, 0) // 2 bytes each
	a.request(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "mine", MaxPlayers: 2})
	if e := a.expectError(protocol.CodeJoinRefused); len(e.Message) != MaxRefusalMessage {
		t.Errorf("message of %d bytes, want %d (at the limit)", len(e.Message), MaxRefusalMessage)
	}
	check.set(&JoinRefused{Message: strings.Repeat("x", MaxRefusalMessage+1)}, 0)
	a.request(protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "duel"})
	if e := a.expectError(protocol.CodeJoinRefused); len(e.Message) != MaxRefusalMessage {
		t.Errorf("message of %d bytes, want %d (past the limit, cut)", len(e.Message), MaxRefusalMessage)
	}
	check.set(errors.New("backend down"), 0)
	a.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code})
	a.expectError(protocol.CodeUnavailable)

	check.set(nil, 0)
	a.join(rj.Room.Code, "")
	// Already in a room: refused under the lock, the backend not asked.
	a.refused(protocol.CodeAlreadyInRoom, protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "again", MaxPlayers: 2})

	check.mu.Lock()
	asked := check.asked
	check.mu.Unlock()
	var actions []string
	for _, j := range asked {
		actions = append(actions, j.Action+" "+j.Name)
		if j.Session == "" {
			t.Errorf("%+v: no session", j)
		}
	}
	if got, want := strings.Join(actions, ","), "create host,join a,create a,quickplay a,join a,join a"; got != want {
		t.Errorf("asked %s, want %s", got, want)
	}
	if asked[0].RoomName != "checked" || asked[1].Room != rj.Room.Code {
		t.Errorf("asked %+v", asked[:2])
	}
	// Refused requests made nothing: one room, one join.
	if got := log.summary(rj.Room.Code); len(got) != 2 {
		t.Errorf("events %v, want a create and a join", got)
	}
}

// A slow join check holds up only the connection that asked: others create,
// join and chat meanwhile.
func TestJoinCheckSlowBlocksOnlyItsConnection(t *testing.T) {
	check := &joinChecker{}
	_, url := testHub(t, func(c *Config) { c.JoinCheck = check })
	host := connect(t, url, "host")
	rj := host.create("room", 8, "")
	check.set(nil, 2*time.Second)
	slow := connect(t, url, "slow")
	slow.request(protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code})
	time.Sleep(50 * time.Millisecond) // slow is in the check now
	check.set(nil, 0)
	start := time.Now()
	for i := range 5 {
		c := connect(t, url, fmt.Sprintf("fast%d", i))
		c.join(rj.Room.Code, "")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("5 joins took %v while another connection's check hung", d)
	}
	var sj protocol.RoomJoined
	slow.expect(protocol.TypeRoomJoined, &sj)
}
