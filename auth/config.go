package auth

import (
	"fmt"
	"net/url"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// Mode is what a hello without a verified token may do.
type Mode string

const (
	ModeOff      Mode = "off"      // tokens are not read; every player is unverified
	ModeOptional Mode = "optional" // a token, if sent, must be valid; none is fine
	ModeRequired Mode = "required" // every hello must carry a valid token
)

// Config configures a Verifier. Start from DefaultConfig.
type Config struct {
	Mode Mode
	// HS256Secret verifies tokens signed with HS256; at least 32 bytes.
	HS256Secret []byte
	// JWKSURL is where the public keys for RS256, ES256 and EdDSA tokens
	// are published; a token must name its key with kid.
	JWKSURL string
	// Audience and Issuer, when set, must equal the token's aud and iss.
	Audience string
	Issuer   string
	// MaxTokenBytes bounds a token; a longer one is refused unread.
	MaxTokenBytes int
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
	// JWKSTimeout bounds one fetch of the JWKS, and so how long a hello
	// waits for keys.
	JWKSTimeout time.Duration
	// JWKSRefresh is how often the JWKS is fetched in the background.
	JWKSRefresh time.Duration
	// JWKSMinRefresh is the least time between two fetches caused by a
	// token whose kid is unknown (a rotated key), so a flood of made-up
	// kids costs the issuer one request per interval.
	JWKSMinRefresh time.Duration
	// MaxJWKSBytes bounds the JWKS document read.
	MaxJWKSBytes int64
}

// Defaults and bounds.
const (
	DefaultMaxTokenBytes = 4 << 10
	MinHS256Secret       = 32 // bytes: HS256's key should be as long as its hash
)

// DefaultConfig is auth off, with every limit at its default.
func DefaultConfig() Config {
	return Config{
		Mode:           ModeOff,
		MaxTokenBytes:  DefaultMaxTokenBytes,
		Leeway:         30 * time.Second,
		JWKSTimeout:    3 * time.Second,
		JWKSRefresh:    time.Hour,
		JWKSMinRefresh: 30 * time.Second,
		MaxJWKSBytes:   256 << 10,
	}
}

// ParseMode reads off, optional or required.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeOff, ModeOptional, ModeRequired:
		return m, nil
	}
	return "", fmt.Errorf("%w: mode %q is not off, optional or required", ErrConfig, s)
}

// Validate reports a Config that cannot work; New calls it.
func (c *Config) Validate() error {
	if _, err := ParseMode(string(c.Mode)); err != nil {
		return err
	}
	if c.Mode == ModeOff {
		return nil
	}
	if len(c.HS256Secret) == 0 && c.JWKSURL == "" {
		return fmt.Errorf("%w: auth %s needs an HS256 secret or a JWKS URL", ErrConfig, c.Mode)
	}
	if len(c.HS256Secret) > 0 && len(c.HS256Secret) < MinHS256Secret {
		return fmt.Errorf("%w: the HS256 secret must be at least %d bytes", ErrConfig, MinHS256Secret)
	}
	if c.JWKSURL != "" {
		u, err := url.Parse(c.JWKSURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%w: the JWKS URL must be an http or https URL", ErrConfig)
		}
	}
	if c.MaxTokenBytes <= 0 || c.JWKSTimeout <= 0 || c.JWKSRefresh <= 0 || c.JWKSMinRefresh <= 0 ||
		c.MaxJWKSBytes <= 0 || c.Leeway < 0 {
		return fmt.Errorf("%w: a limit is zero or negative", ErrConfig)
	}
	if c.MaxTokenBytes > protocol.MaxAuthToken {
		return fmt.Errorf("%w: the token limit may be at most %d bytes", ErrConfig, protocol.MaxAuthToken)
	}
	return nil
}
