// Command hostrelay-bot hosts a hostrelay room, joins one by code, by quick
// play or through a party, or watches one as a spectator, and exchanges game
// packets through the server's TURN: a smoke test for operators, the
// building block of load tests, and an arena player.
//
//	hostrelay-bot -url ws://relay.example.com:8080/ws -host
//	hostrelay-bot -url ws://relay.example.com:8080/ws -join ABC2345 -send 100 -expect 100
//	hostrelay-bot -url ws://relay.example.com:8080/ws -quick arena -keys right
//	hostrelay-bot -url ws://relay.example.com:8080/ws -watch ABC2345 -expect 20
//
// It prints one JSON object per line (room, peer_open, peer_closed, summary,
// …) and exits 0 when -expect test packets (arena snapshots, spectator
// frames) have arrived, 1 on failure or timeout.
// -version prints the version and commit it was built from, -licenses the
// notices of the third-party code inside it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/internal/buildinfo"
	"github.com/hostrelay/hostrelay/licenses"
	"github.com/hostrelay/hostrelay/protocol"
)

type config struct {
	url        string
	name       string
	host       bool
	roomName   string
	maxPlayers int
	public     bool
	password   string
	join       string
	quick      string
	party      string
	newParty   int
	watch      string
	arenaKeys  string
	send       int
	expect     int
	pointerHz  int
	timeout    time.Duration
	verbose    bool
}

func main() {
	var c config
	flag.StringVar(&c.url, "url", "ws://127.0.0.1:8080/ws", "lobby WebSocket URL")
	flag.StringVar(&c.name, "name", "bot", "player name")
	flag.BoolVar(&c.host, "host", false, "create a room and host it")
	flag.StringVar(&c.roomName, "room", "bot room", "room name (with -host)")
	flag.IntVar(&c.maxPlayers, "max-players", 8, "room size (with -host)")
	flag.BoolVar(&c.public, "public", false, "list the room publicly (with -host)")
	flag.StringVar(&c.password, "password", "", "room password (to create with -host, or to join)")
	flag.StringVar(&c.join, "join", "", "join the room with this code")
	flag.StringVar(&c.quick, "quick", "", "quick play: a seat in an open public room of this game mode, or a new one (\"arena\" plays the arena)")
	flag.StringVar(&c.party, "party", "", "join the party with this code and play in the room its leader's quick play finds")
	flag.IntVar(&c.newParty, "create-party", 0, "with -quick: make a party, print its code, and quick play once it has this many members")
	flag.StringVar(&c.watch, "watch", "", "watch the room with this code as a spectator (with -password if it has one)")
	flag.StringVar(&c.arenaKeys, "keys", "right", "in an arena room, the buttons held every tick (comma list of up, down, left, right, kick)")
	flag.IntVar(&c.send, "send", 0, "test packets to send to each peer once its channels open")
	flag.IntVar(&c.expect, "expect", 0, "exit 0 once this many test packets have arrived (0: run until -timeout or a signal)")
	flag.IntVar(&c.pointerHz, "pointer-hz", 30, "as a client, pointer packets per second to the host (RTT is measured from the echoes)")
	flag.DurationVar(&c.timeout, "timeout", 0, "give up after this long (0: never)")
	flag.BoolVar(&c.verbose, "v", false, "log the SDK's debug output to stderr")
	version := flag.Bool("version", false, "print the version and commit, and exit")
	notices := flag.Bool("licenses", false, "print the notices of the third-party code inside, and exit")
	flag.Parse()
	if *version {
		fmt.Fprintln(os.Stdout, "hostrelay-bot "+buildinfo.String())
		return
	}
	if *notices {
		fmt.Fprint(os.Stdout, "hostrelay-bot is free software under the MIT License, Copyright (c) 2026 the hostrelay authors.\n"+
			"It contains the third-party software below, each part under its own license.\n\n"+licenses.Go())
		return
	}
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "hostrelay-bot: "+err.Error())
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	out := json.NewEncoder(os.Stdout)
	if err := run(ctx, c, out); err != nil {
		_ = out.Encode(map[string]any{"event": "error", "error": err.Error()})
		os.Exit(1)
	}
}

