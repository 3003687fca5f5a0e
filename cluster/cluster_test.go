package cluster

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostrelay/hostrelay/cluster/natsd"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
)

// lobby is a node's lobby as these tests need it: rooms it holds and what
// the cluster told it. The real one (signaling.Hub) is exercised with the
// cluster in server's TestClusterOfThree; here the subject is what crosses
// NATS, so the lobby side is a plain record.
type lobby struct {
	mu     sync.Mutex
	rooms  map[string]protocol.RoomSummary // local rooms; Players < 0: private
	remote map[string]protocol.RoomSummary
	gone   []string
	spent  []netip.Addr
}

func newLobby() *lobby {
	return &lobby{rooms: map[string]protocol.RoomSummary{}, remote: map[string]protocol.RoomSummary{}}
}

func (l *lobby) RoomListing(code string) (protocol.RoomSummary, bool, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.rooms[code]
	return s, ok && s.Players >= 0, ok
}

func (l *lobby) LocalRooms() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []string{}
	for c := range l.rooms {
		out = append(out, c)
	}
	return out
}

func (l *lobby) RoomCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.rooms)
}

func (l *lobby) RemoteRoomSet(s protocol.RoomSummary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.remote[s.Code] = s
}

func (l *lobby) RemoteRoomGone(code string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.remote, code)
	l.gone = append(l.gone, code)
}

func (l *lobby) SpendJoinFailure(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.spent = append(l.spent, a)
}

func (l *lobby) listed(code string) (protocol.RoomSummary, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.remote[code]
	return s, ok
}

func (l *lobby) add(code string, s protocol.RoomSummary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.Code = code
	l.rooms[code] = s
}

func (l *lobby) remove(code string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.rooms, code)
}

func startNATS(t *testing.T) string { return natsd.ForTest(t) }

// fast are timings short enough for tests and in the same proportion as
// the defaults.
func fast(natsURL, id, region string) Config {
	c := DefaultConfig()
	c.NATS = natsURL
	c.ID, c.Region = id, region
	c.Heartbeat, c.DeadAfter, c.FlushInterval = 50*time.Millisecond, 150*time.Millisecond, 10*time.Millisecond
	c.Logger = slog.New(slog.DiscardHandler)
	return c
}

// addrsOf are test node id's made-up public addresses.
func addrsOf(id string) Addrs {
	return Addrs{URL: "http://" + id + ".test:8080", WS: "ws://" + id + ".test:8080/ws",
		STUN: []string{"stun:" + id + ".test:3478"}}
}

