package client_test

import (
	"testing"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

// TestHostCheckAnsweredByGoHost: a host on the Go SDK answers the server's
// check by itself, so its clients' reports cannot vote it out
// (docs/protocol.md, Frozen hosts).
func TestHostCheckAnsweredByGoHost(t *testing.T) {
	url, hub := startServerHub(t, "client-tests-secret-0123456789")
	ctx := t.Context()
	host, err := dial(t, url, "Host").CreateRoom(ctx, protocol.CreateRoom{Name: "frozen?", MaxPlayers: 4, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	member, err := dial(t, url, "P").JoinRoom(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	// One client of one: its report is a majority, and the host is asked.
	if err := member.ReportHostSilent(ctx); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the host's answer refusing the vote", func() bool { return hub.Metrics().FreezeVotesRefused == 1 })
	m := hub.Metrics()
	if m.HostChecks != 1 || m.FreezeMigrations != 0 || !host.IsHost() {
		t.Fatalf("checks %d, freeze migrations %d, host still host %v", m.HostChecks, m.FreezeMigrations, host.IsHost())
	}
	// The host cannot report itself.
	if err := host.ReportHostSilent(ctx); !client.IsCode(err, protocol.CodeForbidden) {
		t.Fatalf("host's own report: %v", err)
	}
}
