package auth

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// keySet is the JWKS at Config.JWKSURL: fetched at start, every
// JWKSRefresh, and when a token names a kid it does not hold (at most once
// per JWKSMinRefresh), by keyfunc and jwkset.
type keySet struct {
	kf keyfunc.Keyfunc
	// failed is set when the last fetch failed, so a kid that is not found
	// reads as "keys unavailable" rather than "unknown key".
	failed atomic.Bool
}

func newKeySet(ctx context.Context, cfg *Config, log *slog.Logger) (*keySet, error) {
	ks := &keySet{}
	base, _ := http.DefaultTransport.(*http.Transport)
	client := &http.Client{
		Timeout:   cfg.JWKSTimeout,
		Transport: &fetchTransport{base: base.Clone(), max: cfg.MaxJWKSBytes, ks: ks},
	}
	noErr := true // start even while the issuer is down: hellos get auth_unavailable
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{cfg.JWKSURL}, keyfunc.Override{
		Client:                    client,
		HTTPTimeout:               cfg.JWKSTimeout,
		NoErrorReturnFirstHTTPReq: &noErr,
		RateLimitWaitMax:          cfg.JWKSTimeout,
		RefreshInterval:           cfg.JWKSRefresh,
		RefreshUnknownKID:         rate.NewLimiter(rate.Every(cfg.JWKSMinRefresh), 1),
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				ks.failed.Store(true)
				log.Warn("JWKS fetch failed", "url", u, "err", err)
			}
		},
	})
	if err != nil {
		return nil, errors.Join(ErrConfig, err)
	}
	ks.kf = kf
	return ks, nil
}

// keyfunc finds the key for t within ctx, refusing with a Cause.
func (ks *keySet) keyfunc(ctx context.Context) jwt.Keyfunc {
	inner := ks.kf.KeyfuncCtx(ctx)
	return func(t *jwt.Token) (any, error) {
		if kid, ok := t.Header["kid"].(string); !ok || kid == "" {
			return nil, refuse(CauseMalformed, "the token names no key (kid), which a JWKS needs")
		}
		key, err := inner(t)
		switch {
		case err == nil:
			return key, nil
		case ks.failed.Load() || ctx.Err() != nil:
			return nil, refuse(CauseUnavailable, "the key set could not be fetched in time; try again")
		case errors.Is(err, jwkset.ErrKeyNotFound):
			return nil, refuse(CauseUnknownKey, "the token's kid is not in the key set")
		default: // refresh rate-limited, or the key is for another alg
			return nil, refuse(CauseUnknownKey, "no usable key for the token's kid and alg")
		}
	}
}

// fetchTransport bounds what a JWKS response may hold and notes a fetch
// that got an answer (the error handler notes one that failed after it).
type fetchTransport struct {
	base *http.Transport
	max  int64
	ks   *keySet
}

func (t *fetchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		t.ks.failed.Store(false)
	}
	resp.Body = limitedBody{Reader: io.LimitReader(resp.Body, t.max), Closer: resp.Body}
	return resp, nil
}

type limitedBody struct {
	io.Reader
	io.Closer
}
