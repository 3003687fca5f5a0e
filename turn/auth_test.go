package turn

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/stun/v3"
)

func TestAuth(t *testing.T) {
	var logs logBuffer
	srv, fs := newServer(t, recordLogs(&logs))
	fs.join("alice", "room")
	fs.join("bob", "room")
	fs.join("gone", "room")
	fs.end("gone")
	now := time.Now()

	signed := func(username string) Credentials {
		return Credentials{Username: username, Password: restPassword(testSecret, username)}
	}
	tampered := srv.Credentials("alice", now)
	tampered.Password = srv.Credentials("bob", now).Password

	// Each case names the reason the server must log, so a case cannot pass
	// by failing for some other reason.
	refused := []struct {
		name, reason string
		creds        Credentials
	}{
		{"unknown session", "session not live", srv.Credentials("mallory", now)},
		{"closed session", "session not live", srv.Credentials("gone", now)},
		{"expired", "expired", srv.Credentials("alice", now.Add(-DefaultCredentialTTL-time.Minute))},
		{"beyond MaxTTL", "expiry beyond MaxTTL", srv.Credentials("alice", now.Add(DefaultMaxTTL))},
		{"tampered username", "message integrity", tampered},
		{"wrong secret", "message integrity", Credentials{
			Username: srv.Credentials("alice", now).Username,
			Password: restPassword([]byte("another-secret-of-16+bytes"), srv.Credentials("alice", now).Username),
		}},
		{"malformed: no expiry", "malformed username", signed("alice")},
		{"malformed: signed expiry", "malformed username",
			signed("+" + strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + ":alice")},
		{"malformed: empty session", "malformed username",
			signed(strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + ":")},
		{"no credentials", "malformed username", Credentials{}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			before := len(logs.String())
			c := newClient(t, srv, tc.creds)
			relay, err := c.Allocate()
			if err == nil {
				_ = relay.Close()
				t.Fatal("Allocate succeeded")
			}
			want := "reason=" + tc.reason // as slog's text handler writes it
			if strings.Contains(tc.reason, " ") {
				want = "reason=" + strconv.Quote(tc.reason)
			}
			if got := logs.String()[before:]; !strings.Contains(got, want) {
				t.Fatalf("refusal not logged with %s; logs:\n%s", want, got)
			}
		})
	}

	t.Run("valid", func(t *testing.T) {
		allocated(t, srv, "alice")
	})
	if n := srv.Stats().Allocations; n > 1 {
		t.Fatalf("%d allocations after one valid Allocate", n)
	}
}

func TestAuthWrongRealm(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("alice", "room")
	c := srv.Credentials("alice", time.Now())
	src := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
	if _, ok := srv.authenticate(c.Username, "other", src); ok {
		t.Fatal("wrong realm accepted")
	}
	if _, ok := srv.authenticate(c.Username, DefaultRealm, src); !ok {
		t.Fatal("right realm refused")
	}
}

// An allocation outlives its credential's expiry while its session is live,
// because pion re-authenticates every Refresh, CreatePermission and
// ChannelBind; the expired credential cannot make new allocations. Over UDP
// and TCP: the rewriter recognises the credential too, so a Refresh asking an
// hour is still granted only the lifetime cap.
func TestExpiredCredentialKeepsLiveAllocation(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) { testExpiredCredentialKeepsLiveAllocation(t, tr) })
	}
}

func testExpiredCredentialKeepsLiveAllocation(t *testing.T, tr transport) {
	srv, fs := newServer(t, func(c *Config) { c.CredentialTTL = time.Second })
	fs.join("alice", "room")
	fs.join("bob", "room")
	creds := srv.Credentials("alice", time.Now())
	client := tr.client(t, srv, creds)
	relay := allocate(t, client)
	bob := newClient(t, srv, srv.Credentials("bob", time.Now()))
	peer := allocate(t, bob)
	if err := bob.CreatePermission(relay.LocalAddr()); err != nil {
		t.Fatal(err)
	}

	// Wait out the credential: expiry is in whole seconds.
	time.Sleep(time.Until(creds.Expires.Add(1100 * time.Millisecond)))

	if err := client.CreatePermission(peer.LocalAddr()); err != nil {
		t.Fatalf("CreatePermission after expiry: %v", err)
	}
	if !deliver(relay, peer.LocalAddr(), peer, "after-expiry", 3*time.Second) {
		t.Fatal("relay stopped after the credential expired")
	}
	res := ask(t, client, creds.Username, creds.Password, stun.MethodRefresh, lifetime(3599))
	if code := codeOf(t, res); code != 0 {
		t.Fatalf("Refresh after expiry: error %d", code)
	}
	if got, want := lifetimeOf(t, res), uint32(srv.cfg.MaxAllocationLifetime/time.Second); got != want {
		t.Fatalf("Refresh after expiry granted %ds, want the cap %ds", got, want)
	}
	if _, err := tr.client(t, srv, creds).Allocate(); err == nil {
		t.Fatal("expired credential made a new allocation")
	}

	fs.end("alice")
	err := client.CreatePermission(&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9})
	if err == nil {
		t.Fatal("CreatePermission succeeded after the session ended")
	}
}
