package webhook

import "errors"

var (
	// ErrBadSignature: a signature header that is malformed or does not match.
	ErrBadSignature = errors.New("webhook: bad signature")
	// ErrStaleSignature: a signature whose timestamp is over MaxSignatureAge off.
	ErrStaleSignature = errors.New("webhook: signature too old")
	// ErrClosed: the sender is closed.
	ErrClosed = errors.New("webhook: sender closed")
)
