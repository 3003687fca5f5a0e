//go:build !(linux || darwin)

package server

// raiseFileLimit cannot read the limit on this platform: 0 means unknown,
// and the connection caps fall back to fixed defaults.
func raiseFileLimit() (soft, hard uint64, err error) { return 0, 0, nil }
