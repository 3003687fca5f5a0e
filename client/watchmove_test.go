package client_test

import (
	"testing"

	"github.com/hostrelay/hostrelay/cluster/natsd"
	"github.com/hostrelay/hostrelay/protocol"
)

// TestWatchSurvivesMove: two real nodes on one NATS. A session on A
// watches the room list, then spectates a room on B and so moves to B.
// The watch follows it: a room made on B afterwards reaches the list,
// which only B's watch can send, since A's connection is closed.
func TestWatchSurvivesMove(t *testing.T) {
	natsURL := natsd.ForTest(t)
	const secret = "client-tests-secret-0123456789"
	a := startServerWithSecret(t, secret, "-nats", natsURL, "-node-id", "a", "-region", "eu")
	b := startServerWithSecret(t, secret, "-nats", natsURL, "-node-id", "b", "-region", "us")
	ctx := t.Context()

	hostL := dial(t, b, "HostB")
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "on b", MaxPlayers: 4, Public: true})
	if err != nil {
		t.Fatal(err)
	}

	watcherL := dial(t, a, "Watcher")
	watch, err := watcherL.WatchRooms(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitRooms(t, watch, func(rs []protocol.RoomSummary) bool {
		return len(rs) == 1 && rs[0].Code == host.Code() && rs[0].Region == "us"
	})
	s, err := watcherL.Spectate(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	if watcherL.URL() != b || s.Room().Code != host.Code() {
		t.Fatalf("spectating %s from %s, want the session on %s", s.Room().Code, watcherL.URL(), b)
	}

	otherL := dial(t, b, "Other")
	other, err := otherL.CreateRoom(ctx, protocol.CreateRoom{Name: "made after the move", MaxPlayers: 4, Public: true})
	if err != nil {
		t.Fatal(err)
	}
	waitRooms(t, watch, func(rs []protocol.RoomSummary) bool {
		for _, r := range rs {
			if r.Code == other.Code() && r.Name == "made after the move" {
				return len(rs) == 2
			}
		}
		return false
	})
	if err := other.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitRooms(t, watch, func(rs []protocol.RoomSummary) bool { return len(rs) == 1 && rs[0].Code == host.Code() })
}
