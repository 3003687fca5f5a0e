package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/hostrelay/hostrelay/protocol"
)

var secret = []byte("0123456789abcdef0123456789abcdef") //nolint:gochecknoglobals // test data

func hsConfig() Config {
	c := DefaultConfig()
	c.Mode = ModeRequired
	c.HS256Secret = secret
	c.Audience = "game"
	c.Issuer = "backend"
	return c
}

func claimsFor(sub string) jwt.MapClaims {
	return jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Hour).Unix(), "aud": "game", "iss": "backend"}
}

func sign(t *testing.T, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newVerifier(t *testing.T, cfg Config) *Verifier {
	t.Helper()
	v, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

func wantCause(t *testing.T, err error, code string, c Cause) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Error with cause %s", err, c)
	}
	if e.Code != code || e.Cause != c {
		t.Fatalf("err = %s %s (%q), want %s %s", e.Code, e.Cause, e.Message, code, c)
	}
}

func TestVerifyHS256(t *testing.T) {
	v := newVerifier(t, hsConfig())
	c := claimsFor("user-1")
	c["name"] = "  Ada  "
	c["meta"] = map[string]any{"rank": 3, "team": "red"}
	id, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, secret, "", c))
	if err != nil {
		t.Fatal(err)
	}
	if id.UserID != "user-1" || id.Name != "Ada" || id.Meta != `{"rank":3,"team":"red"}` {
		t.Fatalf("identity = %+v", id)
	}
	if v.Stats().Verified != 1 {
		t.Fatalf("stats = %+v", v.Stats())
	}
}

func TestVerifyRefusals(t *testing.T) {
	v := newVerifier(t, hsConfig())
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(k string, val any) jwt.MapClaims { c := claimsFor("u"); c[k] = val; return c }
	without := func(k string) jwt.MapClaims { c := claimsFor("u"); delete(c, k); return c }
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claimsFor("u")).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	hs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, secret, "", c) }
	cases := []struct {
		name, token, code string
		cause             Cause
	}{
		{"empty", "", protocol.CodeAuthRequired, CauseMissing},
		{"garbage", "not.a.jwt", protocol.CodeAuthInvalid, CauseMalformed},
		{"alg none", none, protocol.CodeAuthInvalid, CauseAlgorithm},
		{"alg RS256 without a JWKS", sign(t, jwt.SigningMethodRS256, rsaKey, "k", claimsFor("u")), protocol.CodeAuthInvalid, CauseAlgorithm},
		{"alg HS512", sign(t, jwt.SigningMethodHS512, secret, "", claimsFor("u")), protocol.CodeAuthInvalid, CauseAlgorithm},
		{"wrong key", sign(t, jwt.SigningMethodHS256, []byte("another secret of thirty-two bytes"), "", claimsFor("u")), protocol.CodeAuthInvalid, CauseSignature},
		{"expired", hs(with("exp", time.Now().Add(-time.Minute).Unix())), protocol.CodeAuthInvalid, CauseExpired},
		{"not yet valid", hs(with("nbf", time.Now().Add(time.Minute).Unix())), protocol.CodeAuthInvalid, CauseNotYetValid},
		{"issued in the future", hs(with("iat", time.Now().Add(time.Minute).Unix())), protocol.CodeAuthInvalid, CauseNotYetValid},
		{"wrong audience", hs(with("aud", "other")), protocol.CodeAuthInvalid, CauseAudience},
		{"no audience", hs(without("aud")), protocol.CodeAuthInvalid, CauseAudience},
		{"wrong issuer", hs(with("iss", "other")), protocol.CodeAuthInvalid, CauseIssuer},
		{"no exp", hs(without("exp")), protocol.CodeAuthInvalid, CauseClaims},
		{"no sub", hs(without("sub")), protocol.CodeAuthInvalid, CauseClaims},
		{"sub past the limit", hs(with("sub", strings.Repeat("u", protocol.MaxUserID+1))), protocol.CodeAuthInvalid, CauseClaims},
		{"sub with a control character", hs(with("sub", "a\nb")), protocol.CodeAuthInvalid, CauseClaims},
		{"name too long", hs(with("name", strings.Repeat("n", protocol.MaxPlayerName+1))), protocol.CodeAuthInvalid, CauseClaims},
		{"meta not an object", hs(with("meta", []int{1})), protocol.CodeAuthInvalid, CauseClaims},
		{"name not a string", hs(with("name", 7)), protocol.CodeAuthInvalid, CauseMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tc.token)
			wantCause(t, err, tc.code, tc.cause)
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Fatal("the error quotes the token")
			}
		})
	}
	st := v.Stats()
	if st.Verified != 0 || st.Refused[CauseAlgorithm] != 3 || st.Refused[CauseClaims] != 6 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestVerifyLeeway(t *testing.T) {
	v := newVerifier(t, hsConfig())
	c := claimsFor("u")
	c["exp"] = time.Now().Add(-10 * time.Second).Unix() // within the 30 s leeway
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, secret, "", c)); err != nil {
		t.Fatal(err)
	}
}