// check refuses flags that do not make one way into a room.
func (c config) check() error {
	ways := 0
	for _, set := range []bool{c.host, c.join != "", c.quick != "", c.party != "", c.watch != ""} {
		if set {
			ways++
		}
	}
	if ways != 1 {
		return errors.New("give exactly one of -host, -join CODE, -quick MODE, -party CODE or -watch CODE")
	}
	if c.newParty != 0 && (c.quick == "" || c.newParty < 1 || c.newParty > protocol.MaxPartySize) {
		return fmt.Errorf("-create-party N needs -quick MODE and 1 ≤ N ≤ %d", protocol.MaxPartySize)
	}
	if _, err := arenaInput(c.arenaKeys); err != nil {
		return err
	}
	return nil
}

// quickMode is the mode -quick asks for: "arena" in any case is the arena's.
func quickMode(m string) string {
	if strings.EqualFold(strings.TrimSpace(m), arenaMode) {
		return arenaMode
	}
	return m
}

type stats struct {
	sent, received, echoes int
	rtts                   []float64
}

func run(ctx context.Context, c config, out *json.Encoder) error {
	logOut := io.Discard
	if c.verbose {
		logOut = os.Stderr
	}
	lobby, err := client.Dial(ctx, c.url, client.Options{
		Name:   c.name,
		Logger: slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		return err
	}
	defer lobby.Close()

	if c.watch != "" {
		return watch(ctx, c, lobby, out)
	}
	room, err := enter(ctx, c, lobby, out)
	if err != nil {
		return err
	}
	_ = out.Encode(map[string]any{"event": "room", "code": room.Code(), "link": shareLink(c.url, room.Code()),
		"you": room.You(), "host": room.IsHost(), "mode": room.Info().Mode})
	if !room.IsHost() && (c.quick != "" || c.party != "") {
		// Quick play fills rooms whose host waits for everyone to be ready.
		if err := room.SetReady(ctx, true); err != nil {
			return err
		}
	}
	if room.Info().Mode == arenaMode && !room.IsHost() {
		return playArena(ctx, c, room, out)
	}

	start := time.Now()
	var st stats
	ticker := time.NewTicker(time.Second / time.Duration(max(1, c.pointerHz)))
	defer ticker.Stop()
	hostOpen := false
	var seq uint32
	for {
		select {
		case <-ctx.Done():
			summary(out, st, start)
			if c.expect > 0 {
				return fmt.Errorf("%d of %d test packets arrived before the deadline", st.received, c.expect)
			}
			return nil
		case <-room.Done():
			summary(out, st, start)
			return fmt.Errorf("room ended: %w", room.Err())
		case e := <-room.Events():
			printEvent(out, room, e, start)
			switch e := e.(type) {
			case client.PeerOpen:
				hostOpen = !room.IsHost()
				for i := range c.send {
					// Test packets ride the game channel like real inputs; the
					// pause keeps a burst from overrunning its send buffer.
					if err := room.Send(e.ID, client.Game, testPacket(uint32(i))); err == nil {
						st.sent++
					}
					time.Sleep(2 * time.Millisecond)
				}
			case client.PeerClosed:
				if !room.IsHost() {
					hostOpen = false
				}
			}
		case m := <-room.Messages():
			switch {
			case isTest(m.Data):
				st.received++
				if c.expect > 0 && st.received >= c.expect {
					summary(out, st, start)
					return nil
				}
			case room.IsHost():
				if echo, ok := echoOf(m.Data); ok {
					_ = room.Send(m.From, client.Game, echo)
				}
			default:
				if sentAt, ok := echoSentAt(m.Data); ok {
					st.echoes++
					st.rtts = append(st.rtts, msSince(start)-sentAt)
				}
			}
		case <-ticker.C:
			if hostOpen && c.pointerHz > 0 {
				seq++
				// Circle around the middle: something visible on a browser host.
				t := float64(seq) / float64(c.pointerHz)
				p := pointerPacket(seq, 0.5+0.3*math.Cos(t), 0.5+0.3*math.Sin(t), msSince(start))
				_ = room.Send(room.Info().Host, client.Game, p)
			}
		}
	}
}

// enter takes the bot into a room the way its flags say.
func enter(ctx context.Context, c config, lobby *client.Lobby, out *json.Encoder) (*client.Room, error) {
	switch {
	case c.host:
		return lobby.CreateRoom(ctx, protocol.CreateRoom{Name: c.roomName, MaxPlayers: c.maxPlayers, Public: c.public, Password: c.password})
	case c.join != "":
		return lobby.JoinRoom(ctx, c.join, c.password)
	case c.party != "":
		party, err := lobby.JoinParty(ctx, c.party)
		if err != nil {
			return nil, err
		}
		printParty(out, party)
		for {
			select {
			case r := <-party.Rooms():
				return r, nil
			case <-party.Changed():
				printParty(out, party)
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the party's leader: %w", ctx.Err())
			}
		}
	}
	req := protocol.QuickPlay{Mode: quickMode(c.quick), MaxPlayers: c.maxPlayers}
	if c.newParty > 0 {
		party, err := lobby.CreateParty(ctx)
		if err != nil {
			return nil, err
		}
		printParty(out, party)
		for len(party.Info().Members) < c.newParty {
			select {
			case <-party.Changed():
				printParty(out, party)
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for %d party members: %w", c.newParty, ctx.Err())
			}
		}
	}
	return lobby.QuickPlay(ctx, req)
}

func printParty(out *json.Encoder, p *client.Party) {
	info := p.Info()
	names := make([]string, 0, len(info.Members))
	for _, m := range info.Members {
		names = append(names, m.Name)
	}
	_ = out.Encode(map[string]any{"event": "party", "code": info.Code, "members": names, "leader": p.IsLeader()})
}

// printEvent prints a room event as its JSON line.
func printEvent(out *json.Encoder, room *client.Room, e client.Event, start time.Time) {
	switch e := e.(type) {
	case client.PeerOpen:
		local, remote, _ := room.SelectedPair(e.ID)
		_ = out.Encode(map[string]any{"event": "peer_open", "peer": e.ID, "local": local, "remote": remote,
			"ms": time.Since(start).Milliseconds()})
	case client.PeerClosed:
		_ = out.Encode(map[string]any{"event": "peer_closed", "peer": e.ID, "error": errString(e.Err)})
	case client.PlayerJoined:
		_ = out.Encode(map[string]any{"event": "player_joined", "peer": e.Player.ID, "name": e.Player.Name})
	case client.PlayerLeft:
		_ = out.Encode(map[string]any{"event": "player_left", "peer": e.ID, "reason": e.Reason})
	case client.GameStarted:
		_ = out.Encode(map[string]any{"event": "game_started", "mode": e.Mode})
	}
}

func msSince(start time.Time) float64 { return float64(time.Since(start).Microseconds()) / 1000 }

func summary(out *json.Encoder, st stats, start time.Time) {
	s := map[string]any{"event": "summary", "sent": st.sent, "received": st.received, "echoes": st.echoes,
		"seconds": time.Since(start).Seconds()}
	if len(st.rtts) > 0 {
		slices.Sort(st.rtts)
		s["rtt_ms_p50"] = st.rtts[len(st.rtts)/2]
		s["rtt_ms_p99"] = st.rtts[len(st.rtts)*99/100]
	}
	_ = out.Encode(s)
}

// shareLink turns ws(s)://host/ws into http(s)://host/r/CODE.
func shareLink(wsURL, code string) string {
	u, err := url.Parse(wsURL)
	if err != nil {
		return ""
	}
	u.Scheme = map[string]string{"wss": "https"}[u.Scheme]
	if u.Scheme == "" {
		u.Scheme = "http"
	}
	u.Path = "/r/" + code
	return u.String()
}

func errString(err error) string {
	if err == nil || errors.Is(err, context.Canceled) {
		return ""
	}
	return err.Error()
}
