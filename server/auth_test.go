package server

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

const authSecret = "server-test-secret-of-at-least-32-bytes"

func TestConfigAuth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(authSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig([]string{"-auth", "required", "-auth-hs256-secret-file", path, "-auth-audience", "game"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if string(cfg.Auth.HS256Secret) != authSecret || cfg.Auth.Mode != "required" || cfg.Auth.Audience != "game" {
		t.Fatalf("auth = %+v", cfg.Auth)
	}
	for _, args := range [][]string{
		{"-auth", "required"}, // no key
		{"-auth", "maybe"},
		{"-auth", "optional", "-auth-hs256-secret", "short"},
		{"-auth", "optional", "-auth-hs256-secret", authSecret, "-auth-max-token", "4097"},
		{"-auth", "optional", "-auth-jwks-url", "ftp://keys"},
	} {
		_, err := LoadConfig(args, noEnv, io.Discard)
		if err == nil {
			t.Errorf("%v: accepted", args)
		} else if strings.Contains(err.Error(), authSecret) {
			t.Errorf("%v: the error prints the secret", args)
		}
	}
}

// TestAuthEndToEnd: a real server with -auth required refuses a hello
// without a token, admits one with, shows the player verified, and counts
// both in /metrics.
func TestAuthEndToEnd(t *testing.T) {
	s := startServer(t, "-auth", "required", "-auth-hs256-secret", authSecret, "-metrics-addr", "127.0.0.1:0")
	conn, resp, err := dialWS(t, s.Addrs().HTTP, "", nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	l := newLobby(t, conn)
	err = l.call(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada"}, &l.welcome)
	var re lobbytest.ReplyError
	if !errors.As(err, &re) || re.Code != protocol.CodeAuthRequired {
		t.Fatalf("hello without a token: %v", err)
	}
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "user-7", "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(authSecret))
	if err != nil {
		t.Fatal(err)
	}
	conn, resp, err = dialWS(t, s.Addrs().HTTP, "", nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	l = newLobby(t, conn)
	if err := l.call(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada", Token: token}, &l.welcome); err != nil {
		t.Fatal(err)
	}
	if p := l.create("room", 4, "").Players[0]; !p.Verified || p.UserID != "user-7" {
		t.Fatalf("player = %+v", p)
	}
	m := scrapeMetrics(t, s.Addrs().Metrics)
	if v := m.get(t, "hostrelay_auth_tokens_total", "result=verified"); v != 1 {
		t.Fatalf("verified = %v", v)
	}
	if v := m.get(t, "hostrelay_auth_tokens_total", "result=missing"); v != 1 {
		t.Fatalf("missing = %v", v)
	}
}
