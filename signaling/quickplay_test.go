package signaling

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// quick sends QuickPlay and requires RoomJoined as its reply.
func (c *client) quick(mode string, maxPlayers int) protocol.RoomJoined {
	c.t.Helper()
	env, e := c.reply(protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: mode, MaxPlayers: maxPlayers})
	if env.Type != protocol.TypeRoomJoined {
		c.t.Fatalf("quickPlay: got %s %+v, want roomJoined", env.Type, e)
	}
	var rj protocol.RoomJoined
	if err := protocol.DecodeBody(env, &rj); err != nil {
		c.t.Fatal(err)
	}
	return rj
}

func (c *client) createRoom(m protocol.CreateRoom) protocol.RoomJoined {
	c.t.Helper()
	env, e := c.reply(protocol.TypeCreateRoom, &m)
	var rj protocol.RoomJoined
	if env.Type != protocol.TypeRoomJoined || protocol.DecodeBody(env, &rj) != nil {
		c.t.Fatalf("createRoom: got %s %+v", env.Type, e)
	}
	return rj
}

func (c *client) party(typ string, body any) protocol.PartyJoined {
	c.t.Helper()
	env, e := c.reply(typ, body)
	if env.Type != protocol.TypePartyJoined {
		c.t.Fatalf("%s: got %s %+v, want partyJoined", typ, env.Type, e)
	}
	var pj protocol.PartyJoined
	if err := protocol.DecodeBody(env, &pj); err != nil {
		c.t.Fatal(err)
	}
	return pj
}

func (c *client) partyUpdated() protocol.Party {
	c.t.Helper()
	var pu protocol.PartyUpdated
	c.expect(protocol.TypePartyUpdated, &pu)
	return pu.Party
}

// roomSizes is every room's player count and maximum, read under the lock.
func roomSizes(h *Hub) (sizes []int, overfull []string) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, r := range h.rooms {
		sizes = append(sizes, len(r.members))
		if len(r.members) > r.maxPlayers {
			overfull = append(overfull, fmt.Sprintf("%s %d/%d", r.code, len(r.members), r.maxPlayers))
		}
	}
	slices.Sort(sizes)
	return sizes, overfull
}

// 20 quick-players at once for one mode fill rooms of 8 one after the other:
// three rooms (8, 8, 4), never one over capacity, each player's RoomJoined
// naming a room it is counted in.
func TestQuickPlayConcurrentFillsRooms(t *testing.T) {
	h, url := testHub(t, nil)
	const n = 20
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = connect(t, url, fmt.Sprintf("P%d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := make(chan struct{})
	replies := make([]protocol.RoomJoined, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = c.Call(ctx, protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "Free for all"}, &replies[i])
		}()
	}
	close(start)
	wg.Wait()
	inRoom := map[string]int{}
	for i, rj := range replies {
		if errs[i] != nil {
			t.Fatalf("player %d: %v", i, errs[i])
		}
		if rj.Room.MaxPlayers != protocol.DefaultQuickPlayers || !rj.Room.Public || rj.Room.Mode != "Free for all" || rj.Room.HasPassword {
			t.Fatalf("player %d got room %+v", i, rj.Room)
		}
		if len(rj.Players) > rj.Room.MaxPlayers || rj.Players[len(rj.Players)-1].ID != rj.You {
			t.Fatalf("player %d: you %s, players %+v", i, rj.You, rj.Players)
		}
		inRoom[rj.Room.Code]++
	}
	var counts []int
	for _, c := range inRoom {
		counts = append(counts, c)
	}
	slices.Sort(counts)
	sizes, overfull := roomSizes(h)
	if !slices.Equal(counts, []int{4, 8, 8}) || !slices.Equal(sizes, counts) || overfull != nil {
		t.Fatalf("players per room from replies %v, in the hub %v (overfull %v), want [4 8 8]", counts, sizes, overfull)
	}
}

