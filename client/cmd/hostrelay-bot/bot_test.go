package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/netcode"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/server/servertest"
)

// startServer runs a real hostrelay in-process on loopback.
func startServer(t *testing.T, flags ...string) string {
	t.Helper()
	return servertest.LobbyURL(servertest.Start(t, "bot-tests-secret-0123456789", flags...))
}

func dialHost(t *testing.T, url string) *client.Lobby {
	t.Helper()
	l, err := client.Dial(t.Context(), url, client.Options{Name: "GoHost", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// output collects the bot's JSON lines.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) events(t *testing.T, kind string) []map[string]any {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(o.buf.String()) {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("bot printed %q: %v", line, err)
		}
		if e["event"] == kind {
			out = append(out, e)
		}
	}
	return out
}

// encodeArenaKeyframe is spectator.ts's encodeKeyframe: what a browser
// host of the arena sends its spectators.
func encodeArenaKeyframe(tick uint32, ents map[uint16][keyframeFields]float32, names map[uint8]string) []byte {
	b := []byte{keyframeVersion}
	b = binary.BigEndian.AppendUint32(b, tick)
	b = binary.BigEndian.AppendUint16(b, uint16(len(ents)))
	for id, fs := range ents {
		b = binary.BigEndian.AppendUint16(b, id)
		for _, f := range fs {
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(f))
		}
	}
	b = append(b, byte(len(names)))
	for slot, n := range names {
		b = append(b, slot, byte(len(n)))
		b = append(b, n...)
	}
	return b
}

// TestWatchArena runs -watch against a real server: a host streams arena
// keyframes, the bot prints each with its tick, ball and names, and exits
// once -expect frames have arrived.
func TestWatchArena(t *testing.T) {
	url := startServer(t, "-spectator-delay", "0s")
	host, err := dialHost(t, url).CreateRoom(t.Context(), protocol.CreateRoom{Name: "watched arena", MaxPlayers: 4, Public: true, Mode: arenaMode, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	var out output
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{url: url, name: "Watcher", watch: host.Code(), password: "pw", expect: 3, arenaKeys: "right"}, json.NewEncoder(&out))
	}()
	// The host streams until the bot has what it asked for.
	var runErr error
	for tick := uint32(100); ; tick += 6 {
		frame := encodeArenaKeyframe(tick, map[uint16][keyframeFields]float32{
			0:           {100, 200, 0, 0, 1, 0, 0, 0},
			arenaBallID: {480.5, float32(tick), 0, 0, 2, 0, 0, 0},
		}, map[uint8]string{0: "GoHost"})
		if err := host.SendSpectatorFrame(ctx, frame, true); err != nil {
			t.Fatal(err)
		}
		select {
		case runErr = <-done:
		case <-time.After(100 * time.Millisecond): // under the server's frame rate per room
			continue
		}
		break
	}
	if runErr != nil {
		t.Fatalf("bot: %v\n%s", runErr, out.buf.String())
	}
	sp := out.events(t, "spectating")
	if len(sp) != 1 || sp[0]["code"] != host.Code() || sp[0]["mode"] != arenaMode || sp[0]["host"] != "GoHost" {
		t.Fatalf("spectating %v", sp)
	}
	frames := out.events(t, "spectator_frame")
	if len(frames) != 3 {
		t.Fatalf("%d frames, want 3:\n%s", len(frames), out.buf.String())
	}
	for i, f := range frames {
		ball, _ := f["ball"].(map[string]any)
		if f["key"] != true || f["entities"] != 2.0 || ball["x"] != 480.5 || ball["y"] != f["tick"] || f["error"] != nil {
			t.Fatalf("frame %d: %v", i, f)
		}
		if names, _ := f["names"].(map[string]any); names["0"] != "GoHost" {
			t.Fatalf("frame %d names %v", i, f["names"])
		}
	}
	if s := out.events(t, "summary"); len(s) != 1 || s[0]["frames"] != 3.0 {
		t.Fatalf("summary %v", s)
	}
}

