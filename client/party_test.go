package client_test

import (
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/protocol"
)

// TestQuickPlayAndParty: a party of two Go clients; the leader's QuickPlay
// makes a room and brings the friend, whose Party.Rooms delivers it and
// whose peer to the leader (the host) opens relay/relay; a stranger's
// QuickPlay of the same mode lands in the same room.
func TestQuickPlayAndParty(t *testing.T) {
	url := startServer(t)
	ctx := t.Context()

	leaderL := dial(t, url, "Lea")
	party, err := leaderL.CreateParty(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !party.IsLeader() || len(party.Info().Members) != 1 || len(party.Info().Code) != protocol.RoomCodeLength {
		t.Fatalf("created party %+v you %q", party.Info(), party.You())
	}
	if _, err := leaderL.CreateParty(ctx); !client.IsCode(err, protocol.CodeAlreadyInParty) {
		t.Fatalf("second party: %v", err)
	}

	friendL := dial(t, url, "Finn")
	if _, err := friendL.JoinParty(ctx, "ZZZZZZZ"); !client.IsCode(err, protocol.CodePartyNotFound) {
		t.Fatalf("join a party that is not there: %v", err)
	}
	fparty, err := friendL.JoinParty(ctx, party.Info().Code)
	if err != nil {
		t.Fatal(err)
	}
	if fparty.IsLeader() || len(fparty.Info().Members) != 2 {
		t.Fatalf("friend sees %+v", fparty.Info())
	}
	waitParty(t, party, func(p protocol.Party) bool { return len(p.Members) == 2 && p.Members[1].Name == "Finn" })

	if _, err := friendL.QuickPlay(ctx, protocol.QuickPlay{Mode: "Duel"}); !client.IsCode(err, protocol.CodeForbidden) {
		t.Fatalf("QuickPlay by a member who does not lead: %v", err)
	}
	host, err := leaderL.QuickPlay(ctx, protocol.QuickPlay{Mode: " Duel ", MaxPlayers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !host.IsHost() || host.Info().Mode != "Duel" || !host.Info().Public || host.Info().MaxPlayers != 4 {
		t.Fatalf("quick room %+v", host.Info())
	}
	var room *client.Room
	select {
	case room = <-fparty.Rooms():
	case <-time.After(10 * time.Second):
		t.Fatal("the friend was not placed in the leader's room")
	}
	if room.Code() != host.Code() || room.Info().Host != host.You() {
		t.Fatalf("friend placed in %s (host %s), leader hosts %s", room.Code(), room.Info().Host, host.Code())
	}
	next[client.PeerOpen](t, room)
	if local, remote, err := room.SelectedPair(host.You()); err != nil || local != "relay" || remote != "relay" {
		t.Fatalf("pair %s/%s %v", local, remote, err)
	}
	if err := room.Send(host.You(), client.Events, []byte("in the party room")); err != nil {
		t.Fatal(err)
	}
	recv(t, host, "in the party room")

	strangerL := dial(t, url, "Stranger")
	other, err := strangerL.QuickPlay(ctx, protocol.QuickPlay{Mode: "Duel"})
	if err != nil {
		t.Fatal(err)
	}
	if other.Code() != host.Code() || other.IsHost() {
		t.Fatalf("stranger in %s (host %v), want a seat in %s", other.Code(), other.IsHost(), host.Code())
	}

	if err := fparty.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitParty(t, party, func(p protocol.Party) bool { return len(p.Members) == 1 })
	if err := fparty.Leave(ctx); !client.IsCode(err, protocol.CodeNotInParty) {
		t.Fatalf("second Leave: %v", err)
	}
}

func waitParty(t *testing.T, p *client.Party, ok func(protocol.Party) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !ok(p.Info()) {
		select {
		case <-p.Changed():
		case <-deadline:
			t.Fatalf("party never matched; last %+v", p.Info())
		}
	}
}
