package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/turn"
)

// The text forms of Config's fields, as flag.Values: a flag, a variable and
// a YAML scalar are all read by Set, so "1MiB", "auto" or "30s" mean the
// same wherever they are written. String is the form -h, the README and
// the sample file show. Each tolerates a nil pointer in String, which flag
// calls on a zero value to tell a default from none.

type strValue struct{ p *string }

func (v strValue) Set(s string) error { *v.p = s; return nil }
func (v strValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

type durValue struct{ p *time.Duration }

func (v durValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q: want a duration like 30s, 10m or 6h", s)
	}
	*v.p = d
	return nil
}

func (v durValue) String() string {
	if v.p == nil {
		return ""
	}
	return fmtDuration(*v.p)
}

// fmtDuration drops the zero units time.Duration.String keeps: 6h, not 6h0m0s.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// boolValue is on or off (true, false, 1 and 0 too).
type boolValue struct{ p *bool }

func (v boolValue) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "1":
		*v.p = true
	case "off", "false", "0":
		*v.p = false
	default:
		return fmt.Errorf("%q: want on or off", s)
	}
	return nil
}

func (v boolValue) String() string {
	if v.p == nil || !*v.p {
		return "off"
	}
	return "on"
}

// disabledValue is a boolValue for a field that says the opposite
// (turn.Config.DisableUDPGSO): on clears it.
type disabledValue struct{ p *bool }

func (v disabledValue) Set(s string) error {
	var on bool
	if err := (boolValue{&on}).Set(s); err != nil {
		return err
	}
	*v.p = !on
	return nil
}

func (v disabledValue) String() string {
	on := v.p != nil && !*v.p
	return boolValue{&on}.String()
}

// specialWord is how text spells Auto.
func specialWord(special int64) string {
	if special == Auto {
		return "auto"
	}
	return ""
}

// parseSpecial reports whether s is the field's word for special. A field
// that takes one also takes 0 for it: before the words, a 0 meant them,
// and a deployment's flags and variables keep working.
func parseSpecial(s string, special int64) bool {
	return special != 0 && (strings.EqualFold(s, specialWord(special)) || s == "0")
}

// intValue is a whole number, or, if special is Auto, that word.
type intValue struct {
	p       *int
	special int64
}

func (v intValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if parseSpecial(s, v.special) {
		*v.p = int(v.special)
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || (v.special != 0 && n < 0) {
		if v.special != 0 {
			return fmt.Errorf("%q: want %s or a whole number", s, specialWord(v.special))
		}
		return fmt.Errorf("%q: want a whole number", s)
	}
	*v.p = n
	return nil
}

func (v intValue) String() string {
	switch {
	case v.p == nil:
		return ""
	case v.special != 0 && specialWord(int64(*v.p)) != "":
		return specialWord(int64(*v.p))
	}
	return strconv.Itoa(*v.p)
}

// sizeValue is a byte count (as ByteSize reads and prints it), or, if
// special is Auto, that word.
type sizeValue[T ~int | ~int64] struct {
	p       *T
	special int64
}

func (v sizeValue[T]) Set(s string) error {
	s = strings.TrimSpace(s)
	if parseSpecial(s, v.special) {
		*v.p = T(v.special)
		return nil
	}
	b, err := parseByteSize(s)
	if err != nil {
		if v.special != 0 {
			return fmt.Errorf("%w, or %s", err, specialWord(v.special))
		}
		return err
	}
	if int64(T(b)) != int64(b) {
		return fmt.Errorf("%q: too large", s)
	}
	*v.p = T(b)
	return nil
}

func (v sizeValue[T]) String() string {
	switch {
	case v.p == nil:
		return ""
	case v.special != 0 && specialWord(int64(*v.p)) != "":
		return specialWord(int64(*v.p))
	}
	return ByteSize(*v.p).String()
}

// bandwidthValue is turn.Config.MaxBandwidth: bytes per second as
// sizeValue reads them, or off (turn.NoBandwidthLimit; 0 too, which meant
// it before the word).
type bandwidthValue struct{ p *int64 }

func (v bandwidthValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") || s == "0" {
		*v.p = turn.NoBandwidthLimit
		return nil
	}
	b, err := parseByteSize(s)
	if err != nil {
		return fmt.Errorf("%w, or off", err)
	}
	*v.p = int64(b)
	return nil
}

