package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a request's signature: t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<body>" keyed with the secret>. The timestamp is
// signed with the body, so a receiver that refuses one older than
// MaxSignatureAge cannot be made to act on a replayed request later.
const SignatureHeader = "X-Hostrelay-Signature"

// MaxSignatureAge is how old a signature's timestamp may be, either way,
// before Verify refuses it. A retried delivery is signed afresh.
const MaxSignatureAge = 5 * time.Minute

// Sign returns the SignatureHeader value for body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a SignatureHeader value against body: the MAC (in constant
// time) and a timestamp within MaxSignatureAge of now. It is what a Go
// receiver runs (docs/identity.md shows it in Node too).
func Verify(secret []byte, header string, body []byte, now time.Time) error {
	var ts, sig string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return fmt.Errorf("%w: want t=<unix>,v1=<hex>", ErrBadSignature)
	}
	if d := now.Sub(time.Unix(unix, 0)).Abs(); d > MaxSignatureAge {
		return fmt.Errorf("%w: timestamp %v off", ErrStaleSignature, d.Round(time.Second))
	}
	if !hmac.Equal([]byte(sig), []byte(mac(secret, ts, body))) {
		return ErrBadSignature
	}
	return nil
}
