package netkey

import (
	"net/netip"
	"testing"
)

func TestOneNetworkPerIPv4AddressAndIPv6Slash64(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"2001:db8::1", "2001:db8::ffff:2"},
		{"2001:db8:0:7:1:2:3:4", "2001:db8:0:7::"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
	} {
		if Of(netip.MustParseAddr(c.a)) != Of(netip.MustParseAddr(c.b)) {
			t.Errorf("%s and %s are one network but counted apart", c.a, c.b)
		}
	}
	for _, c := range []struct{ a, b string }{
		{"2001:db8::1", "2001:db8:0:1::1"},
		{"192.0.2.1", "192.0.2.2"},
		// Mapped IPv4 addresses must not fall into one IPv6 /64 (::/64).
		{"::ffff:192.0.2.1", "::ffff:192.0.2.2"},
	} {
		if Of(netip.MustParseAddr(c.a)) == Of(netip.MustParseAddr(c.b)) {
			t.Errorf("%s and %s are counted together", c.a, c.b)
		}
	}
	if got := Prefix(netip.MustParseAddr("192.0.2.1")); got != netip.MustParsePrefix("192.0.2.1/32") {
		t.Errorf("IPv4 prefix %v", got)
	}
	if got := Prefix(netip.MustParseAddr("2001:db8::1")); got != netip.MustParsePrefix("2001:db8::/64") {
		t.Errorf("IPv6 prefix %v", got)
	}
	if Prefix(netip.Addr{}).IsValid() {
		t.Error("the zero address has a valid prefix")
	}
}
