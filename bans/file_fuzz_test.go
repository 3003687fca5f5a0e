package bans

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// FuzzDecode: any bytes give bans or an error, never a panic, and what is
// decoded encodes and decodes to the same.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"bans":[{"id":"user:a","user":"a","created":"2026-11-28T00:00:00Z","expires":"2027-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"version":1,"bans":[{"id":"ip:2001:db8::/32","prefix":"2001:db8::/32","reason":"x","created":"2026-11-28T00:00:00Z","expires":"2027-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"version":1,"bans":null}`))
	f.Add([]byte(`{"version":1,"bans":[{}]}`))
	f.Add([]byte("\xdd\xff\xff\xff\xff"))
	now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		bans, err := decode(bytes.NewReader(data), 100, now)
		if err != nil {
			return
		}
		out, err := encode(bans)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decode(bytes.NewReader(out), 100, now)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
		if !slices.EqualFunc(bans, again, func(a, b Ban) bool {
			return a.ID == b.ID && a.Reason == b.Reason && a.Expires.Equal(b.Expires) && a.Created.Equal(b.Created)
		}) {
			t.Fatalf("round trip changed the bans: %+v, %+v", bans, again)
		}
	})
}

// FuzzDecodeBan: one ban as the cluster's bucket carries it: a ban or an
// error, never a panic; what decodes encodes to the same ban.
func FuzzDecodeBan(f *testing.F) {
	f.Add([]byte(`{"id":"user:a","user":"a","created":"2026-11-28T00:00:00Z","expires":"2027-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"id":"ip:10.0.0.0/8","prefix":"10.0.0.0/8","created":"2026-11-28T00:00:00Z","expires":"2027-01-01T00:00:00Z"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBan(data)
		if err != nil {
			return
		}
		out, err := EncodeBan(b)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeBan(out)
		if err != nil || again.ID != b.ID || !again.Expires.Equal(b.Expires) || again.Reason != b.Reason {
			t.Fatalf("round trip: %+v %v, from %+v", again, err, b)
		}
	})
}
