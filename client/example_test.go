package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/server"
)

// exampleServer starts a hostrelay in-process so the examples run as they
// are; a real program dials its server's URL instead.
func exampleServer() (url string, stop func()) {
	cfg := server.DefaultConfig()
	cfg.HTTP.Addr, cfg.TURN.UDPAddr, cfg.TURN.TCPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	s, err := server.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		panic(err)
	}
	return "ws://" + s.Addrs().HTTP + "/ws", func() { _ = s.Shutdown(context.Background()) }
}

// A host creates a room and a client joins it by code; once the channels are
// open the client sends a reliable message and the host answers on the game
// channel.
func Example() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	hostLobby, err := client.Dial(ctx, url, client.Options{Name: "Host"})
	if err != nil {
		panic(err)
	}
	defer hostLobby.Close()
	host, err := hostLobby.CreateRoom(ctx, protocol.CreateRoom{Name: "Example", MaxPlayers: 4})
	if err != nil {
		panic(err)
	}

	playerLobby, err := client.Dial(ctx, url, client.Options{Name: "Player"})
	if err != nil {
		panic(err)
	}
	defer playerLobby.Close()
	room, err := playerLobby.JoinRoom(ctx, host.Code(), "")
	if err != nil {
		panic(err)
	}
	// Every wait is bounded by ctx: a program must not hang on a peer that
	// never connects.
waitOpen:
	for {
		select {
		case e := <-room.Events():
			if _, ok := e.(client.PeerOpen); ok {
				break waitOpen
			}
		case <-ctx.Done():
			panic(fmt.Sprintf("peer never opened: %v", ctx.Err()))
		}
	}
	local, remote, _ := room.SelectedPair(host.Info().Host)
	fmt.Println("connected through:", local, remote)

	if err := room.Send(host.You(), client.Events, []byte("ready")); err != nil {
		panic(err)
	}
	var m client.Message
	select {
	case m = <-host.Messages():
	case <-ctx.Done():
		panic(fmt.Sprintf("no message: %v", ctx.Err()))
	}
	fmt.Printf("host got %q on %s from the player: %v\n", m.Data, m.Channel, m.From == room.You())
	// Game packets may be lost by design, so a game sends them every tick.
	for {
		_ = host.Send(room.You(), client.Game, []byte("snapshot"))
		select {
		case m := <-room.Messages():
			fmt.Printf("player got %q on %s\n", m.Data, m.Channel)
			return
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			panic(fmt.Sprintf("no snapshot: %v", ctx.Err()))
		}
	}
	// Output:
	// connected through: relay relay
	// host got "ready" on events from the player: true
	// player got "snapshot" on game
}

// Errors from the server carry a code to switch on.
func ExampleIsCode() {
	url, stop := exampleServer()
	defer stop()
	ctx := context.Background()
	l, err := client.Dial(ctx, url, client.Options{Name: "Bot"})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	_, err = l.JoinRoom(ctx, "ZZZZZZZ", "")
	fmt.Println(client.IsCode(err, protocol.CodeRoomNotFound))
	// Output: true
}

// Quick play puts players of one game mode together: the first makes the
// room and hosts it, the next takes a seat in it.
func ExampleLobby_QuickPlay() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var rooms []*client.Room
	for _, name := range []string{"Ann", "Bo"} {
		l, err := client.Dial(ctx, url, client.Options{Name: name})
		if err != nil {
			panic(err)
		}
		defer l.Close()
		r, err := l.QuickPlay(ctx, protocol.QuickPlay{Mode: "Arena"})
		if err != nil {
			panic(err)
		}
		rooms = append(rooms, r)
	}
	fmt.Println(rooms[0].IsHost(), rooms[1].IsHost(), rooms[0].Code() == rooms[1].Code())
	// Output: true false true
}

// A spectator watches a room without a seat: the host's frames arrive over
// the lobby connection, the server's delay behind the players.
func ExampleLobby_Spectate() {
	url, stop := exampleServer()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	hostLobby, err := client.Dial(ctx, url, client.Options{Name: "Host"})
	if err != nil {
		panic(err)
	}
	defer hostLobby.Close()
	host, err := hostLobby.CreateRoom(ctx, protocol.CreateRoom{Name: "Show", MaxPlayers: 4, Public: true})
	if err != nil {
		panic(err)
	}
	watcherLobby, err := client.Dial(ctx, url, client.Options{Name: "Watcher"})
	if err != nil {
		panic(err)
	}
	defer watcherLobby.Close()
	s, err := watcherLobby.Spectate(ctx, host.Code(), "")
	if err != nil {
		panic(err)
	}
	if err := host.SendSpectatorFrame(ctx, []byte("the whole world"), true); err != nil {
		panic(err)
	}
	select {
	case f := <-s.Frames():
		fmt.Printf("%s (key %v)\n", f.Data, f.Key)
	case <-ctx.Done():
		fmt.Println("no frame")
	}
	// Output: the whole world (key true)
}
