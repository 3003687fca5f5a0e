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