// padded is a valid token of exactly n bytes.
func padded(t *testing.T, n int) string {
	t.Helper()
	for pad := 0; pad < n; pad++ {
		c := claimsFor("u")
		c["pad"] = strings.Repeat("p", pad)
		if s := sign(t, jwt.SigningMethodHS256, secret, "", c); len(s) >= n {
			if len(s) == n {
				return s
			}
			c["pad"] = strings.Repeat("p", pad-1) + "\u00e9" // one byte more in JSON shifts base64 by one
			if s = sign(t, jwt.SigningMethodHS256, secret, "", c); len(s) == n {
				return s
			}
		}
	}
	t.Fatalf("no token of %d bytes", n)
	return ""
}

func TestTokenSizeLimit(t *testing.T) {
	v := newVerifier(t, hsConfig())
	at := padded(t, DefaultMaxTokenBytes)
	if _, err := v.Verify(context.Background(), at); err != nil {
		t.Fatalf("a token of exactly %d bytes: %v", len(at), err)
	}
	past := padded(t, DefaultMaxTokenBytes+1)
	_, err := v.Verify(context.Background(), past)
	wantCause(t, err, protocol.CodeAuthInvalid, CauseTooLarge)
}

func TestMetaLimit(t *testing.T) {
	v := newVerifier(t, hsConfig())
	meta := func(n int) map[string]string { // {"k":"…"} is 8 bytes around the value
		return map[string]string{"k": strings.Repeat("m", n-8)}
	}
	c := claimsFor("u")
	c["meta"] = meta(protocol.MaxMeta)
	id, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, secret, "", c))
	if err != nil || len(id.Meta) != protocol.MaxMeta {
		t.Fatalf("meta at the limit: %v, %d bytes", err, len(id.Meta))
	}
	c["meta"] = meta(protocol.MaxMeta + 1)
	_, err = v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, secret, "", c))
	wantCause(t, err, protocol.CodeAuthInvalid, CauseClaims)
}

func TestUserIDLimit(t *testing.T) {
	v := newVerifier(t, hsConfig())
	id, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, secret, "",
		claimsFor(strings.Repeat("u", protocol.MaxUserID))))
	if err != nil || len(id.UserID) != protocol.MaxUserID {
		t.Fatalf("sub at the limit: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"no key":           func(c *Config) { c.HS256Secret = nil },
		"short secret":     func(c *Config) { c.HS256Secret = []byte("short") },
		"bad mode":         func(c *Config) { c.Mode = "maybe" },
		"bad url":          func(c *Config) { c.JWKSURL = "file:///etc/keys" },
		"token limit 0":    func(c *Config) { c.MaxTokenBytes = 0 },
		"token limit high": func(c *Config) { c.MaxTokenBytes = protocol.MaxAuthToken + 1 },
	} {
		c := hsConfig()
		mut(&c)
		if _, err := New(c, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", name, err)
		}
	}
	if v, err := New(DefaultConfig(), nil); v != nil || err != nil {
		t.Fatalf("off: %v, %v", v, err)
	}
}

// issuer is a JWKS server whose key set a test can swap, stall or stop.
type issuer struct {
	mu    sync.Mutex
	keys  []jwkset.JWK
	delay time.Duration
	down  bool
	hits  int
	srv   *httptest.Server
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		is.hits++
		delay, down, keys := is.delay, is.down, is.keys
		is.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		set := jwkset.JWKSMarshal{}
		for _, k := range keys {
			set.Keys = append(set.Keys, k.Marshal())
		}
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) set(f func(is *issuer)) { is.mu.Lock(); f(is); is.mu.Unlock() }