func join(t *testing.T, cfg Config) (*Cluster, *lobby) {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := newLobby()
	if err := c.Start(t.Context(), l, addrsOf(cfg.ID)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c, l
}

// openRoom makes a room on c's lobby l as the hub does: the code claimed,
// then the room noted as changed so its listing is written.
func openRoom(t *testing.T, c *Cluster, l *lobby, code string, sum protocol.RoomSummary) {
	t.Helper()
	l.add(code, sum)
	if taken, err := c.ClaimRoom(t.Context(), code); taken || err != nil {
		t.Fatal(taken, err)
	}
	c.RoomChanged(code)
}

func publicRoom(name string) protocol.RoomSummary {
	return protocol.RoomSummary{Name: name, Host: "Ada", Players: 1, MaxPlayers: 4}
}

func TestClaimRoomOnce(t *testing.T) {
	url := startNATS(t)
	a, _ := join(t, fast(url, "a", "eu"))
	b, _ := join(t, fast(url, "b", "us"))
	if taken, err := a.ClaimRoom(t.Context(), "ABC2345"); taken || err != nil {
		t.Fatal(taken, err)
	}
	if taken, err := b.ClaimRoom(t.Context(), "ABC2345"); !taken || err != nil {
		t.Fatalf("second claim: %v %v, want taken", taken, err)
	}
	if taken, err := a.ClaimRoom(t.Context(), "ABC2345"); !taken || err != nil {
		t.Fatalf("a claim of its own code again: %v %v, want taken", taken, err)
	}
}

func TestNodeIDInUse(t *testing.T) {
	url := startNATS(t)
	join(t, fast(url, "a", "eu"))
	c, err := New(fast(url, "a", "us"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context(), newLobby(), addrsOf("a")); !errors.Is(err, ErrNodeIDInUse) {
		t.Fatalf("second node a: %v, want ErrNodeIDInUse", err)
	}
}

// TestDeadNodeRoomsLeave: a node that stops without a word is called dead
// after DeadAfter; its rooms leave the lists, are remembered as lost, and
// the first live node deletes them from the bucket.
func TestDeadNodeRoomsLeave(t *testing.T) {
	url := startNATS(t)
	a, la := join(t, fast(url, "a", "eu"))
	b, lb := join(t, fast(url, "b", "us"))
	openRoom(t, b, lb, "PBC2345", publicRoom("lobby"))
	openRoom(t, b, lb, "PRV2345", protocol.RoomSummary{Players: -1})
	testwait.For(t, "b's public room on a's list", func() bool { _, ok := la.listed("PBC2345"); return ok })
	if s, _ := la.listed("PBC2345"); s.Region != "us" || s.Name != "lobby" {
		t.Fatalf("listed %+v", s)
	}
	if _, ok := la.listed("PRV2345"); ok {
		t.Fatal("a private room was listed")
	}
	for _, code := range []string{"PBC2345", "PRV2345"} {
		want := signaling.Location{URL: "ws://b.test:8080/ws", Region: "us", Base: "http://b.test:8080"}
		if loc, err := a.Locate(t.Context(), code); err != nil || loc != want {
			t.Fatalf("locate %s: %+v %v, want %+v", code, loc, err, want)
		}
	}

	b.Kill()
	killed := time.Now()
	testwait.For(t, "b's room off a's list", func() bool { _, ok := la.listed("PBC2345"); return !ok })
	if d := time.Since(killed); d > a.cfg.DeadAfter+a.cfg.Heartbeat {
		t.Errorf("b's room left after %s, want within DeadAfter %s plus a sweep", d, a.cfg.DeadAfter)
	}
	for _, code := range []string{"PBC2345", "PRV2345"} {
		if loc, err := a.Locate(t.Context(), code); loc != (signaling.Location{Lost: true}) || err != nil {
			t.Fatalf("locate %s after b died: %+v %v, want lost", code, loc, err)
		}
	}
	if loc := a.LocateNode("b"); loc != (signaling.Location{Lost: true}) {
		t.Fatalf("node b: %+v, want lost", loc)
	}
	testwait.For(t, "b's rooms deleted from the bucket", func() bool {
		_, err1 := a.roomsKV().Get(t.Context(), "PBC2345")
		_, err2 := a.roomsKV().Get(t.Context(), "PRV2345")
		return errors.Is(err1, jetstream.ErrKeyNotFound) && errors.Is(err2, jetstream.ErrKeyNotFound)
	})
	if nodes := a.Nodes(); len(nodes) != 1 || nodes[0].ID != "a" {
		t.Fatalf("nodes %+v", nodes)
	}
}

// TestLeaveIsImmediate: a node that closes deletes its rooms and presence,
// so the others drop them at once, and nothing is "lost".
func TestLeaveIsImmediate(t *testing.T) {
	url := startNATS(t)
	cfgA := fast(url, "a", "eu")
	cfgA.DeadAfter = time.Hour // only a goodbye can take b off the list here
	a, la := join(t, cfgA)
	b, lb := join(t, fast(url, "b", "us"))
	openRoom(t, b, lb, "PBC2345", publicRoom("lobby"))
	testwait.For(t, "listed", func() bool { _, ok := la.listed("PBC2345"); return ok })
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "off the list", func() bool { _, ok := la.listed("PBC2345"); return !ok })
	testwait.For(t, "b gone", func() bool { return len(a.Nodes()) == 1 })
	if loc, _ := a.Locate(t.Context(), "PBC2345"); loc != (signaling.Location{}) {
		t.Fatalf("locate after b left: %+v, want nowhere", loc)
	}
	if loc := a.LocateNode("b"); loc != (signaling.Location{}) {
		t.Fatalf("node b after it left: %+v, want unknown", loc)
	}
}

// TestRoomClosedLeavesTheList: a room gone from the lobby is deleted.
func TestRoomClosedLeavesTheList(t *testing.T) {
	url := startNATS(t)
	_, la := join(t, fast(url, "a", "eu"))
	b, lb := join(t, fast(url, "b", "us"))
	openRoom(t, b, lb, "PBC2345", publicRoom("lobby"))
	testwait.For(t, "listed", func() bool { _, ok := la.listed("PBC2345"); return ok })
	lb.add("PBC2345", protocol.RoomSummary{Name: "lobby", Host: "Ada", Players: 3, MaxPlayers: 4})
	b.RoomChanged("PBC2345")
	testwait.For(t, "three players", func() bool { s, _ := la.listed("PBC2345"); return s.Players == 3 })
	lb.remove("PBC2345")
	b.RoomChanged("PBC2345")
	testwait.For(t, "off the list", func() bool { _, ok := la.listed("PBC2345"); return !ok })
	if _, err := b.roomsKV().Get(t.Context(), "PBC2345"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("entry after close: %v", err)
	}
	// A claimed code no room took is given back.
	if taken, err := b.ClaimRoom(t.Context(), "NNN2345"); taken || err != nil {
		t.Fatal(taken, err)
	}
	b.RoomChanged("NNN2345")
	testwait.For(t, "released", func() bool {
		_, err := b.roomsKV().Get(t.Context(), "NNN2345")
		return errors.Is(err, jetstream.ErrKeyNotFound)
	})
}

// TestRoomWrittenBack: a node whose live room was deleted by another (which
// took it for dead) writes it back.
func TestRoomWrittenBack(t *testing.T) {
	url := startNATS(t)
	a, la := join(t, fast(url, "a", "eu"))
	b, lb := join(t, fast(url, "b", "us"))
	openRoom(t, b, lb, "PBC2345", publicRoom("lobby"))
	testwait.For(t, "listed", func() bool { _, ok := la.listed("PBC2345"); return ok })
	if err := a.roomsKV().Delete(t.Context(), "PBC2345"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "written back", func() bool {
		e, err := a.roomsKV().Get(t.Context(), "PBC2345")
		return err == nil && strings.Contains(string(e.Value()), `"node":"b"`)
	})
	testwait.For(t, "listed again", func() bool { _, ok := la.listed("PBC2345"); return ok })
}

// TestLocateAsksTheOwner: an entry whose room the owner no longer has (it
// closed a moment ago) sends nobody there.
func TestLocateAsksTheOwner(t *testing.T) {
	url := startNATS(t)
	a, _ := join(t, fast(url, "a", "eu"))
	b, lb := join(t, fast(url, "b", "us"))
	testwait.For(t, "a sees b", func() bool { return len(a.Nodes()) == 2 })
	if taken, err := b.ClaimRoom(t.Context(), "GNE2345"); taken || err != nil { // claimed, no room
		t.Fatal(taken, err)
	}
	if loc, err := a.Locate(t.Context(), "GNE2345"); loc != (signaling.Location{}) || err != nil {
		t.Fatalf("locate: %+v %v, want nowhere", loc, err)
	}
	lb.add("GNE2345", protocol.RoomSummary{Players: -1})
	if loc, err := a.Locate(t.Context(), "GNE2345"); loc.URL != "ws://b.test:8080/ws" || err != nil {
		t.Fatalf("locate: %+v %v, want b", loc, err)
	}
	if loc, err := a.Locate(t.Context(), "NTT2345"); loc != (signaling.Location{}) || err != nil {
		t.Fatalf("locate unknown: %+v %v", loc, err)
	}
}

func TestJoinFailuresShared(t *testing.T) {
	url := startNATS(t)
	a, la := join(t, fast(url, "a", "eu"))
	_, lb := join(t, fast(url, "b", "us"))
	ip := netip.MustParseAddr("203.0.113.7")
	a.JoinFailed(ip)
	testwait.For(t, "b spent it", func() bool {
		lb.mu.Lock()
		defer lb.mu.Unlock()
		return len(lb.spent) == 1 && lb.spent[0] == ip
	})
	la.mu.Lock()
	defer la.mu.Unlock()
	if len(la.spent) != 0 {
		t.Fatalf("a spent its own failure twice: %v", la.spent)
	}
}

func TestRegionNode(t *testing.T) {
	url := startNATS(t)
	a, _ := join(t, fast(url, "a", "eu"))
	b, lb := join(t, fast(url, "b", "us"))
	_, _ = join(t, fast(url, "c", "us"))
	testwait.For(t, "three nodes", func() bool { return len(a.Nodes()) == 3 })
	if loc, ok := a.RegionNode("eu"); !ok || loc != (signaling.Location{}) {
		t.Fatalf("eu from a: %+v %v, want a itself", loc, ok)
	}
	if _, ok := a.RegionNode("ap"); ok {
		t.Fatal("a region with no node was found")
	}
	// b holds a room, so c (fewer rooms) is where a new us room goes.
	lb.add("BRM2345", protocol.RoomSummary{Players: -1})
	if taken, err := b.ClaimRoom(t.Context(), "BRM2345"); taken || err != nil {
		t.Fatal(taken, err)
	}
	testwait.For(t, "a's mirror holds b's room", func() bool { return a.mirrored("BRM2345") })
	want := signaling.Location{URL: "ws://c.test:8080/ws", Region: "us", Base: "http://c.test:8080"}
	if loc, ok := a.RegionNode("us"); !ok || loc != want {
		t.Fatalf("us from a: %+v %v, want c", loc, ok)
	}
	if origins := a.Origins(); strings.Join(origins, ",") != "a.test:8080,b.test:8080,c.test:8080" {
		t.Fatalf("origins %v", origins)
	}
}

// TestMalformedEntriesIgnored: bytes in the buckets that no node wrote
// (a bug, an old version, anyone else NATS lets in) are skipped, and a
// node id's key cannot be claimed by another id's value.
func TestMalformedEntriesIgnored(t *testing.T) {
	url := startNATS(t)
	a, la := join(t, fast(url, "a", "eu"))
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	rooms, err := js.KeyValue(t.Context(), "hostrelay_rooms")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := js.KeyValue(t.Context(), "hostrelay_nodes")
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"MAK2345": "\xdd\xff\xff\xff\xff",
		"MAM2345": `{"node":"Z!"}`,
		"MAN2345": `{"node":"x","public":true,"listing":{"code":"OTH2345","name":"n","maxPlayers":4}}`,
		"MAP2345": `{"node":"x","public":true,"listing":{"code":"MAP2345","name":"","maxPlayers":4}}`,
		"MAQ2345": `{"node":"x","public":true,"listing":{"code":"MAQ2345","name":"n","players":9,"maxPlayers":4}}`,
		"lower":   `{"node":"x"}`,
	}
	for k, v := range bad {
		if _, err := rooms.Put(t.Context(), k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := nodes.Put(t.Context(), "y", []byte(`{"id":"z","url":"http://z","ws":"ws://z/ws"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Put(t.Context(), "w", []byte(`{"id":"w","url":"javascript:alert(1)","ws":"ws://w/ws"}`)); err != nil {
		t.Fatal(err)
	}
	// A good entry after the bad ones shows they were read and passed over.
	if _, err := rooms.Put(t.Context(), "GDD2345", []byte(`{"node":"x","public":true,"listing":{"code":"GDD2345","name":"good","maxPlayers":4,"players":1}}`)); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the good entry", func() bool { _, ok := la.listed("GDD2345"); return ok })
	la.mu.Lock()
	n := len(la.remote)
	la.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d rooms listed, want only the good one", n)
	}
	for _, node := range a.Nodes() {
		if node.ID == "y" || node.ID == "z" || node.ID == "w" {
			t.Fatalf("a malformed node was taken in: %+v", node)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	ok := fast("nats://127.0.0.1:4222", "a", "eu")
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	at := strings.Repeat("n", MaxNodeID)
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" passes
	}{
		{"node id at the limit", func(c *Config) { c.ID = at }, ""},
		{"node id past the limit", func(c *Config) { c.ID = at + "n" }, "1 to 24 bytes"},
		{"node id with an underscore", func(c *Config) { c.ID = "a_b" }, "a-z, 0-9 and '-'"},
		{"no NATS", func(c *Config) { c.NATS = "" }, "NATS URL is required"},
		{"bad region", func(c *Config) { c.Region = "EU" }, "region"},
		{"region at the limit", func(c *Config) { c.Region = strings.Repeat("r", protocol.MaxRegion) }, ""},
		{"region past the limit", func(c *Config) { c.Region = strings.Repeat("r", protocol.MaxRegion+1) }, "region"},
		{"dead in one heartbeat", func(c *Config) { c.DeadAfter = c.Heartbeat }, "at least two heartbeats"},
		{"dead in two heartbeats", func(c *Config) { c.DeadAfter = 2 * c.Heartbeat }, ""},
		{"replicas 0", func(c *Config) { c.Replicas = 0 }, "Replicas"},
		{"replicas 6", func(c *Config) { c.Replicas = 6 }, "Replicas"},
	} {
		c := ok
		tc.edit(&c)
		err := c.validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Addresses come with Start, checked there.
	if err := addrsOf("a").validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Addrs{URL: "/x", WS: "ws://a.test/ws"}).validate(); err == nil || !strings.Contains(err.Error(), "Addrs.URL") {
		t.Errorf("relative URL: %v", err)
	}
}

// mirrored reports whether c's mirror of the directory holds code.
func (c *Cluster) mirrored(code string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.where[code]
	return ok
}

// TestNATSRestart: the buckets live in NATS's memory, so a NATS restart
// loses the whole directory. Each node makes the buckets again and writes
// its part back: presence, claims and listings; the lists fill again.
func TestNATSRestart(t *testing.T) {
	dir := t.TempDir()
	ns, err := natsd.Start(t.Context(), natsd.Options{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	url := ns.URL()
	addr := strings.TrimPrefix(url, "nats://")
	a, la := join(t, fast(url, "a", "eu"))
	b, lb := join(t, fast(url, "b", "us"))
	openRoom(t, b, lb, "PBC2345", publicRoom("lobby"))
	testwait.For(t, "listed", func() bool { _, ok := la.listed("PBC2345"); return ok })

	ns.Close()
	ns2, err := natsd.Start(t.Context(), natsd.Options{Addr: addr, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	testwait.For(t, "b's room back in the bucket", func() bool {
		e, err := a.roomsKV().Get(t.Context(), "PBC2345")
		return err == nil && strings.Contains(string(e.Value()), `"node":"b"`)
	})
	testwait.For(t, "a sees b again", func() bool { return len(a.Nodes()) == 2 })
	testwait.For(t, "listed on a again", func() bool { _, ok := la.listed("PBC2345"); return ok })
	t.Logf("the directory was whole again %s after NATS came back", time.Since(restarted).Round(time.Millisecond))
	// NATS went away, not a node: a node cut off from NATS hears nobody, and
	// must not take that for everyone's death.
	if n := a.Stats().NodesLost + b.Stats().NodesLost; n != 0 {
		t.Errorf("%d nodes called dead during a NATS restart", n)
	}
	if taken, err := a.ClaimRoom(t.Context(), "PBC2345"); !taken || err != nil {
		t.Fatalf("claim of b's code after the restart: %v %v, want taken", taken, err)
	}
	// The nodes leave before this NATS stops (cleanups run after).
	for _, c := range []*Cluster{a, b} {
		if err := c.Close(t.Context()); err != nil {
			t.Error(err)
		}
	}
	ns2.Close()
}
