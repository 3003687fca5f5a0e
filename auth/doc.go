// Package auth verifies the identity tokens a game's backend issues to its
// players: JWTs signed with a shared secret (HS256) or with keys published at
// a JWKS URL (RS256, ES256, EdDSA). A Verifier turns a token into an
// Identity or into an *Error whose Code is a protocol error code and whose
// Cause is a fixed metric label. A token is never logged; Fingerprint gives
// the short hash that may be.
package auth
