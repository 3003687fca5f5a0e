package client_test

import (
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/protocol"
)

// TestCredentialsRefreshedBeforeExpiry runs a room through the embedded
// TURN with the shortest credential lifetime the server allows. The server
// pushes fresh credentials before expiry; game packets keep flowing on the
// open peer past the first credentials' expiry, and a player who joins after
// it connects to the host, whose new allocation needs the fresh ones.
func TestCredentialsRefreshedBeforeExpiry(t *testing.T) {
	const ttl = 10 * time.Second
	url := startServerWithSecret(t, "client-tests-secret-0123456789", "-turn-ttl", ttl.String())
	ctx := t.Context()

	host, err := dial(t, url, "Host").CreateRoom(ctx, protocol.CreateRoom{Name: "refresh", MaxPlayers: 3})
	if err != nil {
		t.Fatal(err)
	}
	first := host.ICE()
	if first.TTL != int(ttl.Seconds()) {
		t.Fatalf("ttl %d", first.TTL)
	}
	early, err := dial(t, url, "Early").JoinRoom(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	next[client.PeerOpen](t, early)
	expired := time.Now().Add(ttl + time.Second)

	// Game packets both ways until the first credentials are past expiry.
	var got int
	for time.Now().Before(expired) {
		_ = host.Send(early.You(), client.Game, []byte("snapshot"))
	drain:
		for {
			select {
			case m := <-early.Messages():
				if string(m.Data) == "snapshot" {
					got++
				}
			default:
				break drain
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if refreshed := host.ICE(); refreshed.Servers[0].Username == first.Servers[0].Username {
		t.Fatalf("no fresh credentials after %s (username %q)", ttl, refreshed.Servers[0].Username)
	}
	if got == 0 {
		t.Fatal("no game packets")
	}
	// The open peer still carries packets now the first credentials expired.
	before := got
	deadline := time.Now().Add(5 * time.Second)
	for got == before {
		if time.Now().After(deadline) {
			t.Fatal("the open peer stopped carrying packets after the first credentials expired")
		}
		_ = host.Send(early.You(), client.Game, []byte("snapshot"))
		select {
		case m := <-early.Messages():
			if string(m.Data) == "snapshot" {
				got++
			}
		case <-time.After(50 * time.Millisecond):
		}
	}

	// A new peer: the host allocates with the refreshed credentials.
	late, err := dial(t, url, "Late").JoinRoom(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	next[client.PeerOpen](t, late)
	local, remote, err := late.SelectedPair(host.You())
	if err != nil || local != "relay" || remote != "relay" {
		t.Fatalf("pair %s/%s %v", local, remote, err)
	}
}
