package cluster

import (
	"context"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostrelay/hostrelay/bans"
	"github.com/hostrelay/hostrelay/internal/testwait"
)

func banStoreFor(t *testing.T) *bans.Store {
	t.Helper()
	s, err := bans.Open(bans.Config{MaxBans: 100})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two nodes share one ban list through the bucket; a node's bans from
// before it joined are written to it; what another program writes there
// malformed is counted and ignored.
func TestSharedBans(t *testing.T) {
	url := startNATS(t)
	a, _ := join(t, fast(url, "a", "eu"))
	b, _ := join(t, fast(url, "b", "us"))
	sa, sb := banStoreFor(t), banStoreFor(t)
	// B banned a network while alone (its file): sharing brings it to A.
	if _, err := sb.Add(bans.Request{IP: "192.0.2.0/24", Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	var changedA atomic.Int32
	if err := a.ShareBans(t.Context(), sa, func() { changedA.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := b.ShareBans(t.Context(), sb, nil); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "B's ban to reach A", func() bool {
		_, ok := sa.IP(netip.MustParseAddr("192.0.2.9"))
		return ok
	})
	if _, err := sa.Add(bans.Request{User: "user-42", Duration: time.Hour, Reason: "spam"}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "A's ban to reach B", func() bool {
		bn, ok := sb.User("user-42")
		return ok && bn.Reason == "spam"
	})
	if err := sb.Lift("user:user-42"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "B's lift to reach A", func() bool { _, ok := sa.User("user-42"); return !ok })
	if changedA.Load() == 0 {
		t.Fatal("A was not told of B's ban")
	}

	// Garbage in the bucket: counted, ignored, nothing else changes.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(t.Context(), "hostrelay_bans")
	if err != nil {
		t.Fatal(err)
	}
	before := a.Stats().Malformed
	for key, value := range map[string]string{
		banKey("user:x"):  `{"id":"user:y","user":"y","created":"2026-11-28T00:00:00Z","expires":"2099-01-01T00:00:00Z"}`,
		banKey("user:z"):  `not json`,
		"x":               `{}`, // not base64: no id
		banKey("user:zz"): string(make([]byte, bans.MaxBanBytes)),
	} {
		if _, err := kv.Put(context.Background(), key, []byte(value)); err != nil {
			t.Fatalf("put %q: %v", key, err)
		}
	}
	testwait.For(t, "the malformed bans to be counted", func() bool { return a.Stats().Malformed >= before+4 })
	if got := len(sa.List()); got != 1 {
		t.Fatalf("A holds %d bans, want the network ban only", got)
	}
}