// TestArenaKeyframeBounds: a keyframe that claims more than its bytes hold
// is refused, at and past the boundary.
func TestArenaKeyframeBounds(t *testing.T) {
	full := encodeArenaKeyframe(7, map[uint16][keyframeFields]float32{1: {}}, map[uint8]string{1: "Ann"})
	if k, err := decodeArenaKeyframe(full); err != nil || k.Tick != 7 || k.Entities != 1 || k.Names[1] != "Ann" {
		t.Fatalf("%+v %v", k, err)
	}
	for cut := range len(full) {
		if _, err := decodeArenaKeyframe(full[:cut]); err == nil {
			t.Fatalf("a keyframe cut to %d of %d bytes decoded", cut, len(full))
		}
	}
	claim := bytes.Clone(full)
	binary.BigEndian.PutUint16(claim[5:], 2) // two entities in the bytes of one
	if _, err := decodeArenaKeyframe(claim); err == nil {
		t.Fatal("a keyframe claiming more entities than its bytes decoded")
	}
}

// TestQuickArena runs -quick arena against a real server and a Go host that
// plays the arena's host side of the wire: the bot finds the host's room by
// quick play, gets ready, is welcomed once the game starts, decodes the
// host's snapshots and sends its held keys, which reach the host as input
// packets. Peers are real pion connections through the real TURN.
func TestQuickArena(t *testing.T) {
	url := startServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	hostL := dialHost(t, url)
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "arena", MaxPlayers: 4, Public: true, Mode: arenaMode})
	if err != nil {
		t.Fatal(err)
	}
	var out output
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{url: url, name: "GoBot", quick: "arena", maxPlayers: 8, expect: 20, arenaKeys: "right,up"}, json.NewEncoder(&out))
	}()

	schema := arenaSchema()
	var (
		bot     string
		started bool
		slot    = int64(1)
		x       = 100.0
		tick    int64
		inputs  int
		acked   int64 // the newest snapshot the bot holds: the delta baseline, as NetHost uses it
		sent    = map[int64]netcode.World{}
	)
	snap := time.NewTicker(time.Second / 30)
	defer snap.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("bot: %v\n%s", err, out.buf.String())
			}
			if inputs == 0 {
				t.Fatalf("the host got no input from the bot\n%s", out.buf.String())
			}
			if x <= 100 {
				t.Fatalf("the bot held right but its player is at x=%v", x)
			}
			if r := out.events(t, "room"); len(r) != 1 || r[0]["code"] != host.Code() || r[0]["mode"] != arenaMode {
				t.Fatalf("bot's room %v, want %s", r, host.Code())
			}
			if w := out.events(t, "arena_welcome"); len(w) != 1 || w[0]["slot"] != 1.0 {
				t.Fatalf("welcome %v", w)
			}
			if bad := out.events(t, "bad_packet"); len(bad) != 0 {
				t.Fatalf("bad packets %v", bad)
			}
			sum := out.events(t, "summary")
			last, _ := sum[0]["last"].(map[string]any)
			me, _ := last["me"].(map[string]any)
			if x, _ := me["x"].(float64); x <= 100 || last["hash_ok"] != true || sum[0]["inputs"] == 0.0 {
				t.Fatalf("the bot did not see itself move: %v", sum)
			}
			return
		case e := <-host.Events():
			switch e := e.(type) {
			case client.PlayerJoined:
				bot = e.Player.ID
			case client.PlayerUpdated:
				if e.Player.ID == bot && e.Player.Ready && !started {
					if err := host.StartGame(ctx); err != nil {
						t.Fatal(err)
					}
					started = true
				}
			}
		case m := <-host.Messages():
			if m.Channel == client.Events {
				if ev, err := netcode.DecodeEvent(m.Data); err == nil {
					if _, ok := ev.(netcode.Hello); ok {
						_ = host.Send(m.From, client.Events, netcode.EncodeEvent(netcode.Welcome{Slot: slot, TickRate: arenaTickRate, SnapshotRate: 30}))
					}
				}
				continue
			}
			p, err := netcode.DecodeInputPacket(m.Data, 1)
			if err != nil {
				t.Fatalf("the bot sent a bad input packet: %v", err)
			}
			for _, in := range p.Inputs {
				if in[0] != 1|8 { // up and right
					t.Fatalf("input %08b, want up and right", in[0])
				}
			}
			inputs++
			acked = max(acked, p.AckTick)
			x = 100 + float64(p.FirstSeq+int64(len(p.Inputs)))
		case <-snap.C:
			if !started || bot == "" {
				continue
			}
			tick += 2
			world := netcode.World{{ID: int(slot), Fields: []float64{x, 200, 0, 0, 1, 1, 0, 0}},
				{ID: arenaBallID, Fields: []float64{480, 270, 0, 0, 2, 0, 0, 0}}}
			sent[tick] = world
			dt := 0.0
			if acked != 0 {
				dt = float64(tick-acked) / arenaTickRate
			}
			hash := schema.Hash(world)
			data := schema.EncodeDelta(netcode.AppendSnapshotHeader(nil, netcode.SnapshotHeader{Tick: tick, BaseTick: acked, Hash: &hash}), sent[acked], world, dt)
			_ = host.Send(bot, client.Game, data)
		}
	}
}