func publicJWK(t *testing.T, pub crypto.PublicKey, kid string) jwkset.JWK {
	t.Helper()
	k, err := jwkset.NewJWKFromKey(pub, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func jwksConfig(url string) Config {
	c := DefaultConfig()
	c.Mode = ModeRequired
	c.JWKSURL = url
	c.Audience, c.Issuer = "game", "backend"
	c.JWKSTimeout = 300 * time.Millisecond
	c.JWKSMinRefresh = time.Hour // one refresh for an unknown kid in each test
	return c
}

func TestJWKSAlgorithmsAndRotation(t *testing.T) {
	is := newIssuer(t)
	rsaA, _ := rsa.GenerateKey(rand.Reader, 2048)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	is.set(func(is *issuer) {
		is.keys = []jwkset.JWK{publicJWK(t, rsaA.Public(), "rsa-a"), publicJWK(t, ec.Public(), "ec"),
			publicJWK(t, edPub, "ed")}
	})
	v := newVerifier(t, jwksConfig(is.srv.URL))
	ctx := context.Background()
	for _, tok := range []string{
		sign(t, jwt.SigningMethodRS256, rsaA, "rsa-a", claimsFor("r")),
		sign(t, jwt.SigningMethodES256, ec, "ec", claimsFor("e")),
		sign(t, jwt.SigningMethodEdDSA, edPriv, "ed", claimsFor("d")),
	} {
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	// An HS256 token is refused even though a JWKS could hold an oct key.
	_, err := v.Verify(ctx, sign(t, jwt.SigningMethodHS256, secret, "rsa-a", claimsFor("u")))
	wantCause(t, err, protocol.CodeAuthInvalid, CauseAlgorithm)
	// No kid: refused rather than tried against every key.
	_, err = v.Verify(ctx, sign(t, jwt.SigningMethodRS256, rsaA, "", claimsFor("u")))
	wantCause(t, err, protocol.CodeAuthInvalid, CauseMalformed)
	// Signed by a key the issuer never published, under a known kid.
	rsaX, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, err = v.Verify(ctx, sign(t, jwt.SigningMethodRS256, rsaX, "rsa-a", claimsFor("u")))
	wantCause(t, err, protocol.CodeAuthInvalid, CauseSignature)

	// The issuer rotates: rsa-a is gone, rsa-b is new. The first token
	// with kid rsa-b makes the verifier fetch the set again.
	rsaB, _ := rsa.GenerateKey(rand.Reader, 2048)
	is.set(func(is *issuer) { is.keys = []jwkset.JWK{publicJWK(t, rsaB.Public(), "rsa-b")}; is.hits = 0 })
	id, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, rsaB, "rsa-b", claimsFor("rotated")))
	if err != nil || id.UserID != "rotated" {
		t.Fatalf("after rotation: %v", err)
	}
	// The retired key is refused, and an unknown kid does not make it fetch
	// again within JWKSMinRefresh.
	_, err = v.Verify(ctx, sign(t, jwt.SigningMethodRS256, rsaA, "rsa-a", claimsFor("u")))
	wantCause(t, err, protocol.CodeAuthInvalid, CauseUnknownKey)
	_, err = v.Verify(ctx, sign(t, jwt.SigningMethodRS256, rsaA, "made-up", claimsFor("u")))
	wantCause(t, err, protocol.CodeAuthInvalid, CauseUnknownKey)
	is.set(func(is *issuer) {
		if is.hits != 1 {
			t.Errorf("the JWKS was fetched %d times after the rotation, want 1", is.hits)
		}
	})
}

func TestJWKSDownAndSlow(t *testing.T) {
	is := newIssuer(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is.set(func(is *issuer) { is.down = true })
	cfg := jwksConfig(is.srv.URL)
	cfg.JWKSMinRefresh = time.Millisecond
	v := newVerifier(t, cfg) // starts although the issuer is down
	tok := sign(t, jwt.SigningMethodES256, key, "ec", claimsFor("u"))
	_, err := v.Verify(context.Background(), tok)
	wantCause(t, err, protocol.CodeAuthUnavailable, CauseUnavailable)

	// Slow: the fetch is cut at JWKSTimeout and the hello answered then.
	is.set(func(is *issuer) {
		is.down, is.delay = false, 5*time.Second
		is.keys = []jwkset.JWK{publicJWK(t, key.Public(), "ec")}
	})
	time.Sleep(2 * time.Millisecond) // past JWKSMinRefresh
	start := time.Now()
	_, err = v.Verify(context.Background(), tok)
	wantCause(t, err, protocol.CodeAuthUnavailable, CauseUnavailable)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a slow JWKS held the hello %v", took)
	}

	// Back: the next token with that kid fetches and passes.
	is.set(func(is *issuer) { is.delay = 0 })
	time.Sleep(2 * time.Millisecond)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if st := v.Stats(); st.Refused[CauseUnavailable] != 2 || st.Verified != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestJWKSTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"keys":[` + strings.Repeat(" ", 2048) + `]}`))
	}))
	defer srv.Close()
	cfg := jwksConfig(srv.URL)
	cfg.MaxJWKSBytes = 1024
	v := newVerifier(t, cfg)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodES256, key, "ec", claimsFor("u")))
	wantCause(t, err, protocol.CodeAuthUnavailable, CauseUnavailable)
}

func TestFingerprint(t *testing.T) {
	if f := Fingerprint("a.b.c"); len(f) != 12 || strings.Contains(f, "a.b.c") {
		t.Fatalf("fingerprint %q", f)
	}
}

// FuzzVerify: whatever the bytes, Verify answers an *Error or an identity
// within bounds, and never quotes the token.
func FuzzVerify(f *testing.F) {
	v, err := New(hsConfig(), nil)
	if err != nil {
		f.Fatal(err)
	}
	defer v.Close()
	c := claimsFor("u")
	c["meta"] = map[string]any{"a": []any{1, "x"}}
	good, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{good, "", "a.b.c", "eyJhbGciOiJub25lIn0.e30.", good + "x", strings.Repeat(".", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		id, err := v.Verify(context.Background(), token)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("not an *Error: %v", err)
			}
			if len(token) > 8 && strings.Contains(e.Message, token) {
				t.Fatal("the message quotes the token")
			}
			return
		}
		if id.UserID == "" || len(id.UserID) > protocol.MaxUserID || len(id.Meta) > protocol.MaxMeta {
			t.Fatalf("identity out of bounds: %+v", id)
		}
	})
}

func TestCausesCounted(t *testing.T) {
	if len(Causes()) != causeCount {
		t.Fatalf("%d causes, counters for %d", len(Causes()), causeCount)
	}
}
