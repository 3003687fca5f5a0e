package turn

import (
	"net"
	"strings"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v4"
)

func TestCredentialsRoundTrip(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("sess-1", "room")
	now := time.Now()
	c := srv.Credentials("sess-1", now)

	exp, session, err := parseUsername(c.Username)
	if err != nil {
		t.Fatalf("parseUsername(%q): %v", c.Username, err)
	}
	if session != "sess-1" || exp != now.Add(DefaultCredentialTTL).Unix() {
		t.Fatalf("username %q: got exp %d session %q", c.Username, exp, session)
	}
	if !c.Expires.Equal(time.Unix(exp, 0)) || c.TTL != DefaultCredentialTTL {
		t.Fatalf("Expires %v TTL %v", c.Expires, c.TTL)
	}

	// Same password and key as pion's own TURN REST helpers.
	user, pass, err := pionturn.GenerateLongTermTURNRESTCredentials(string(testSecret), "sess-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := restPassword(testSecret, user); got != pass {
		t.Fatalf("password %q, pion %q", got, pass)
	}
	src := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
	pionKey, ok := pionturn.LongTermTURNRESTAuthHandler(string(testSecret), nil)(c.Username, DefaultRealm, src)
	if !ok {
		t.Fatal("pion refused our username")
	}
	ourKey, ok := srv.authenticate(c.Username, DefaultRealm, src)
	if !ok || string(ourKey) != string(pionKey) {
		t.Fatalf("auth key differs from pion's (ok=%v)", ok)
	}
}

func TestParseUsername(t *testing.T) {
	good := map[string]struct {
		exp     int64
		session string
	}{
		"1700000000:abc": {1700000000, "abc"},
		"0:x":            {0, "x"},
		"5:a:b":          {5, "a:b"},
		"12:" + strings.Repeat("s", maxSessionIDLen): {12, strings.Repeat("s", maxSessionIDLen)},
	}
	for in, want := range good {
		exp, session, err := parseUsername(in)
		if err != nil || exp != want.exp || session != want.session {
			t.Errorf("parseUsername(%q) = %d, %q, %v", in, exp, session, err)
		}
	}
	for _, in := range []string{
		"", ":", "abc", "1700000000", "1700000000:", ":abc", "+5:abc", "-5:abc", "05:abc",
		"1e9:abc", " 5:abc", "5:a b", "5:a\x00", "5:é", "99999999999999999999:abc",
		"12:" + strings.Repeat("s", maxSessionIDLen+1),
	} {
		if _, _, err := parseUsername(in); err == nil {
			t.Errorf("parseUsername(%q) accepted", in)
		}
	}
}

func FuzzParseUsername(f *testing.F) {
	for _, s := range []string{
		"1700000000:abc", "", ":", "0:x", "01:x", "+1:x", "-1:x", "1:", "1:a:b",
		"9223372036854775807:x", "9223372036854775808:x", "99999999999999999999:x",
		"1:a b", "1:\x00", "1:\xff", "१२:x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		exp, session, err := parseUsername(in)
		if err != nil {
			return
		}
		if exp < 0 || !validSessionID(session) {
			t.Fatalf("parseUsername(%q) = %d, %q", in, exp, session)
		}
		// One credential, one spelling.
		if back := formatUsername(exp, session); back != in {
			t.Fatalf("parseUsername(%q) round-trips to %q", in, back)
		}
	})
}
