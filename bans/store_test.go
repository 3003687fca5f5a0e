package bans

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clock is simulated time for a store.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newClock() *clock { return &clock{now: time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)} }

func open(t *testing.T, file string, c *clock, max int) *Store {
	t.Helper()
	s, err := Open(Config{File: file, MaxBans: max, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUserAndNetworkBans(t *testing.T) {
	c := newClock()
	s := open(t, "", c, DefaultMaxBans)
	for _, q := range []Request{
		{User: "user-42", Duration: time.Hour, Reason: "cheating"},
		{IP: "203.0.113.0/24", Duration: time.Hour},
		{IP: "2001:db8:7::/48", Duration: time.Hour},
		{IP: "198.51.100.7", Duration: time.Hour},
	} {
		if _, err := s.Add(q); err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
	}
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"203.0.113.200", true},
		{"::ffff:203.0.113.9", true}, // an IPv4 client on a dual-stack socket
		{"203.0.114.1", false},
		{"2001:db8:7:ffff::1", true},
		{"2001:db8:8::1", false},
		{"198.51.100.7", true},
		{"198.51.100.8", false},
	} {
		if _, got := s.IP(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("IP(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	b, ok := s.User("user-42")
	if !ok || b.ID != "user:user-42" {
		t.Fatalf("User: %+v %v", b, ok)
	}
	if got := b.Message(c.now.Add(15 * time.Minute)); got != "your user is banned from this server for 45 min more: cheating" {
		t.Fatalf("message %q", got)
	}
	if _, ok := s.User("user-43"); ok {
		t.Fatal("another user is banned")
	}
	if st := s.Stats(); st.Users != 1 || st.IPs != 3 || st.RefusedUser != 1 || st.RefusedIP != 4 {
		t.Fatalf("stats %+v", st)
	}
	if err := s.Lift("ip:203.0.113.0/24"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.IP(netip.MustParseAddr("203.0.113.200")); ok {
		t.Fatal("lifted ban still in force")
	}
	if err := s.Lift("ip:203.0.113.0/24"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second lift: %v", err)
	}
}

func TestBansExpire(t *testing.T) {
	c := newClock()
	file := filepath.Join(t.TempDir(), "bans.json")
	s := open(t, file, c, DefaultMaxBans)
	if _, err := s.Add(Request{User: "u", Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	c.now = c.now.Add(time.Hour - time.Second)
	if b, ok := s.User("u"); !ok || b.Message(c.now) != "your user is banned from this server for 1 s more" {
		t.Fatalf("a second before expiry: %v %q", ok, b.Message(c.now))
	}
	c.now = c.now.Add(time.Second)
	if _, ok := s.User("u"); ok {
		t.Fatal("banned at its expiry")
	}
	if len(s.List()) != 0 || s.Stats().Users != 0 {
		t.Fatal("an expired ban is listed")
	}
	// The next write drops it from the file; a restart does not bring it back.
	if _, err := s.Add(Request{IP: "192.0.2.1", Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	if strings.Contains(string(data), `"user:u"`) {
		t.Fatalf("expired ban still in the file:\n%s", data)
	}
}

func TestBansSurviveReopen(t *testing.T) {
	c := newClock()
	dir := t.TempDir()
	file := filepath.Join(dir, "bans.json")
	s := open(t, file, c, DefaultMaxBans)
	if _, err := s.Add(Request{User: "user-42", Duration: 24 * time.Hour, Reason: "spam"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(Request{IP: "2001:db8::/32", Duration: 2 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(Request{IP: "192.0.2.0/24", Duration: time.Minute}); err != nil {
		t.Fatal(err)
	}
	c.now = c.now.Add(90 * time.Second) // the third expired while the server was down
	again := open(t, file, c, DefaultMaxBans)
	list := again.List()
	if len(list) != 2 || list[0].Reason != "" && list[1].Reason != "spam" {
		t.Fatalf("after reopen: %+v", list)
	}
	if _, ok := again.IP(netip.MustParseAddr("2001:db8:1::1")); !ok {
		t.Fatal("network ban lost")
	}
	if _, ok := again.IP(netip.MustParseAddr("192.0.2.1")); ok {
		t.Fatal("expired ban came back")
	}
	// Atomic writes leave no temp files behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files left: %v", entries)
	}
}

func TestCorruptFileRefusesToStart(t *testing.T) {
	c := newClock()
	valid := `{"version":1,"bans":[{"id":"user:a","user":"a","created":"2026-11-28T00:00:00Z","expires":"2027-01-01T00:00:00Z"}]}`
	for name, body := range map[string]string{
		"not json":      "{bans",
		"empty":         "",
		"two documents": valid + valid,
		"unknown field": `{"version":1,"bans":[],"extra":1}`,
		"version":       `{"version":2,"bans":[]}`,
		"bad id":        strings.Replace(valid, `"id":"user:a"`, `"id":"user:b"`, 1),
		"both kinds":    strings.Replace(valid, `"user":"a"`, `"user":"a","prefix":"192.0.2.0/24"`, 1),
		"unmasked":      `{"version":1,"bans":[{"id":"ip:192.0.2.1/24","prefix":"192.0.2.1/24","created":"2026-11-28T00:00:00Z","expires":"2027-01-01T00:00:00Z"}]}`,
		"twice":         strings.Replace(valid, "]}", ","+valid[len(`{"version":1,"bans":[`):len(valid)-2]+"]}", 1),
		"oversized":     `{"version":1,"bans":[],"pad":"` + strings.Repeat("x", MaxFileBytes) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bans.json")
			if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(Config{File: file, MaxBans: DefaultMaxBans, Now: c.Now})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), file) {
				t.Fatalf("err %v, want ErrCorrupt naming the file", err)
			}
		})
	}
	// The valid one opens.
	file := filepath.Join(t.TempDir(), "bans.json")
	_ = os.WriteFile(file, []byte(valid), 0o600)
	if s := open(t, file, c, DefaultMaxBans); len(s.List()) != 1 {
		t.Fatal("valid file not loaded")
	}
	// More bans than -bans-max: at the limit it opens, past it it does not.
	if _, err := Open(Config{File: file, MaxBans: 1, Now: c.Now}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	two := strings.Replace(valid, "]}", `,{"id":"user:b","user":"b","created":"2026-11-28T00:00:00Z","expires":"2027-01-01T00:00:00Z"}]}`, 1)
	_ = os.WriteFile(file, []byte(two), 0o600)
	if _, err := Open(Config{File: file, MaxBans: 1, Now: c.Now}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("past the limit: %v", err)
	}
}

func TestBanLimits(t *testing.T) {
	c := newClock()
	s := open(t, "", c, 3)
	for i, q := range []Request{{User: "a", Duration: time.Hour}, {User: "b", Duration: time.Hour}, {IP: "192.0.2.0/24", Duration: time.Hour}} {
		if _, err := s.Add(q); err != nil {
			t.Fatalf("ban %d, at the limit: %v", i, err)
		}
	}
	if _, err := s.Add(Request{User: "c", Duration: time.Hour}); !errors.Is(err, ErrFull) {
		t.Fatalf("past MaxBans: %v", err)
	}
	// Replacing a ban held is not a new one.
	if _, err := s.Add(Request{User: "a", Duration: 2 * time.Hour, Reason: "longer"}); err != nil {
		t.Fatalf("replace at the limit: %v", err)
	}
	if b, _ := s.User("a"); b.Reason != "longer" {
		t.Fatalf("not replaced: %+v", b)
	}
	// An expired ban frees its place.
	c.now = c.now.Add(time.Hour)
	if _, err := s.Add(Request{User: "c", Duration: time.Hour}); err != nil {
		t.Fatalf("after expiry: %v", err)
	}

	free := open(t, "", c, DefaultMaxBans)
	for _, tc := range []struct {
		q  Request
		ok bool
	}{
		{Request{User: strings.Repeat("u", MaxUserID), Duration: time.Hour}, true},
		{Request{User: strings.Repeat("u", MaxUserID+1), Duration: time.Hour}, false},
		{Request{User: "tab\tin", Duration: time.Hour}, false},
		{Request{User: "d", Duration: MinDuration}, true},
		{Request{User: "d", Duration: MinDuration - time.Second}, false},
		{Request{User: "d", Duration: MaxDuration}, true},
		{Request{User: "d", Duration: MaxDuration + time.Second}, false},
		{Request{User: "r", Duration: time.Hour, Reason: strings.Repeat("é", MaxReason/2)}, true},
		{Request{User: "r", Duration: time.Hour, Reason: strings.Repeat("é", MaxReason/2) + "x"}, false},
		{Request{User: "r", Duration: time.Hour, Reason: "two\nlines"}, false},
		{Request{IP: "10.0.0.0/8", Duration: time.Hour}, true},
		{Request{IP: "10.0.0.0/7", Duration: time.Hour}, false},
		{Request{IP: "2001::/16", Duration: time.Hour}, true},
		{Request{IP: "2000::/15", Duration: time.Hour}, false},
		{Request{IP: "::ffff:192.0.2.0/120", Duration: time.Hour}, false},
		{Request{IP: "192.0.2.300", Duration: time.Hour}, false},
		{Request{IP: "example.com", Duration: time.Hour}, false},
		{Request{Duration: time.Hour}, false},
		{Request{User: "both", IP: "192.0.2.1", Duration: time.Hour}, false},
	} {
		_, err := free.Add(tc.q)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("%+.40v: %v, want ok %v", tc.q, err, tc.ok)
		}
	}
}

func TestRemaining(t *testing.T) {
	for d, want := range map[time.Duration]string{
		300 * time.Millisecond:            "1 s",
		45 * time.Second:                  "45 s",
		time.Minute:                       "1 min",
		61 * time.Second:                  "2 min",
		2*time.Hour + 5*time.Minute:       "2 h 5 min",
		3 * time.Hour:                     "3 h",
		24 * time.Hour:                    "1 day",
		3*24*time.Hour + 4*time.Hour:      "3 days 4 h",
		3*24*time.Hour + 4*time.Hour + 30: "3 days 4 h",
	} {
		if got := Remaining(d); got != want {
			t.Errorf("Remaining(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestWriteFailureKeepsTheList(t *testing.T) {
	c := newClock()
	dir := t.TempDir()
	file := filepath.Join(dir, "bans.json")
	s := open(t, file, c, DefaultMaxBans)
	if _, err := s.Add(Request{User: "a", Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	// The directory gone (a volume unmounted): no temp file can be made
	// there, even by root.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(Request{User: "b", Duration: time.Hour}); err == nil {
		t.Fatal("add to an unwritable directory succeeded")
	}
	if _, ok := s.User("b"); ok {
		t.Fatal("a ban that was not saved is in force")
	}
	if err := s.Lift("user:a"); err == nil {
		t.Fatal("lift in an unwritable directory succeeded")
	}
	if _, ok := s.User("a"); !ok {
		t.Fatal("a lift that was not saved took effect")
	}
}

func TestDecodeBanBound(t *testing.T) {
	valid := `{"id":"user:a","user":"a","created":"2026-11-28T00:00:00Z","expires":"2027-01-01T00:00:00Z"}`
	at := valid + strings.Repeat(" ", MaxBanBytes-len(valid))
	if _, err := DecodeBan([]byte(at)); err != nil {
		t.Fatalf("a ban of %d bytes: %v", len(at), err)
	}
	if _, err := DecodeBan([]byte(at + " ")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a ban of %d bytes: %v, want ErrCorrupt", len(at)+1, err)
	}
}