// The fullest open room of the mode is chosen; rooms with a password, private,
// full, started or of another mode never are; with none, a public room of
// the mode is made with the quick-player as host.
func TestQuickPlayChoosesFullestOpenRoom(t *testing.T) {
	_, url := testHub(t, nil)
	const mode = "Teams"
	// fill makes a room with a host and extra members.
	fill := func(m protocol.CreateRoom, extra int) (*client, protocol.RoomInfo) {
		t.Helper()
		host := connect(t, url, "Host")
		rj := host.createRoom(m)
		for i := range extra {
			c := connect(t, url, fmt.Sprintf("M%d", i))
			c.join(rj.Room.Code, m.Password)
			host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
		}
		return host, rj.Room
	}
	_, small := fill(protocol.CreateRoom{Name: "small", MaxPlayers: 4, Public: true, Mode: mode}, 0)
	_, fuller := fill(protocol.CreateRoom{Name: "fuller", MaxPlayers: 4, Public: true, Mode: mode}, 1)
	fill(protocol.CreateRoom{Name: "locked", MaxPlayers: 8, Public: true, Mode: mode, Password: "pw"}, 2)
	fill(protocol.CreateRoom{Name: "private", MaxPlayers: 8, Mode: mode}, 2)
	fill(protocol.CreateRoom{Name: "full", MaxPlayers: 4, Public: true, Mode: mode}, 3)
	fill(protocol.CreateRoom{Name: "other mode", MaxPlayers: 8, Public: true, Mode: "Duel"}, 2)
	starter, started := fill(protocol.CreateRoom{Name: "started", MaxPlayers: 8, Public: true, Mode: mode}, 0)
	starter.ok(protocol.TypeStartGame, nil)
	starter.expect(protocol.TypeGameStarted, &protocol.GameStarted{})

	if rj := connect(t, url, "Q1").quick(mode, 0); rj.Room.Code != fuller.Code || len(rj.Players) != 3 {
		t.Fatalf("first quick play went to %s (%d players), want %s", rj.Room.Name, len(rj.Players), fuller.Name)
	}
	if rj := connect(t, url, "Q2").quick(mode, 0); rj.Room.Code != fuller.Code || len(rj.Players) != 4 {
		t.Fatalf("second quick play went to %s (%d players), want %s", rj.Room.Name, len(rj.Players), fuller.Name)
	}
	// fuller is full now: small, not the started room, is next.
	if rj := connect(t, url, "Q3").quick(mode, 0); rj.Room.Code != small.Code {
		t.Fatalf("third quick play went to %s, want %s (not %s)", rj.Room.Name, small.Name, started.Name)
	}
	rj := connect(t, url, "Q4").quick("Capture", 3)
	if rj.Room.Name != "Quick play: Capture" || rj.Room.Mode != "Capture" || rj.Room.MaxPlayers != 3 ||
		!rj.Room.Public || rj.Room.HasPassword || rj.Room.Host != rj.You || len(rj.Players) != 1 {
		t.Fatalf("new quick play room %+v, you %s, players %+v", rj.Room, rj.You, rj.Players)
	}
}

// A party of 3 lands in one room with seats for all three, the leader's
// RoomJoined as the reply and the friends' as events, all before any event
// of the room.
func TestQuickPlayPartyLandsTogether(t *testing.T) {
	_, url := testHub(t, nil)
	host := connect(t, url, "Host")
	room := host.createRoom(protocol.CreateRoom{Name: "r", MaxPlayers: 4, Public: true, Mode: "Duel"}).Room

	leader, ann, bob := connect(t, url, "Leader"), connect(t, url, "Ann"), connect(t, url, "Bob")
	pj := leader.party(protocol.TypeCreateParty, nil)
	if pj.You != pj.Party.Leader || len(pj.Party.Members) != 1 || pj.Party.Members[0].Name != "Leader" {
		t.Fatalf("created %+v", pj)
	}
	code := pj.Party.Code
	if got := ann.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code}); len(got.Party.Members) != 2 || got.You != "m2" {
		t.Fatalf("ann joined %+v", got)
	}
	leader.partyUpdated()
	// A typed code is normalised like a room code.
	bob.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code[:3] + "-" + code[3:]})
	if p := leader.partyUpdated(); len(p.Members) != 3 || p.Members[2].Name != "Bob" || p.Leader != "m1" {
		t.Fatalf("leader sees %+v", p)
	}
	ann.partyUpdated()

	rj := leader.quick("Duel", 0)
	if rj.Room.Code != room.Code || len(rj.Players) != 2 {
		t.Fatalf("leader got %+v with %d players, want room %s with 2", rj.Room, len(rj.Players), room.Code)
	}
	for _, f := range []*client{ann, bob} {
		var got protocol.RoomJoined
		env := f.expect(protocol.TypeRoomJoined, &got)
		if env.ID != 0 || got.Room.Code != room.Code || got.Players[len(got.Players)-1].ID != got.You || len(got.ICE.Servers) == 0 {
			t.Fatalf("friend got id %d %+v", env.ID, got)
		}
	}
	if rj := ann.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{}); rj.Type == "" {
		t.Fatal("ann did not hear bob")
	}
	for range 3 {
		host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	}
	// The party outlives the game: still three, still led by its leader.
	leader.refused(protocol.CodeAlreadyInParty, protocol.TypeCreateParty, nil)
}