func (v bandwidthValue) String() string {
	switch {
	case v.p == nil:
		return ""
	case *v.p == turn.NoBandwidthLimit:
		return "off"
	}
	return ByteSize(*v.p).String()
}

type floatValue struct{ p *float64 }

func (v floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("%q: want a number", s)
	}
	*v.p = f
	return nil
}

func (v floatValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

// listValue is a comma-separated list; setting it replaces the list.
type listValue struct{ p *[]string }

func (v listValue) Set(s string) error { *v.p = splitList(s); return nil }
func (v listValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// prefixesValue is a comma-separated list of CIDRs.
type prefixesValue struct{ p *[]netip.Prefix }

func (v prefixesValue) Set(s string) error {
	var out []netip.Prefix
	for _, p := range splitList(s) {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return err
		}
		out = append(out, pfx)
	}
	*v.p = out
	return nil
}

func (v prefixesValue) String() string {
	if v.p == nil {
		return ""
	}
	s := make([]string, len(*v.p))
	for i, p := range *v.p {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// ipValue is an IP address, IPv4 in its 4-byte form.
type ipValue struct{ p *net.IP }

func (v ipValue) Set(s string) error {
	ip, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	*v.p = ip.Unmap().AsSlice()
	return nil
}

func (v ipValue) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return v.p.String()
}

// portRangeValue is turn.Config.RelayPorts: "lo-hi", or empty for none.
type portRangeValue struct{ p *turn.PortRange }

func (v portRangeValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		*v.p = turn.PortRange{}
		return nil
	}
	lo, hi, ok := strings.Cut(s, "-")
	a, errA := strconv.ParseUint(strings.TrimSpace(lo), 10, 16)
	b, errB := strconv.ParseUint(strings.TrimSpace(hi), 10, 16)
	if !ok || errA != nil || errB != nil || a == 0 || b == 0 {
		return fmt.Errorf("%q: want a range of ports like 50000-50999 (each 1024 to 65535)", s)
	}
	*v.p = turn.PortRange{Min: uint16(a), Max: uint16(b)} //nolint:gosec // ParseUint kept them to 16 bits
	return nil
}

func (v portRangeValue) String() string {
	if v.p == nil {
		return ""
	}
	return v.p.String()
}

// bytesValue is text kept as bytes (turn.Config.Secret); empty is nil.
type bytesValue struct{ p *[]byte }

func (v bytesValue) Set(s string) error {
	*v.p = nil
	if s != "" {
		*v.p = []byte(s)
	}
	return nil
}

func (v bytesValue) String() string {
	if v.p == nil {
		return ""
	}
	return string(*v.p)
}

type levelValue struct{ p *slog.Level }

func (v levelValue) Set(s string) error { return v.p.UnmarshalText([]byte(strings.TrimSpace(s))) }
func (v levelValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.ToLower(v.p.String())
}

// hostPort checks a listen address.
func hostPort(p *string) func() error {
	return func() error {
		if _, _, err := net.SplitHostPort(*p); err != nil {
			var ae *net.AddrError
			if errors.As(err, &ae) {
				return errors.New(ae.Err)
			}
			return err
		}
		return nil
	}
}

// authModeValue is -auth: off, optional or required.
type authModeValue struct{ p *auth.Mode }

func (v authModeValue) Set(s string) error {
	m, err := auth.ParseMode(s)
	if err != nil {
		return errors.New("must be off, optional or required")
	}
	*v.p = m
	return nil
}

func (v authModeValue) String() string {
	if v.p == nil {
		return ""
	}
	return string(*v.p)
}

// secretFileValue reads a secret from the file it is set to; it prints the
// path it read, never the secret.
type secretFileValue struct {
	p    *[]byte
	path *string
}

func (v secretFileValue) Set(s string) error {
	if s == "" {
		return nil
	}
	b, err := os.ReadFile(s) //nolint:gosec // the operator names the file
	if err != nil {
		return fmt.Errorf("read the secret file: %w", err)
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	*v.p = b
	if v.path != nil {
		*v.path = s
	}
	return nil
}

func (v secretFileValue) String() string {
	if v.path == nil {
		return ""
	}
	return *v.path
}
