package bans

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on one ban.
const (
	MaxUserID    = 128 // bytes, as auth's sub
	MaxReason    = 200 // bytes
	MinDuration  = time.Minute
	MaxDuration  = 10 * 365 * 24 * time.Hour
	MinIPv4Bits  = 8  // a shorter IPv4 prefix would ban a continent
	MinIPv6Bits  = 16 // likewise for IPv6
	userKeyStart = "user:"
	ipKeyStart   = "ip:"
)

// Ban is one banned user id or network until Expires. Exactly one of User
// and Prefix is set.
type Ban struct {
	// ID names the ban: "user:<id>" or "ip:<prefix>". Adding a ban with an
	// ID already listed replaces it.
	ID      string       `json:"id"`
	User    string       `json:"user,omitempty"`
	Prefix  netip.Prefix `json:"prefix,omitzero"`
	Reason  string       `json:"reason,omitempty"`
	Created time.Time    `json:"created"`
	Expires time.Time    `json:"expires"`
}

// Request is what an operator asks to ban: a user id or an IP address or
// prefix (Target), for Duration, with a Reason shown to the banned.
type Request struct {
	User     string
	IP       string // an address (a /32 or /128) or a CIDR prefix
	Duration time.Duration
	Reason   string
}

// newBan validates q and makes its ban as of now.
func newBan(q Request, now time.Time) (Ban, error) {
	b := Ban{Reason: strings.TrimSpace(q.Reason), Created: now.UTC(), Expires: now.Add(q.Duration).UTC()}
	switch {
	case (q.User == "") == (q.IP == ""):
		return Ban{}, fmt.Errorf("%w: give a user id or an IP address or prefix, one of them", ErrInvalid)
	case q.Duration < MinDuration || q.Duration > MaxDuration:
		return Ban{}, fmt.Errorf("%w: the duration must be from %v to %d days", ErrInvalid, MinDuration, MaxDuration/(24*time.Hour))
	}
	if q.User != "" {
		b.User = q.User
	} else {
		p, err := ParsePrefix(q.IP)
		if err != nil {
			return Ban{}, err
		}
		b.Prefix = p
	}
	b.ID = b.key()
	return b, b.validate()
}

// ParsePrefix reads an IP address ("203.0.113.7", "2001:db8::1": that
// address alone) or a CIDR prefix ("203.0.113.0/24"), masked.
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, fmt.Errorf("%w: %q is not an IP address or CIDR prefix", ErrInvalid, s)
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%w: %q is not an IP address or CIDR prefix", ErrInvalid, s)
		}
		a = a.Unmap()
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is4In6() || p.Addr().Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%w: write %q as a plain IPv4 or IPv6 prefix", ErrInvalid, s)
	}
	if min := minBits(p.Addr()); p.Bits() < min {
		return netip.Prefix{}, fmt.Errorf("%w: %s is too wide: at least /%d", ErrInvalid, p, min)
	}
	return p.Masked(), nil
}

func minBits(a netip.Addr) int {
	if a.Is4() {
		return MinIPv4Bits
	}
	return MinIPv6Bits
}

func (b Ban) key() string {
	if b.User != "" {
		return userKeyStart + b.User
	}
	return ipKeyStart + b.Prefix.String()
}

// validate checks a ban as built or as read from the file.
func (b Ban) validate() error {
	switch {
	case (b.User == "") == !b.Prefix.IsValid():
		return fmt.Errorf("%w: a ban names a user id or a prefix, one of them", ErrInvalid)
	case b.User != "" && (len(b.User) > MaxUserID || !printable(b.User)):
		return fmt.Errorf("%w: a user id is 1 to %d bytes of printable text", ErrInvalid, MaxUserID)
	case b.Prefix.IsValid() && (b.Prefix != b.Prefix.Masked() || b.Prefix.Bits() < minBits(b.Prefix.Addr()) || b.Prefix.Addr().Is4In6()):
		return fmt.Errorf("%w: prefix %s is not masked, or too wide", ErrInvalid, b.Prefix)
	case len(b.Reason) > MaxReason || !printable(b.Reason+"x"):
		return fmt.Errorf("%w: the reason is at most %d bytes of one line of text", ErrInvalid, MaxReason)
	case b.ID != b.key():
		return fmt.Errorf("%w: id %q does not name its ban", ErrInvalid, b.ID)
	case !b.Expires.After(b.Created):
		return fmt.Errorf("%w: it expires before it starts", ErrInvalid)
	}
	return nil
}

func printable(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Message is what the banned are told: what is banned, for how long
// from now and, if given, why.
func (b Ban) Message(now time.Time) string {
	who := "your user"
	if b.Prefix.IsValid() {
		who = "your network"
	}
	msg := who + " is banned from this server for " + Remaining(b.Expires.Sub(now)) + " more"
	if b.Reason != "" {
		msg += ": " + b.Reason
	}
	return msg
}

// Remaining says d for a person, rounded up to its largest two units:
// "45 s", "12 min", "2 h 5 min", "3 days 4 h".
func Remaining(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d s", max(1, int((d+time.Second-1)/time.Second)))
	}
	mins := int((d + time.Minute - 1) / time.Minute)
	days, hours, mins := mins/(24*60), mins/60%24, mins%60
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%d %s %d h", days, plural(days, "day"), hours)
	case days > 0:
		return fmt.Sprintf("%d %s", days, plural(days, "day"))
	case hours > 0 && mins > 0:
		return fmt.Sprintf("%d h %d min", hours, mins)
	case hours > 0:
		return fmt.Sprintf("%d h", hours)
	}
	return fmt.Sprintf("%d min", mins)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