// A party bigger than every open room's free seats gets a new room of its
// own, and nobody is split off into the room with too few seats.
func TestQuickPlayPartyNeedsSeatsForAll(t *testing.T) {
	h, url := testHub(t, nil)
	host := connect(t, url, "Host")
	room := host.createRoom(protocol.CreateRoom{Name: "r", MaxPlayers: 4, Public: true, Mode: "Duel"}).Room
	connect(t, url, "Guest").join(room.Code, "")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})

	leader, ann, bob := connect(t, url, "Leader"), connect(t, url, "Ann"), connect(t, url, "Bob")
	code := leader.party(protocol.TypeCreateParty, nil).Party.Code
	ann.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
	bob.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
	rj := leader.quick("Duel", 0)
	if rj.Room.Code == room.Code || rj.Room.Host != rj.You || rj.Room.MaxPlayers != protocol.DefaultQuickPlayers {
		t.Fatalf("party of 3 went to %+v, want a new room (not %s, which has 2 seats)", rj.Room, room.Code)
	}
	for _, f := range []*client{ann, bob} {
		for {
			var got protocol.RoomJoined
			env, err := f.read()
			if err != nil {
				t.Fatal(err)
			}
			if env.Type == protocol.TypePartyUpdated {
				continue
			}
			if env.Type != protocol.TypeRoomJoined || protocol.DecodeBody(env, &got) != nil || got.Room.Code != rj.Room.Code {
				t.Fatalf("friend got %s %+v, want roomJoined %s", env.Type, got, rj.Room.Code)
			}
			break
		}
	}
	if sizes, _ := roomSizes(h); !slices.Equal(sizes, []int{2, 3}) {
		t.Fatalf("room sizes %v, want [2 3]", sizes)
	}
}

// Party sizes and errors at and past their limits.
func TestPartyLimits(t *testing.T) {
	_, url := testHub(t, nil)
	leader := connect(t, url, "Leader")
	code := leader.party(protocol.TypeCreateParty, nil).Party.Code
	members := []*client{leader}
	for i := 1; i < protocol.MaxPartySize; i++ {
		c := connect(t, url, fmt.Sprintf("F%d", i))
		c.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
		members = append(members, c)
	}
	late := connect(t, url, "Late")
	late.refused(protocol.CodePartyFull, protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
	late.refused(protocol.CodePartyNotFound, protocol.TypeJoinParty, &protocol.JoinParty{Code: "ZZZZZZZ"})
	late.refused(protocol.CodeInvalidArgument, protocol.TypeJoinParty, &protocol.JoinParty{Code: "nope"})
	late.refused(protocol.CodeNotInParty, protocol.TypeLeaveParty, nil)
	members[1].refused(protocol.CodeAlreadyInParty, protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
	members[1].refused(protocol.CodeAlreadyInParty, protocol.TypeCreateParty, nil)
	members[1].refused(protocol.CodeForbidden, protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "Duel"})
	nameless := dial(t, url, nil)
	nameless.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version})
	nameless.expect(protocol.TypeWelcome, &protocol.Welcome{})
	nameless.refused(protocol.CodeNameRequired, protocol.TypeCreateParty, nil)
	nameless.refused(protocol.CodeNameRequired, protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
	// A party of MaxPartySize does not fit a new room of 2.
	leader.refused(protocol.CodeInvalidArgument, protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "Duel", MaxPlayers: 2})
	// A member still in a room holds the party back, by name.
	members[2].createRoom(protocol.CreateRoom{Name: "mine", MaxPlayers: 2})
	if e := leader.refused(protocol.CodeAlreadyInRoom, protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "Duel"}); e.Message == "" {
		t.Fatal("no message")
	}
	members[2].ok(protocol.TypeLeaveRoom, nil)
	// One member leaves: one seat is free again.
	members[3].ok(protocol.TypeLeaveParty, nil)
	late.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
}

