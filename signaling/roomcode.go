package signaling

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"math/big"
	"strings"

	"github.com/hostrelay/hostrelay/protocol"
)

var alphabetSize = big.NewInt(int64(len(protocol.RoomCodeAlphabet))) //nolint:gochecknoglobals // a constant big.Int

// newRoomCode draws protocol.RoomCodeLength symbols uniformly from the
// alphabet with crypto/rand: codes are the only thing between a stranger and
// a private room, so they must not be predictable.
func newRoomCode() (string, error) {
	var b strings.Builder
	for range protocol.RoomCodeLength {
		n, err := rand.Int(rand.Reader, alphabetSize)
		if err != nil {
			return "", fmt.Errorf("signaling: room code: %w", err)
		}
		b.WriteByte(protocol.RoomCodeAlphabet[n.Int64()])
	}
	return b.String(), nil
}

var sessionEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding) //nolint:gochecknoglobals // a stateless encoding

// newSessionToken returns 128 random bits: a bearer secret, unlike the id.
func newSessionToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "st_" + sessionEncoding.EncodeToString(b[:])
}

// newResumeToken returns 128 random bits for one resume.
func newResumeToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "rs_" + sessionEncoding.EncodeToString(b[:])
}

// newSessionID returns 80 random bits. It appears in TURN usernames, so it
// must not contain ':' (the TURN REST separator).
func newSessionID() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux ≥ 3.17 (getrandom)
	return "s_" + sessionEncoding.EncodeToString(b[:])
}
