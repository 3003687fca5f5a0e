package netcode

import "errors"

// ErrMalformed is wrapped by every decoding error: the packet is truncated,
// malformed or past a limit. Receivers drop it and count it. The messages
// are those of the TypeScript decoder, so logs read the same on both sides.
var ErrMalformed = errors.New("malformed packet")

// wireError is a decoding error with the TypeScript decoder's message.
type wireError struct{ msg string }

func (e *wireError) Error() string { return e.msg }
func (e *wireError) Unwrap() error { return ErrMalformed }
func malformed(msg string) error   { return &wireError{msg: msg} }

func truncated() error { return malformed("netcode: packet truncated") }
