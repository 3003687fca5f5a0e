package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hostrelay/hostrelay/protocol"
)

// Identity is what a valid token says about its player.
type Identity struct {
	UserID  string    // sub: the game's stable user id
	Name    string    // name, normalised; empty when the token has none
	Meta    string    // meta as compact JSON (an object); empty when none
	Expires time.Time // exp
}

// Stats counts tokens since the Verifier started.
type Stats struct {
	Verified uint64
	Refused  map[Cause]uint64 // every Cause, zero or not
}

// Verifier checks tokens. It is safe for concurrent use; Close ends its
// background JWKS refresh.
type Verifier struct {
	cfg     Config
	methods []string
	keys    *keySet // nil without a JWKS URL
	cancel  context.CancelFunc

	verified atomic.Uint64
	refused  [causeCount]atomic.Uint64 // by index in Causes()
}

// claims are the token's claims that we read.
type claims struct {
	jwt.RegisteredClaims
	Name string          `json:"name,omitempty"`
	Meta json.RawMessage `json:"meta,omitempty"`
}

// New checks cfg and, with a JWKS URL, fetches the keys once (a failure is
// logged, not returned: hellos get auth_unavailable until a fetch works).
// With Mode off it returns nil and no error: there is nothing to verify.
func New(cfg Config, log *slog.Logger) (*Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mode == ModeOff {
		return nil, nil //nolint:nilnil // off is no verifier
	}
	if log == nil {
		log = slog.Default()
	}
	v := &Verifier{cfg: cfg}
	if len(cfg.HS256Secret) > 0 {
		v.methods = append(v.methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.JWKSURL != "" {
		v.methods = append(v.methods, jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg(),
			jwt.SigningMethodEdDSA.Alg())
		ctx, cancel := context.WithCancel(context.Background())
		keys, err := newKeySet(ctx, &v.cfg, log.With("component", "auth"))
		if err != nil {
			cancel()
			return nil, err
		}
		v.keys, v.cancel = keys, cancel
	}
	return v, nil
}

// Close stops the background JWKS refresh.
func (v *Verifier) Close() {
	if v != nil && v.cancel != nil {
		v.cancel()
	}
}

// Required reports whether a hello without a token is refused.
func (v *Verifier) Required() bool { return v != nil && v.cfg.Mode == ModeRequired }

// Stats reads the counters.
func (v *Verifier) Stats() Stats {
	st := Stats{Refused: make(map[Cause]uint64, len(v.refused))}
	for i, c := range Causes() {
		st.Refused[c] = v.refused[i].Load()
	}
	st.Verified = v.verified.Load()
	return st
}

// Verify checks token and returns who it names, or an *Error. An empty
// token is CauseMissing. A JWKS fetch it needs is bounded by JWKSTimeout
// and by ctx.
func (v *Verifier) Verify(ctx context.Context, token string) (Identity, error) {
	id, err := v.verify(ctx, token)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = refuse(CauseMalformed, "%v", err)
		}
		for i, c := range Causes() {
			if c == e.Cause {
				v.refused[i].Add(1)
			}
		}
		return Identity{}, e
	}
	v.verified.Add(1)
	return id, nil
}

func (v *Verifier) verify(ctx context.Context, token string) (Identity, error) {
	if token == "" {
		return Identity{}, refuse(CauseMissing, "this server needs a token from the game in hello")
	}
	if len(token) > v.cfg.MaxTokenBytes {
		return Identity{}, refuse(CauseTooLarge, "the token is %d bytes, over the limit of %d", len(token),
			v.cfg.MaxTokenBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, v.cfg.JWKSTimeout)
	defer cancel()
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(v.methods), jwt.WithLeeway(v.cfg.Leeway), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	}
	if v.cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(v.cfg.Audience))
	}
	if v.cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.cfg.Issuer))
	}
	var c claims
	t, err := jwt.NewParser(opts...).ParseWithClaims(token, &c, v.keyfunc(ctx))
	if err != nil {
		return Identity{}, v.classify(t, &c, err)
	}
	return identity(&c)
}

// keyfunc picks the key by the token's alg, already one of v.methods.
func (v *Verifier) keyfunc(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		if t.Method.Alg() == jwt.SigningMethodHS256.Alg() {
			return v.cfg.HS256Secret, nil
		}
		return v.keys.keyfunc(ctx)(t)
	}
}

// classify turns the parser's error into a Cause. The checks run in the
// parser's own order: shape, alg, key, signature, then claims.
func (v *Verifier) classify(t *jwt.Token, c *claims, err error) *Error {
	var e *Error
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return refuse(CauseMalformed, "not a well-formed JWT")
	case t != nil && !v.allowed(t.Header["alg"]):
		return refuse(CauseAlgorithm, "alg %s is not accepted here (accepted: %v)", algName(t.Header["alg"]), v.methods)
	case errors.As(err, &e):
		return e
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return refuse(CauseSignature, "the signature does not match the configured key")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && c.ExpiresAt == nil:
		return refuse(CauseClaims, "the token has no exp")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && v.cfg.Audience != "" && len(c.Audience) == 0:
		return refuse(CauseAudience, "the token has no aud; this server wants %q", v.cfg.Audience)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && v.cfg.Issuer != "" && c.Issuer == "":
		return refuse(CauseIssuer, "the token has no iss; this server wants %q", v.cfg.Issuer)
	case errors.Is(err, jwt.ErrTokenExpired):
		return refuse(CauseExpired, "the token has expired; fetch a fresh one")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return refuse(CauseNotYetValid, "the token is not valid yet (check the issuer's clock)")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return refuse(CauseAudience, "aud is not this server's audience")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return refuse(CauseIssuer, "iss is not this server's issuer")
	}
	return refuse(CauseMalformed, "the token could not be read")
}

func (v *Verifier) allowed(alg any) bool {
	s, ok := alg.(string)
	if !ok {
		return false
	}
	for _, m := range v.methods {
		if m == s {
			return true
		}
	}
	return false
}

// algName quotes an alg for a message, bounded: it comes from the client.
func algName(alg any) string {
	s, ok := alg.(string)
	if !ok {
		return "(none given)"
	}
	if len(s) > 16 || !utf8.ValidString(s) {
		return "(unknown)"
	}
	return fmt.Sprintf("%q", s)
}

// identity checks the claims the protocol carries against its bounds.
func identity(c *claims) (Identity, error) {
	if c.Subject == "" {
		return Identity{}, refuse(CauseClaims, "the token has no sub")
	}
	if len(c.Subject) > protocol.MaxUserID || !printable(c.Subject) {
		return Identity{}, refuse(CauseClaims, "sub must be at most %d bytes of printable text", protocol.MaxUserID)
	}
	id := Identity{UserID: c.Subject, Expires: c.ExpiresAt.Time}
	if c.Name != "" {
		id.Name = protocol.NormalizeName(c.Name)
		if err := protocol.ValidatePlayerName(id.Name); err != nil {
			return Identity{}, refuse(CauseClaims, "name is not a valid player name (%d characters at most)",
				protocol.MaxPlayerName)
		}
	}
	if len(c.Meta) > 0 && !bytes.Equal(c.Meta, []byte("null")) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, c.Meta); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
			return Identity{}, refuse(CauseClaims, "meta must be a JSON object")
		}
		if buf.Len() > protocol.MaxMeta {
			return Identity{}, refuse(CauseClaims, "meta is %d bytes as compact JSON, over the limit of %d",
				buf.Len(), protocol.MaxMeta)
		}
		id.Meta = buf.String()
	}
	return id, nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
