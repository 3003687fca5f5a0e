package signaling

import (
	"slices"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// The frozen-host vote on the hub's fake clock (hostcheck.go): who may
// report, the majority, the host's answer, the deadline, the rate limit.

// freezeRoom is a migrating room hosted by the first of names, the others
// joined in order, every frame of the joins read.
func freezeRoom(t *testing.T, url string, names ...string) (string, []*client) {
	t.Helper()
	cs := make([]*client, len(names))
	cs[0] = connect(t, url, names[0])
	code := cs[0].createRoom(protocol.CreateRoom{Name: "arena", MaxPlayers: 8, Migrate: true}).Room.Code
	for i := 1; i < len(names); i++ {
		cs[i] = connect(t, url, names[i])
		cs[i].join(code, "")
	}
	for _, c := range cs {
		c.seen()
	}
	return code, cs
}

// seen returns the types of the frames queued to c so far: it asks for an
// ok, and frames are written in order.
func (c *client) seen() []string {
	c.t.Helper()
	id := c.request(protocol.TypeUnwatchRooms, nil)
	var types []string
	for {
		env, err := c.read()
		if err != nil {
			c.t.Fatalf("waiting for ok: %v", err)
		}
		if env.Type == protocol.TypeOK && env.ID == id {
			return types
		}
		types = append(types, env.Type)
	}
}

func (c *client) reportSilent(host string) {
	c.t.Helper()
	c.ok(protocol.TypeHostSilent, &protocol.HostSilent{Host: host})
}

func TestFrozenHostReplacedByMajority(t *testing.T) {
	h, url, clock := spectatorHub(t, nil)
	code, cs := freezeRoom(t, url, "Host", "Ann", "Bob", "Cid")
	host := cs[0]
	cs[2].reportSilent("p1")
	if got := host.seen(); slices.Contains(got, protocol.TypeHostCheck) {
		t.Fatalf("one report of three checked the host: %v", got)
	}
	cs[3].reportSilent("p1")
	var check protocol.HostCheck
	host.until(protocol.TypeHostCheck, &check)
	if check.Nonce == 0 {
		t.Fatal("hostCheck without a nonce")
	}
	clock.Advance(1999 * time.Millisecond)
	if got := cs[1].seen(); len(got) != 0 {
		t.Fatalf("before the deadline the room heard %v", got)
	}
	clock.Advance(time.Millisecond)
	// Ann is the longest present, but Bob reported: his page is running.
	for _, c := range cs[1:] {
		var left protocol.PlayerLeft
		c.expect(protocol.TypePlayerLeft, &left)
		var changed protocol.HostChanged
		c.expect(protocol.TypeHostChanged, &changed)
		if left.ID != "p1" || left.Reason != protocol.ReasonUnresponsive || changed.Host != "p3" || changed.Previous != "p1" {
			t.Fatalf("%+v, %+v; want p1 unresponsive, p3 the host", left, changed)
		}
	}
	var replaced protocol.HostReplaced
	host.until(protocol.TypeHostReplaced, &replaced)
	if replaced != (protocol.HostReplaced{Room: code, Host: "p3", Reason: protocol.ReasonUnresponsive}) {
		t.Fatalf("hostReplaced %+v", replaced)
	}
	// The old host is out of the room: its late answer is ignored, and it
	// may join again as a client.
	host.ok(protocol.TypeHostAlive, &protocol.HostAlive{Nonce: check.Nonce})
	if rj := host.join(code, ""); rj.Room.Host != "p3" || rj.You == "p1" {
		t.Fatalf("rejoined %+v", rj)
	}
	m := h.Metrics()
	if m.HostChecks != 1 || m.FreezeMigrations != 1 || m.HostMigrations != 1 || m.FreezeVotesRefused != 0 {
		t.Fatalf("metrics %+v", m)
	}
}

func TestFrozenHostAnswerRefusesTheVote(t *testing.T) {
	h, url, clock := spectatorHub(t, nil)
	_, cs := freezeRoom(t, url, "Host", "Ann", "Bob")
	host := cs[0]
	cs[1].reportSilent("p1")
	cs[2].reportSilent("p1")
	var check protocol.HostCheck
	host.until(protocol.TypeHostCheck, &check)
	// A wrong nonce is no answer; the right one, just before the deadline, is.
	host.ok(protocol.TypeHostAlive, &protocol.HostAlive{Nonce: check.Nonce + 1})
	clock.Advance(1999 * time.Millisecond)
	host.ok(protocol.TypeHostAlive, &protocol.HostAlive{Nonce: check.Nonce})
	clock.Advance(time.Hour)
	for _, c := range cs {
		if got := c.seen(); len(got) != 0 {
			t.Fatalf("after the answer a member heard %v", got)
		}
	}
	// The answer settled the reports: a new vote needs a new majority.
	cs[1].reportSilent("p1")
	if got := host.seen(); len(got) != 0 {
		t.Fatalf("one fresh report after a refused vote: host heard %v", got)
	}
	cs[2].reportSilent("p1")
	host.until(protocol.TypeHostCheck, &check)
	m := h.Metrics()
	if m.HostChecks != 2 || m.FreezeVotesRefused != 1 || m.FreezeMigrations != 0 || m.HostMigrations != 0 {
		t.Fatalf("metrics %+v", m)
	}
}

func TestFrozenHostOneVotePerPlayer(t *testing.T) {
	_, url, clock := spectatorHub(t, nil)
	_, cs := freezeRoom(t, url, "Host", "Ann", "Bob", "Cid")
	for range 5 {
		cs[1].reportSilent("p1")
		clock.Advance(time.Second)
	}
	// Reports of an old host (crossed a migration) or of a non-host count for nothing.
	cs[2].reportSilent("p4")
	clock.Advance(time.Hour)
	if got := cs[0].seen(); len(got) != 0 {
		t.Fatalf("one player's reports checked the host: %v", got)
	}
	// Reports expire: one now and one from long ago are not a majority.
	cs[3].reportSilent("p1")
	if got := cs[0].seen(); len(got) != 0 {
		t.Fatalf("a stale report counted: %v", got)
	}
}

func TestFrozenHostReportRateLimit(t *testing.T) {
	h, url, clock := spectatorHub(t, nil)
	_, cs := freezeRoom(t, url, "Host", "Ann", "Bob", "Cid")
	cs[1].reportSilent("p1")
	clock.Advance(999 * time.Millisecond)
	cs[1].refused(protocol.CodeRateLimited, protocol.TypeHostSilent, &protocol.HostSilent{Host: "p1"})
	clock.Advance(time.Millisecond)
	cs[1].reportSilent("p1")
	if n := h.Metrics().RateLimited["host_reports_per_member"]; n != 1 {
		t.Fatalf("host_reports_per_member counted %d, want 1", n)
	}
}

func TestFrozenHostOneClientDecides(t *testing.T) {
	_, url, clock := spectatorHub(t, nil)
	_, cs := freezeRoom(t, url, "Host", "Ann")
	cs[1].reportSilent("p1")
	unansweredCheck(t, clock, cs[0], cs[1], "p2")
}

func TestFrozenHostAwayMembersDoNotCount(t *testing.T) {
	_, url, clock := spectatorHub(t, func(c *Config) { c.Grace = time.Minute })
	_, cs := freezeRoom(t, url, "Host", "Ann", "Bob", "Cid")
	_ = cs[3].CloseNow() // Cid's seat is held: two present, two votes needed
	cs[1].until(protocol.TypePlayerUpdated, &protocol.PlayerUpdated{})
	cs[1].reportSilent("p1")
	if got := cs[0].seen(); slices.Contains(got, protocol.TypeHostCheck) {
		t.Fatalf("one report of two present checked the host: %v", got)
	}
	cs[2].reportSilent("p1")
	unansweredCheck(t, clock, cs[0], cs[1], "p2")
}

// unansweredCheck lets the host's check go unanswered past the deadline:
// member hears that want is the host now.
func unansweredCheck(t *testing.T, clock *fakeClock, host, member *client, want string) {
	t.Helper()
	host.until(protocol.TypeHostCheck, &protocol.HostCheck{})
	clock.Advance(2 * time.Second)
	var changed protocol.HostChanged
	member.until(protocol.TypeHostChanged, &changed)
	if changed.Host != want {
		t.Fatalf("hostChanged %+v, want host %s", changed, want)
	}
}

func TestFrozenHostReportsRefused(t *testing.T) {
	_, url, _ := spectatorHub(t, nil)
	_, cs := freezeRoom(t, url, "Host", "Ann")
	cs[0].refused(protocol.CodeForbidden, protocol.TypeHostSilent, &protocol.HostSilent{Host: "p1"})
	cs[1].refused(protocol.CodeInvalidArgument, protocol.TypeHostSilent, &protocol.HostSilent{})
	plain := connect(t, url, "Dee")
	code := plain.create("no migrate", 4, "").Room.Code
	other := connect(t, url, "Eve")
	other.join(code, "")
	other.refused(protocol.CodeForbidden, protocol.TypeHostSilent, &protocol.HostSilent{Host: "p1"})
	outside := connect(t, url, "Fay")
	outside.refused(protocol.CodeNotInRoom, protocol.TypeHostSilent, &protocol.HostSilent{Host: "p1"})
}
