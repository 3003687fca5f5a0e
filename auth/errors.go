package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/hostrelay/hostrelay/protocol"
)

// Cause is why a token was refused: a metric label and the start of the
// error's message. The set is fixed (Causes), never taken from a token.
type Cause string

const (
	CauseMissing     Cause = "missing"       // no token, and -auth required
	CauseTooLarge    Cause = "too_large"     // longer than Config.MaxTokenBytes
	CauseMalformed   Cause = "malformed"     // not a JWT, or its JSON is not what we read
	CauseAlgorithm   Cause = "algorithm"     // alg none, or one not configured
	CauseSignature   Cause = "signature"     // signed with another key
	CauseUnknownKey  Cause = "unknown_key"   // kid not in the JWKS, even after a refresh
	CauseExpired     Cause = "expired"       // exp in the past (beyond the leeway)
	CauseNotYetValid Cause = "not_yet_valid" // nbf or iat in the future
	CauseAudience    Cause = "audience"      // aud is not Config.Audience
	CauseIssuer      Cause = "issuer"        // iss is not Config.Issuer
	CauseClaims      Cause = "claims"        // sub or exp missing, or sub, name or meta out of bounds
	CauseUnavailable Cause = "unavailable"   // the JWKS could not be fetched in time
)

// causeCount is len(Causes()); TestCausesCounted keeps them equal.
const causeCount = 12

// Causes are every Cause, for metrics.
func Causes() []Cause {
	return []Cause{CauseMissing, CauseTooLarge, CauseMalformed, CauseAlgorithm, CauseSignature, CauseUnknownKey,
		CauseExpired, CauseNotYetValid, CauseAudience, CauseIssuer, CauseClaims, CauseUnavailable}
}

// Error is a refused token. Code is the protocol error code a client sees
// (auth_required, auth_invalid or auth_unavailable), Message says why in
// words that never quote the token.
type Error struct {
	Code    string
	Cause   Cause
	Message string
}

func (e *Error) Error() string { return "auth: " + e.Message }

func refuse(c Cause, format string, args ...any) *Error {
	code := protocol.CodeAuthInvalid
	switch c {
	case CauseMissing:
		code = protocol.CodeAuthRequired
	case CauseUnavailable:
		code = protocol.CodeAuthUnavailable
	}
	return &Error{Code: code, Cause: c, Message: fmt.Sprintf(string(c)+": "+format, args...)}
}

// ErrConfig reports a Config that cannot work.
var ErrConfig = errors.New("auth: config")

// Fingerprint is what a log may say about a token: the first 12 hex digits
// of its SHA-256, enough to match two log lines, useless to replay.
func Fingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:6])
}
