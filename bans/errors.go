package bans

import "errors"

var (
	// ErrInvalid reports a ban that cannot be added (an empty or malformed
	// user id or prefix, a duration out of range, a reason too long).
	ErrInvalid = errors.New("bans: invalid ban")
	// ErrFull reports a ban past Config.MaxBans.
	ErrFull = errors.New("bans: the list is full")
	// ErrNotFound reports lifting a ban that is not (or no longer) there.
	ErrNotFound = errors.New("bans: no such ban")
	// ErrCorrupt reports a ban file that cannot be read as one: too large,
	// not the format, or holding a ban that is not valid.
	ErrCorrupt = errors.New("bans: corrupt ban file")
)
