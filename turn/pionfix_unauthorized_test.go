package turn

import (
	"testing"
	"time"

	"github.com/pion/stun/v3"
)

// TestWrongPasswordIs401: pion's client with a wrong password is answered
// 401 Unauthorized, as RFC 5389 section 10.2.2 says (pion/turn v4.1.4 alone
// answers 400 Bad Request), over UDP and TCP alike.
func TestWrongPasswordIs401(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("w", "room")
	creds := srv.Credentials("w", time.Now())
	creds.Password = "not-the-password"
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			if _, err := tr.client(t, srv, creds).Allocate(); turnCode(err) != stun.CodeUnauthorized {
				t.Fatalf("Allocate with a wrong password: %v, want 401 Unauthorized", err)
			}
		})
	}
}

// TestAuthRefusalsAre401: every refused credential gets a 401 with REALM
// and a NONCE the client can use: a wrong password, an ended session, an
// expired credential. A request whose nonce is stale is still 438 (pion's
// order of checks is kept), and a good request after a 401 succeeds. Over
// UDP and TCP alike.
func TestAuthRefusalsAre401(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) { testAuthRefusalsAre401(t, tr) })
	}
}

func testAuthRefusalsAre401(t *testing.T, tr transport) {
	srv, fs := newServer(t)
	fs.join("live", "room")
	fs.join("gone", "room")
	fs.end("gone")
	live := srv.Credentials("live", time.Now())
	expired := srv.Credentials("live", time.Now().Add(-2*srv.cfg.CredentialTTL))
	gone := srv.Credentials("gone", time.Now())

	for _, tc := range []struct {
		name               string
		username, password string
		method             stun.Method
	}{
		{"wrong password", live.Username, "wrong", stun.MethodAllocate},
		{"ended session", gone.Username, gone.Password, stun.MethodAllocate},
		{"expired credential", expired.Username, expired.Password, stun.MethodAllocate},
		{"ended session refreshes", gone.Username, gone.Password, stun.MethodRefresh},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tr.client(t, srv, live)
			res := ask(t, c, tc.username, tc.password, tc.method, udpTransport)
			if code := codeOf(t, res); code != stun.CodeUnauthorized {
				t.Fatalf("%s: error %d, want 401", tc.method, code)
			}
			var (
				realm stun.Realm
				nonce stun.Nonce
			)
			if realm.GetFrom(res) != nil || realm.String() != DefaultRealm || nonce.GetFrom(res) != nil {
				t.Fatalf("401 without REALM %q and NONCE: %s", DefaultRealm, res)
			}
			if res.Contains(stun.AttrMessageIntegrity) {
				t.Fatal("401 signed with a key the client does not have")
			}
			// The nonce of the 401 is good for a correct try.
			if tc.method == stun.MethodAllocate {
				res := askWith(t, c, live.Username, live.Password, realm, nonce, stun.MethodAllocate, udpTransport)
				if code := codeOf(t, res); code != 0 {
					t.Fatalf("Allocate with the 401's nonce: error %d", code)
				}
				_ = askWith(t, c, live.Username, live.Password, realm, nonce, stun.MethodRefresh, lifetime(0))
			}
		})
	}

	t.Run("stale nonce", func(t *testing.T) {
		c := tr.client(t, srv, live)
		res := askWith(t, c, live.Username, "wrong", stun.NewRealm(DefaultRealm), stun.NewNonce("stale"),
			stun.MethodAllocate, udpTransport)
		if code := codeOf(t, res); code != stun.CodeStaleNonce {
			t.Fatalf("error %d, want 438 Stale Nonce", code)
		}
	})
}

// TestRightPasswordUnaffected: the rewriter leaves good requests alone,
// including pion's own 400 for a malformed but authenticated one.
func TestRightPasswordUnaffected(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("ok", "room")
	creds := srv.Credentials("ok", time.Now())
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.client(t, srv, creds)
			allocate(t, c)
			// ChannelBind without CHANNEL-NUMBER: pion's 400, not an auth failure.
			res := ask(t, c, creds.Username, creds.Password, stun.MethodChannelBind, stunPeer(srv.cfg.PublicIP, 9))
			if code := codeOf(t, res); code != stun.CodeBadRequest {
				t.Fatalf("malformed ChannelBind: error %d, want pion's 400", code)
			}
		})
	}
}

// TestUpstreamCanary_Unauthorized: plain pion/turn still answers a wrong
// password 400 Bad Request (pionfix_unauthorized.go turns it into 401).
func TestUpstreamCanary_Unauthorized(t *testing.T) {
	_, err := plainPion(t, "not-the-password").Allocate()
	switch code := turnCode(err); code {
	case stun.CodeBadRequest:
	case stun.CodeUnauthorized:
		upstreamGone(t, "pionfix_unauthorized.go", "a wrong password is now answered 401")
	default:
		t.Fatalf("Allocate with a wrong password on plain pion: %v (code %d), want 400", err, code)
	}
}