func TestQuickPlayValidates(t *testing.T) {
	_, url := testHub(t, nil)
	c := connect(t, url, "Ann")
	for _, m := range []protocol.QuickPlay{
		{},
		{Mode: "   "},
		{Mode: "a mode far longer than twenty-four"},
		{Mode: "Duel", MaxPlayers: 1},
		{Mode: "Duel", MaxPlayers: protocol.MaxPlayers + 1},
	} {
		c.refused(protocol.CodeInvalidArgument, protocol.TypeQuickPlay, &m)
	}
	if rj := c.quick("Duel", protocol.MaxPlayers); rj.Room.MaxPlayers != protocol.MaxPlayers {
		t.Fatalf("max players %d", rj.Room.MaxPlayers)
	}
	c.refused(protocol.CodeAlreadyInRoom, protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "Duel"})
}

// Quick play spends the joins-per-IP budget as a join does, and a quick play
// that makes a room spends the session's room budget.
func TestQuickPlayRateLimits(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.JoinsPerMinute, c.RoomsPerMinute = 2, 1 })
	a := connect(t, url, "Ann")
	a.quick("Duel", 0)
	a.ok(protocol.TypeLeaveRoom, nil)
	a.refused(protocol.CodeRateLimited, protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "Teams"}) // a second room
	b := connect(t, url, "Bob")
	b.refused(protocol.CodeRateLimited, protocol.TypeQuickPlay, &protocol.QuickPlay{Mode: "Duel"}) // the 3rd join from 127.0.0.1 (a refused one counts)
}

// A member whose session ends leaves the party; a leader who leaves hands
// the party to the longest-present member; the last one out ends it.
func TestPartyMemberDisconnects(t *testing.T) {
	_, url := testHub(t, nil)
	leader, ann, bob := connect(t, url, "Leader"), connect(t, url, "Ann"), connect(t, url, "Bob")
	code := leader.party(protocol.TypeCreateParty, nil).Party.Code
	ann.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
	bob.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
	leader.partyUpdated()
	leader.partyUpdated()
	ann.partyUpdated()

	_ = bob.CloseNow()
	if p := leader.partyUpdated(); len(p.Members) != 2 || p.Leader != "m1" {
		t.Fatalf("after bob dropped: %+v", p)
	}
	ann.partyUpdated()
	_ = leader.CloseNow()
	if p := ann.partyUpdated(); len(p.Members) != 1 || p.Leader != "m2" || p.Members[0].Name != "Ann" {
		t.Fatalf("after the leader dropped: %+v", p)
	}
	// Ann leads now: her quick play takes the party (herself) along.
	if rj := ann.quick("Duel", 0); rj.Room.Host != rj.You {
		t.Fatalf("ann's quick play %+v", rj)
	}
	ann.ok(protocol.TypeLeaveParty, nil)
	connect(t, url, "Late").refused(protocol.CodePartyNotFound, protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
}

// A renamed member is renamed in the party too.
func TestPartyRename(t *testing.T) {
	_, url := testHub(t, nil)
	leader, ann := connect(t, url, "Leader"), connect(t, url, "Ann")
	code := leader.party(protocol.TypeCreateParty, nil).Party.Code
	ann.party(protocol.TypeJoinParty, &protocol.JoinParty{Code: code})
	leader.partyUpdated()
	ann.ok(protocol.TypeSetName, &protocol.SetName{Name: "Annie"})
	if p := leader.partyUpdated(); p.Members[1].Name != "Annie" {
		t.Fatalf("leader sees %+v", p)
	}
}
