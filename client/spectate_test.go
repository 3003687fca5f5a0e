package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/protocol"
)

// TestSpectate: a Go host sends a spectator stream (a keyframe, then
// deltas); a Go spectator that watches mid-stream starts at the keyframe,
// gets the rest in order, and ends with host_left when the host leaves. A
// spectator that takes a seat stops watching ("joined").
func TestSpectate(t *testing.T) {
	url := startServerWithSecret(t, "client-tests-secret-0123456789", "-spectator-delay", "100ms")
	ctx := t.Context()

	hostL := dial(t, url, "Host")
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "watched", MaxPlayers: 4, Public: true, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if err := host.SendSpectatorFrame(ctx, nil, true); err == nil {
		t.Fatal("an empty spectator frame was sent")
	}
	if err := host.SendSpectatorFrame(ctx, make([]byte, protocol.MaxSpectatorData+1), true); err == nil {
		t.Fatal("a spectator frame past MaxSpectatorData was sent")
	}
	// Paced under the server's per-room frame rate.
	send := func(data string, key bool) {
		t.Helper()
		if err := host.SendSpectatorFrame(ctx, []byte(data), key); err != nil {
			t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond)
	}
	send("key 0", true)
	send("delta 0.1", false)

	watcherL := dial(t, url, "Watcher")
	if _, err := watcherL.Spectate(ctx, host.Code(), "nope"); !client.IsCode(err, protocol.CodeWrongPassword) {
		t.Fatalf("spectate with a wrong password: %v", err)
	}
	s, err := watcherL.Spectate(ctx, host.Code(), "pw")
	if err != nil {
		t.Fatal(err)
	}
	if s.Room().Code != host.Code() || s.Delay() != 100*time.Millisecond {
		t.Fatalf("spectating %+v, delay %s", s.Room(), s.Delay())
	}
	for i := 1; i <= 3; i++ {
		send(fmt.Sprintf("delta 0.%d", i+1), false)
	}
	send("key 1", true)
	want := []string{"key 0", "delta 0.1", "delta 0.2", "delta 0.3", "delta 0.4", "key 1"}
	for i, w := range want {
		select {
		case f := <-s.Frames():
			if string(f.Data) != w || f.Key != (w[:3] == "key") {
				t.Fatalf("frame %d: %q key %v, want %q", i, f.Data, f.Key, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("frame %d (%q) never came", i, w)
		}
	}
	if s.Received() != uint64(len(want)) || s.Dropped() != 0 {
		t.Fatalf("received %d dropped %d", s.Received(), s.Dropped())
	}
	// Watching is not playing: the host's room has one player.
	if n := len(host.Players()); n != 1 {
		t.Fatalf("host sees %d players", n)
	}

	if err := host.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("watching did not end when the host left")
	}
	if s.Reason() != protocol.ReasonHostLeft {
		t.Fatalf("ended with %q", s.Reason())
	}
	for range s.Frames() { // closed, maybe after frames still waiting
	}

	// A spectator who takes a seat stops watching.
	host2, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "second", MaxPlayers: 4, Public: true})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := watcherL.Spectate(ctx, host2.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watcherL.JoinRoom(ctx, host2.Code(), ""); err != nil {
		t.Fatal(err)
	}
	if s2.Reason() != client.SpectateJoined {
		t.Fatalf("after joining, watching ended with %q", s2.Reason())
	}
	if err := s2.Close(ctx); err != nil { // already ended: nothing to ask
		t.Fatal(err)
	}
}

// TestSpectatorBuffer: frames up to Options.SpectatorBuffer wait for a
// spectator that does not read; one more drops the backlog, deltas after
// it are skipped, and the next keyframe is delivered alone.
func TestSpectatorBuffer(t *testing.T) {
	url := startServerWithSecret(t, "client-tests-secret-0123456789", "-spectator-delay", "0s")
	ctx := t.Context()
	hostL := dial(t, url, "Host")
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "fast", MaxPlayers: 4, Public: true})
	if err != nil {
		t.Fatal(err)
	}
	watcherL, err := client.Dial(ctx, url, client.Options{Name: "Slow", SpectatorBuffer: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer watcherL.Close()
	s, err := watcherL.Spectate(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	send := func(data string, key bool) {
		t.Helper()
		if err := host.SendSpectatorFrame(ctx, []byte(data), key); err != nil {
			t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond) // under the server's per-room rate
	}
	until := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: received %d dropped %d", what, s.Received(), s.Dropped())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for i, d := range []string{"key 0", "d1", "d2", "d3"} {
		send(d, i == 0)
	}
	until("four frames at the limit", func() bool { return s.Received() == 4 })
	if s.Dropped() != 0 {
		t.Fatalf("dropped %d at the limit", s.Dropped())
	}
	send("d4", false) // past the limit: the four waiting go, and d4
	send("d5", false) // a delta without its keyframe
	until("the backlog dropped", func() bool { return s.Dropped() == 6 })
	send("key 1", true)
	until("the next keyframe", func() bool { return s.Received() == 5 })
	f := <-s.Frames()
	if string(f.Data) != "key 1" || !f.Key || len(s.Frames()) != 0 {
		t.Fatalf("after the drop: %q key %v, %d more waiting", f.Data, f.Key, len(s.Frames()))
	}
}
