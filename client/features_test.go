package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/protocol"
)

// TestLobbyFeatures drives ready, start, chat, kick and the room list from
// Go, as a native client or a bot would.
func TestLobbyFeatures(t *testing.T) {
	url := startServer(t)
	ctx := t.Context()

	watcherL := dial(t, url, "Watcher")
	watch, err := watcherL.WatchRooms(ctx)
	if err != nil {
		t.Fatal(err)
	}

	hostL := dial(t, url, "Host")
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "features", MaxPlayers: 4, Public: true})
	if err != nil {
		t.Fatal(err)
	}
	waitRooms(t, watch, func(rs []protocol.RoomSummary) bool {
		return len(rs) == 1 && rs[0].Code == host.Code() && rs[0].Name == "features" && rs[0].Players == 1
	})

	playerL := dial(t, url, "Player")
	room, err := playerL.JoinRoom(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	waitRooms(t, watch, func(rs []protocol.RoomSummary) bool { return len(rs) == 1 && rs[0].Players == 2 })

	if err := room.StartGame(ctx); !client.IsCode(err, protocol.CodeForbidden) {
		t.Fatalf("client StartGame: %v", err)
	}
	if err := room.Kick(ctx, host.You()); !client.IsCode(err, protocol.CodeForbidden) {
		t.Fatalf("client Kick: %v", err)
	}
	if err := host.StartGame(ctx); !client.IsCode(err, protocol.CodeNotReady) {
		t.Fatalf("StartGame before ready: %v", err)
	}
	if err := room.SetReady(ctx, true); err != nil {
		t.Fatal(err)
	}
	for {
		if u := next[client.PlayerUpdated](t, host); u.Player.ID == room.You() && u.Player.Ready {
			break
		}
	}

	if err := room.Chat(ctx, "<b>gg</b>"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*client.Room{host, room} {
		if m := next[client.ChatMessage](t, r); m.Text != "<b>gg</b>" || m.From != room.You() || m.Name != "Player" {
			t.Fatalf("chat %+v", m)
		}
	}

	if err := host.StartGame(ctx); err != nil {
		t.Fatal(err)
	}
	next[client.GameStarted](t, host)
	next[client.GameStarted](t, room)

	if err := host.Kick(ctx, room.You()); err != nil {
		t.Fatal(err)
	}
	if rc := next[client.RoomClosed](t, room); rc.Reason != protocol.ReasonKicked {
		t.Fatalf("kicked player got %+v", rc)
	}
	if _, err := playerL.JoinRoom(ctx, host.Code(), ""); !client.IsCode(err, protocol.CodeKicked) {
		t.Fatalf("rejoin after kick: %v", err)
	}

	hostL.Close()
	waitRooms(t, watch, func(rs []protocol.RoomSummary) bool { return len(rs) == 0 })
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := watch.Close(ctx2); err != nil {
		t.Fatal(err)
	}
}

func waitRooms(t *testing.T, w *client.RoomWatch, ok func([]protocol.RoomSummary) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !ok(w.Rooms()) {
		select {
		case <-w.Changed():
		case <-deadline:
			t.Fatalf("room list never matched; last %+v", w.Rooms())
		}
	}
}