// TestPartyFlags: -quick MODE -create-party 2 makes a party and waits for a
// friend; -party CODE joins it; the leader's quick play takes both into one
// room, where they exchange -send test packets relay/relay.
func TestPartyFlags(t *testing.T) {
	url := startServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var leaderOut, friendOut output
	leaderDone, friendDone := make(chan error, 1), make(chan error, 1)
	// The leader hosts until the friend is done: a host that left once its
	// own packets had come would close the room under the friend's last
	// ones still in flight.
	leaderCtx, stopLeader := context.WithCancel(ctx)
	defer stopLeader()
	go func() {
		leaderDone <- run(leaderCtx, config{url: url, name: "Lea", quick: "Duel", newParty: 2, maxPlayers: 4, send: 5, arenaKeys: "right"}, json.NewEncoder(&leaderOut))
	}()
	var code string
	for code == "" {
		if p := leaderOut.events(t, "party"); len(p) > 0 {
			code, _ = p[0]["code"].(string)
			continue
		}
		select {
		case err := <-leaderDone:
			t.Fatalf("leader ended: %v\n%s", err, leaderOut.buf.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	go func() {
		friendDone <- run(ctx, config{url: url, name: "Finn", party: code, send: 5, expect: 5, arenaKeys: "right"}, json.NewEncoder(&friendOut))
	}()
	if err := <-friendDone; err != nil {
		t.Fatalf("friend: %v\n%s", err, friendOut.buf.String())
	}
	stopLeader()
	if err := <-leaderDone; err != nil {
		t.Fatalf("leader: %v\n%s", err, leaderOut.buf.String())
	}
	if s := leaderOut.events(t, "summary"); len(s) != 1 || s[0]["received"] == float64(0) {
		t.Fatalf("the leader got none of the friend's packets: %v", s)
	}
	lr, fr := leaderOut.events(t, "room"), friendOut.events(t, "room")
	if len(lr) != 1 || len(fr) != 1 || lr[0]["code"] != fr[0]["code"] || lr[0]["host"] != true || lr[0]["mode"] != "Duel" {
		t.Fatalf("leader in %v, friend in %v", lr, fr)
	}
	if p := friendOut.events(t, "peer_open"); len(p) != 1 || p[0]["local"] != "relay" || p[0]["remote"] != "relay" {
		t.Fatalf("friend's peer %v", p)
	}
	if err := (config{quick: "arena", newParty: 5, arenaKeys: "right"}).check(); err == nil {
		t.Fatal("-create-party past the party size was taken")
	}
	if err := (config{host: true, watch: "ABC2345", arenaKeys: "right"}).check(); err == nil {
		t.Fatal("-host with -watch was taken")
	}
	if err := (config{quick: "arena", arenaKeys: "jump"}).check(); err == nil {
		t.Fatal("an unknown arena key was taken")
	}
}
