package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/protocol"
)

const identitySecret = "client-identity-secret-of-32-bytes!"

// TestDialWithToken: a Go player with a token is verified; one without is
// refused by a server with -auth required.
func TestDialWithToken(t *testing.T) {
	url := startServerWithSecret(t, "client-tests-secret-0123456789", "-auth", "required", "-auth-hs256-secret", identitySecret)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := client.Dial(ctx, url, client.Options{Name: "Bot"}); err == nil {
		t.Fatal("dial without a token was accepted")
	} else if e := (*client.Error)(nil); !errors.As(err, &e) || e.Code != protocol.CodeAuthRequired {
		t.Fatalf("dial without a token: %v", err)
	}
	fetched := 0
	l, err := client.Dial(ctx, url, client.Options{Name: "Bot", GetToken: func(context.Context) (string, error) {
		fetched++
		return jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"sub": "bot-1", "exp": time.Now().Add(time.Hour).Unix(),
		}).SignedString([]byte(identitySecret))
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := l.CreateRoom(ctx, protocol.CreateRoom{Name: "bots", MaxPlayers: 2, MembersOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Leave(ctx) //nolint:errcheck // teardown
	if p := r.Players()[0]; !p.Verified || p.UserID != "bot-1" || fetched != 1 {
		t.Fatalf("player %+v, tokens fetched %d", p, fetched)
	}
}

// TestKickAndBan: a host's KickAndBan keeps the verified user out of the
// room on a new connection too (banned), where a plain kick would not.
func TestKickAndBan(t *testing.T) {
	url := startServerWithSecret(t, "client-tests-secret-0123456789", "-auth", "optional", "-auth-hs256-secret", identitySecret)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "bot-2", "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(identitySecret))
	if err != nil {
		t.Fatal(err)
	}
	hostL, err := client.Dial(ctx, url, client.Options{Name: "Host"})
	if err != nil {
		t.Fatal(err)
	}
	defer hostL.Close()
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "r", MaxPlayers: 4})
	if err != nil {
		t.Fatal(err)
	}
	botL, err := client.Dial(ctx, url, client.Options{Name: "Bot", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer botL.Close()
	bot, err := botL.JoinRoom(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := host.KickAndBan(ctx, bot.You()); err != nil {
		t.Fatal(err)
	}
	again, err := client.Dial(ctx, url, client.Options{Name: "Bot 2", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.JoinRoom(ctx, host.Code(), ""); !client.IsCode(err, protocol.CodeBanned) {
		t.Fatalf("rejoin on a new connection after KickAndBan: %v, want banned", err)
	}
}
