package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/cluster/natsd"
	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

// startNATS runs an embedded NATS server with JetStream for one test.
func startNATS(t *testing.T) string { return natsd.ForTest(t) }

// startNode runs a cluster node in this process.
func startNode(t *testing.T, natsURL, id, region string, extra ...string) *Server {
	t.Helper()
	return startServer(t, append([]string{"-nats", natsURL, "-node-id", id, "-region", region}, extra...)...)
}

// nodeProcess is a node in a process of its own, so the test can kill it
// as a crash would: no goodbye to the cluster, no close frames.
type nodeProcess struct {
	cmd  *exec.Cmd
	http string
}

func startNodeProcess(t *testing.T, natsURL, id, region string) *nodeProcess {
	t.Helper()
	bin := os.Getenv("HOSTRELAY_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "hostrelay")
		build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/hostrelay")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	cmd := exec.CommandContext(t.Context(), bin, "-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-public-ip", "127.0.0.1", "-turn-secret", "0123456789abcdef0123456789abcdef", "-log-format", "json",
		"-nats", natsURL, "-node-id", id, "-region", region)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct {
				Msg  string `json:"msg"`
				HTTP string `json:"http"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" && line.HTTP != "" {
				addr <- line.HTTP
			}
			t.Log(id + ": " + sc.Text())
		}
	}()
	select {
	case a := <-addr:
		return &nodeProcess{cmd: cmd, http: a}
	case <-time.After(60 * time.Second):
		t.Fatal("node process did not start listening")
		return nil
	}
}

func clusterClient(t *testing.T, httpAddr, name string) *client.Lobby {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	l, err := client.Dial(ctx, "ws://"+httpAddr+"/ws", client.Options{Name: name,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func waitEvent[T client.Event](t *testing.T, r *client.Room) T {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-r.Events():
			if !ok {
				var zero T
				t.Fatalf("events closed waiting for %T (room err %v)", zero, r.Err())
			}
			if v, ok := e.(T); ok {
				return v
			}
		case <-timeout:
			var zero T
			t.Fatalf("timed out waiting for %T", zero)
		}
	}
}

// gamePacketsFlow sends on the unreliable game channel from a to b until
// one arrives (it may drop).
func gamePacketsFlow(t *testing.T, from, to *client.Room) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("no game packet arrived")
		}
		if err := from.Send(to.You(), client.Game, []byte("input")); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-to.Messages():
			if m.Channel == client.Game && string(m.Data) == "input" && m.From == from.You() {
				return
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func listed(w *client.RoomWatch, code string) (protocol.RoomSummary, bool) {
	i := slices.IndexFunc(w.Rooms(), func(r protocol.RoomSummary) bool { return r.Code == code })
	if i < 0 {
		return protocol.RoomSummary{}, false
	}
	return w.Rooms()[i], true
}

func waitListed(t *testing.T, w *client.RoomWatch, code string, want bool, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		if _, ok := listed(w, code); ok == want {
			return
		}
		select {
		case <-w.Changed():
		case <-deadline:
			t.Fatalf("room %s listed=%v after %s, want %v; list %+v", code, !want, within, want, w.Rooms())
		}
	}
}

// TestClusterOfThree: three nodes on one NATS. A room made on A is joined
// by code on C (the client moves to A) and game packets flow relay/relay
// through A's TURN; a create on A asking for B's region lands on B; every
// node lists every node's public rooms with their region; a share link on
// C is sent to A; then B is killed (SIGKILL) and within 5 s its room leaves
// the lists, its player hears room_lost, and a join by its code says
// room_lost on any node.
func TestClusterOfThree(t *testing.T) {
	natsURL := startNATS(t)
	a := startNode(t, natsURL, "a", "eu", "-metrics-addr", "127.0.0.1:0")
	b := startNodeProcess(t, natsURL, "b", "us")
	c := startNode(t, natsURL, "c", "ap")
	aHTTP, cHTTP := a.Addrs().HTTP, c.Addrs().HTTP
	ctx := t.Context()

	// Every node sees three.
	for _, addr := range []string{aHTTP, b.http, cHTTP} {
		testwait.For(t, "three nodes on "+addr, func() bool {
			var rep nodesReply
			return getJSON(addr+"/api/v1/nodes", &rep) == nil && len(rep.Nodes) == 3
		})
	}

	watchC, err := clusterClient(t, cHTTP, "Watcher").WatchRooms(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Made on A, joined by code on C.
	hostA := clusterClient(t, aHTTP, "Ada")
	roomA, err := hostA.CreateRoom(ctx, protocol.CreateRoom{Name: "eu game", MaxPlayers: 4, Public: true})
	if err != nil {
		t.Fatal(err)
	}
	joinerL := clusterClient(t, cHTTP, "Cy")
	joined, err := joinerL.JoinRoom(ctx, roomA.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	if node, region := joinerL.Node(); node != "a" || region != "eu" || joinerL.URL() != "ws://"+aHTTP+"/ws" {
		t.Fatalf("joiner on node %q region %q url %s, want a, eu, A's", node, region, joinerL.URL())
	}
	waitEvent[client.PeerOpen](t, joined)
	waitEvent[client.PeerOpen](t, roomA)
	if local, remote, err := joined.SelectedPair(roomA.You()); err != nil || local != "relay" || remote != "relay" {
		t.Fatalf("pair %s/%s %v", local, remote, err)
	}
	gamePacketsFlow(t, joined, roomA)
	gamePacketsFlow(t, roomA, joined)

	// A create on A for region us lands on B.
	hostB := clusterClient(t, aHTTP, "Bo")
	roomB, err := hostB.CreateRoom(ctx, protocol.CreateRoom{Name: "us game", MaxPlayers: 4, Public: true, Region: "us"})
	if err != nil {
		t.Fatal(err)
	}
	if node, _ := hostB.Node(); node != "b" {
		t.Fatalf("room for region us made on node %q", node)
	}
	// C lists both, each with its region.
	waitListed(t, watchC, roomA.Code(), true, 5*time.Second)
	waitListed(t, watchC, roomB.Code(), true, 5*time.Second)
	if s, _ := listed(watchC, roomA.Code()); s.Region != "eu" || s.Players != 2 || s.Host != "Ada" {
		t.Fatalf("A's room on C's list: %+v", s)
	}
	if s, _ := listed(watchC, roomB.Code()); s.Region != "us" {
		t.Fatalf("B's room on C's list: %+v", s)
	}

	// A share link on C goes to A's.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get("http://" + cHTTP + "/r/" + roomA.Code() + "?name=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "http://" + aHTTP + "/r/" + roomA.Code() + "?name=x"; resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("share link on C: %d %q, want 307 %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	// A player of B's room, sent there from C.
	playerB := clusterClient(t, cHTTP, "Cat")
	inB, err := playerB.JoinRoom(ctx, roomB.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	waitEvent[client.PeerOpen](t, inB)

	// B dies.
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitListed(t, watchC, roomB.Code(), false, 5*time.Second)
	t.Logf("B's room left C's list %s after the kill", time.Since(killed).Round(time.Millisecond))
	if _, ok := listed(watchC, roomA.Code()); !ok {
		t.Fatal("A's room left the list with B's")
	}
	closed := waitEvent[client.RoomClosed](t, inB)
	if closed.Reason != protocol.ReasonRoomLost || !client.IsCode(inB.Err(), protocol.CodeRoomLost) {
		t.Fatalf("B's player: closed %+v, err %v; want room_lost", closed, inB.Err())
	}
	t.Logf("B's player heard room_lost %s after the kill", time.Since(killed).Round(time.Millisecond))
	_, err = clusterClient(t, aHTTP, "Late").JoinRoom(ctx, roomB.Code(), "")
	if !client.IsCode(err, protocol.CodeRoomLost) {
		t.Fatalf("join of B's room on A: %v, want room_lost", err)
	}
	// A's game goes on.
	gamePacketsFlow(t, joined, roomA)

	// A's metrics say what happened: two nodes now, one lost, its room
	// written (a claim, then listings), and the join of the lost room counted.
	m := scrapeMetrics(t, a.Addrs().Metrics)
	for _, want := range []struct {
		name   string
		labels []string
		value  float64
	}{
		{"hostrelay_cluster_connected", nil, 1},
		{"hostrelay_cluster_nodes", nil, 2},
		{"hostrelay_cluster_nodes_lost_total", nil, 1},
		{"hostrelay_lobby_refusals_total", []string{"request=joinRoom", "reason=room_lost"}, 1},
	} {
		if got := m.get(t, want.name, want.labels...); got != want.value {
			t.Errorf("%s%v = %v, want %v", want.name, want.labels, got, want.value)
		}
	}
	if puts := m.get(t, "hostrelay_cluster_directory_writes_total", "op=put"); puts < 2 {
		t.Errorf("A wrote %v directory entries, want its claim and a listing at least", puts)
	}
}

func getJSON(url string, out any) error {
	resp, err := http.Get("http://" + url) //nolint:noctx // a test's loopback GET
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// TestClusterFailedJoinsShared: a guesser's failed-join budget is one for
// the whole cluster: spent on A, it is gone on C too.
func TestClusterFailedJoinsShared(t *testing.T) {
	natsURL := startNATS(t)
	a := startNode(t, natsURL, "a", "eu")
	c := startNode(t, natsURL, "c", "eu")
	probe := dialLobby(t, c.Addrs().HTTP, "Host").create("probe", 2, "").Room.Code
	guesser := dialLobbyFrom(t, a.Addrs().HTTP, "127.0.0.9", "Guess")
	for i := range 10 { // JoinFailureBurst
		code := string([]byte{'Z', 'Z', 'Z', '2', '3', '4', "23456789AB"[i]})
		if _, err := guesser.join(code, ""); !isCode(err, protocol.CodeRoomNotFound) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	ip := netip.MustParseAddr("127.0.0.9")
	testwait.For(t, "C hears of A's failed joins", func() bool { return !budgetLeft(t, c, ip, probe) })
	onC := dialLobbyFrom(t, c.Addrs().HTTP, "127.0.0.9", "Guess")
	if _, err := onC.join("ZZZ2345", ""); !isCode(err, protocol.CodeRateLimited) {
		t.Fatalf("a guess on C after 10 on A: %v, want rate_limited", err)
	}
}

// budgetLeft reports whether remote's failed-join budget on s has a token,
// by the lobby's own lookup of code, a room s holds: a code that leads
// somewhere gives its token back, so asking spends nothing.
func budgetLeft(t *testing.T, s *Server, remote netip.Addr, code string) bool {
	t.Helper()
	f, err := s.Hub().FindRoom(t.Context(), remote, code)
	if err == nil && !f.Here {
		t.Fatalf("probe room %s is not on this node: %+v", code, f)
	}
	return err == nil
}

// TestClusterRedirects: a private room, a spectate and a resume token, each
// sent to the node that holds them; a region no node serves is made here;
// a room of a node that left (shut down) leaves the lists at once and is
// not found, rather than lost.
func TestClusterRedirects(t *testing.T) {
	natsURL := startNATS(t)
	a := startNode(t, natsURL, "a", "eu")
	b := startNode(t, natsURL, "b", "us")
	aHTTP, bHTTP := a.Addrs().HTTP, b.Addrs().HTTP

	host := dialLobby(t, bHTTP, "Bea")
	if host.welcome.Node != "b" || host.welcome.Region != "us" {
		t.Fatalf("welcome %+v", host.welcome)
	}
	var priv protocol.RoomJoined
	if err := host.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "secret", MaxPlayers: 4}, &priv); err != nil {
		t.Fatal(err)
	}
	onA := dialLobby(t, aHTTP, "Al")
	wantURL := "ws://" + bHTTP + "/ws"
	for _, req := range []struct {
		typ  string
		body any
	}{
		{protocol.TypeJoinRoom, &protocol.JoinRoom{Code: strings.ToLower(priv.Room.Code)}},
		{protocol.TypeSpectate, &protocol.Spectate{Code: priv.Room.Code}},
	} {
		err := onA.call(req.typ, req.body, &struct{}{})
		var re lobbytest.ReplyError
		if !errors.As(err, &re) || re.Code != protocol.CodeRoomElsewhere || re.URL != wantURL || re.Region != "us" {
			t.Fatalf("%s on A: %v (%+v), want room_elsewhere to %s", req.typ, err, re, wantURL)
		}
	}

	// A resume token of B's, sent to A, is sent to B.
	conn, _, err := dialWS(t, aHTTP, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newLobby(t, conn).Hello(t.Context(), protocol.Hello{Version: protocol.Version, Resume: host.welcome.Resume})
	var re lobbytest.ReplyError
	if !errors.As(err, &re) || re.Code != protocol.CodeRoomElsewhere || re.URL != wantURL {
		t.Fatalf("B's resume token on A: %v, want room_elsewhere to B", err)
	}

	// No node in region ap: the room is made where asked.
	var here protocol.RoomJoined
	if err := onA.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "x", MaxPlayers: 2, Region: "ap"}, &here); err != nil {
		t.Fatal(err)
	}
	if !a.Hub().HasRoom(here.Room.Code) {
		t.Fatal("a create for a region with no node was not made here")
	}
	// A party's leader asking for B's region: the party lives on A, so the
	// room is made on A rather than move the leader away from its party.
	leader := dialLobby(t, aHTTP, "Lea")
	var party protocol.PartyJoined
	if err := leader.call(protocol.TypeCreateParty, &protocol.CreateParty{}, &party); err != nil {
		t.Fatal(err)
	}
	var partyRoom protocol.RoomJoined
	if err := leader.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "party", MaxPlayers: 4, Region: "us"}, &partyRoom); err != nil {
		t.Fatalf("create in a party asking for region us: %v", err)
	}
	if !a.Hub().HasRoom(partyRoom.Room.Code) {
		t.Fatal("a party leader's room was not made on the party's node")
	}

	// B shuts down: its room is gone from A at once, not lost.
	watcher := dialLobby(t, aHTTP, "Watch")
	var list protocol.RoomList
	if err := watcher.call(protocol.TypeWatchRooms, &protocol.WatchRooms{}, &list); err != nil {
		t.Fatal(err)
	}
	var pub protocol.RoomJoined
	pubHost := dialLobby(t, bHTTP, "Bob")
	if err := pubHost.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "open", MaxPlayers: 4, Public: true}, &pub); err != nil {
		t.Fatal(err)
	}
	var upd protocol.RoomListUpdate
	watcher.next(protocol.TypeRoomListUpdate, &upd)
	if len(upd.Set) != 1 || upd.Set[0].Code != pub.Room.Code || upd.Set[0].Region != "us" {
		t.Fatalf("update %+v", upd)
	}
	// Shutdown waits for B's lobby clients to close; the cluster hears of
	// it before that.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	left := time.Now()
	shut := make(chan error, 1)
	go func() { shut <- b.Shutdown(ctx) }()
	watcher.next(protocol.TypeRoomListUpdate, &upd)
	if len(upd.Del) != 1 || upd.Del[0] != pub.Room.Code {
		t.Fatalf("update %+v", upd)
	}
	if d := time.Since(left); d > 2*time.Second { // DeadAfter is 3 s: only the goodbye is this quick
		t.Fatalf("B's room left A's list %s after B shut down", d)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if _, err := dialLobby(t, aHTTP, "Late").join(pub.Room.Code, ""); !isCode(err, protocol.CodeRoomNotFound) {
		t.Fatalf("join of a room of a node that left: %v, want room_not_found", err)
	}
}

// TestClusterUnavailable: with NATS gone, a create says unavailable (and
// changes nothing) rather than risk a code another node holds.
func TestClusterUnavailable(t *testing.T) {
	ns, err := natsd.Start(t.Context(), natsd.Options{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a := startNode(t, ns.URL(), "a", "eu")
	l := dialLobby(t, a.Addrs().HTTP, "Ada")
	ns.Close()
	var rj protocol.RoomJoined
	err = l.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "x", MaxPlayers: 2}, &rj)
	if !isCode(err, protocol.CodeUnavailable) {
		t.Fatalf("create without NATS: %v, want unavailable", err)
	}
	if st := a.Hub().Stats(); st.Rooms != 0 {
		t.Fatalf("%d rooms after a refused create", st.Rooms)
	}
}

// TestNodeIDInUseRefusesToStart: two live nodes with one id would delete
// each other's rooms; the second is refused before it serves.
func TestNodeIDInUseRefusesToStart(t *testing.T) {
	natsURL := startNATS(t)
	startNode(t, natsURL, "a", "eu")
	cfg, err := LoadConfig([]string{"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-nats", natsURL, "-node-id", "a"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "node id in use") {
		t.Fatalf("second node a: %v, want node id in use", err)
	}
}
