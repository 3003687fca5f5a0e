package client_test

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/internal/netcut"
	"github.com/hostrelay/hostrelay/protocol"
)

// TestResumeAfterConnectionCut: the lobby WebSocket dies mid-game; the SDK
// resumes the held seat, the host never sees the player leave, events sent
// meanwhile arrive, and the peer connection carried on throughout.
func TestResumeAfterConnectionCut(t *testing.T) {
	url := startServer(t)
	ctx := t.Context()
	host := dial(t, url, "Host")
	hostRoom, err := host.CreateRoom(ctx, protocol.CreateRoom{Name: "resume", MaxPlayers: 4})
	if err != nil {
		t.Fatal(err)
	}
	var net netcut.Cuttable
	pl, err := client.Dial(ctx, url, client.Options{Name: "Player", HTTPClient: net.Client(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	room, err := pl.JoinRoom(ctx, hostRoom.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	next[client.PeerOpen](t, room)
	next[client.PeerOpen](t, hostRoom)

	if net.Cut() == 0 {
		t.Fatal("no connection to cut")
	}
	if u := next[client.PlayerUpdated](t, hostRoom); !u.Player.Away {
		t.Fatalf("host saw %+v, want away", u.Player)
	}
	// The game carries on over WebRTC while the lobby is down.
	if err := hostRoom.Send(room.You(), client.Events, []byte("during")); err != nil {
		t.Fatal(err)
	}
	recv(t, room, "during")
	// A lobby event sent while the player is away is replayed on resume.
	if err := hostRoom.Chat(ctx, "you there?"); err != nil {
		t.Fatal(err)
	}
	next[client.Resumed](t, room)
	if m := next[client.ChatMessage](t, room); m.Text != "you there?" {
		t.Fatalf("chat %+v", m)
	}
	if u := next[client.PlayerUpdated](t, hostRoom); u.Player.Away || u.Player.ID != room.You() {
		t.Fatalf("host saw %+v, want back", u.Player)
	}
	// Same seat: requests work, and the host saw no leave or join.
	if err := room.Chat(ctx, "back"); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case e := <-hostRoom.Events():
			switch e := e.(type) {
			case client.PlayerLeft, client.PlayerJoined:
				t.Fatalf("host saw %T %+v", e, e)
			case client.ChatMessage:
				if e.Text == "back" {
					return
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no chat from the resumed player")
		}
	}
}

// TestHostMigrationGoClients: in a migrating room, the host's departure
// promotes the longest-present client and the other client connects to it.
func TestHostMigrationGoClients(t *testing.T) {
	url := startServer(t)
	ctx := t.Context()
	hostL := dial(t, url, "Host")
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "migrate", MaxPlayers: 4, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	rooms := make([]*client.Room, 2)
	for i := range rooms {
		if rooms[i], err = dial(t, url, fmt.Sprint("P", i)).JoinRoom(ctx, host.Code(), ""); err != nil {
			t.Fatal(err)
		}
		next[client.PeerOpen](t, rooms[i])
	}
	first, second := rooms[0], rooms[1]

	hostL.Close()
	for _, r := range rooms {
		hc := next[client.HostChanged](t, r)
		if hc.Host != first.You() || hc.Previous != host.You() {
			t.Fatalf("HostChanged %+v, want %s", hc, first.You())
		}
	}
	if !first.IsHost() || second.IsHost() {
		t.Fatal("roles did not follow the migration")
	}
	if id := next[client.PeerOpen](t, second).ID; id != first.You() {
		t.Fatalf("second connected to %s", id)
	}
	if id := next[client.PeerOpen](t, first).ID; id != second.You() {
		t.Fatalf("new host connected to %s", id)
	}
	if l, r, err := second.SelectedPair(first.You()); err != nil || l != "relay" || r != "relay" {
		t.Fatalf("pair %s/%s %v", l, r, err)
	}
	if err := first.Send(second.You(), client.Events, []byte("state from the new host")); err != nil {
		t.Fatal(err)
	}
	recv(t, second, "state from the new host")
}
