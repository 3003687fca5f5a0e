package cluster

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The cluster's decoders read bytes any NATS client could have written.
// Each must refuse what a node never writes, never panic, and keep what it
// accepts the same through another write and read.

func FuzzParseEntry(f *testing.F) {
	f.Add("ABC2345", []byte(`{"node":"a","public":true,"listing":{"code":"ABC2345","name":"n","host":"Ada","players":1,"maxPlayers":4,"region":"eu"}}`))
	f.Add("ABC2345", []byte(`{"node":"a"}`))
	f.Add("ABC2345", []byte("\xdd\xff\xff\xff\xff"))
	f.Add("abc", []byte(`{"node":"a","listing":null}`))
	f.Fuzz(func(t *testing.T, code string, b []byte) {
		e, err := parseEntry(code, b)
		if err != nil {
			return
		}
		again, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := parseEntry(code, again)
		if err != nil || !reflect.DeepEqual(e, e2) {
			t.Fatalf("accepted %q, rewritten %q: %+v vs %+v (%v)", b, again, e, e2, err)
		}
	})
}

func FuzzParseNode(f *testing.F) {
	f.Add("a", []byte(`{"id":"a","region":"eu","url":"http://a:8080","ws":"ws://a:8080/ws","stun":["stun:a:3478"],"rooms":2}`))
	f.Add("a", []byte(`{"id":"b"}`))
	f.Add("a", []byte(`{"id":"a","url":"ws://x","ws":"http://x"}`))
	f.Fuzz(func(t *testing.T, id string, b []byte) {
		n, err := parseNode(id, b)
		if err != nil {
			return
		}
		again, _ := json.Marshal(n)
		n2, err := parseNode(id, again)
		if err != nil || !reflect.DeepEqual(n, n2) {
			t.Fatalf("accepted %q, rewritten %q: %v", b, again, err)
		}
	})
}

func FuzzParseJoinFail(f *testing.F) {
	f.Add([]byte("a 203.0.113.7"))
	f.Add([]byte("a 2001:db8::1"))
	f.Add([]byte("a"))
	f.Add([]byte(" 1.2.3.4"))
	f.Fuzz(func(t *testing.T, b []byte) {
		from, a, err := parseJoinFail(b)
		if err != nil {
			return
		}
		if ValidateNodeID(from) != nil || !a.IsValid() {
			t.Fatalf("accepted %q as %q %v", b, from, a)
		}
	})
}
