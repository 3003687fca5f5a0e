package turn

import (
	"errors"
	"testing"
	"time"

	"github.com/pion/stun/v3"
)

func TestQuota(t *testing.T) {
	const limit = 3
	srv, fs := newServer(t, func(c *Config) { c.MaxAllocationsPerSession = limit })
	fs.join("q", "room")
	fs.join("other", "room")
	creds := srv.Credentials("q", time.Now())

	relays := make([]interface{ Close() error }, 0, limit)
	for range limit {
		relays = append(relays, allocate(t, newClient(t, srv, creds)))
	}

	over := newClient(t, srv, creds)
	_, err := over.Allocate()
	var te *stun.TurnError
	if !errors.As(err, &te) || te.ErrorCodeAttr.Code != stun.CodeAllocQuotaReached {
		t.Fatalf("allocation %d: err = %v, want 486 Allocation Quota Reached", limit+1, err)
	}

	// The quota is per session.
	allocated(t, srv, "other")

	// Releasing one (Refresh with lifetime 0) makes room for another.
	if err := relays[0].Close(); err != nil {
		t.Fatal(err)
	}
	if !eventually(3*time.Second, func() bool {
		relay, err := over.Allocate()
		if err != nil {
			return false
		}
		t.Cleanup(func() { _ = relay.Close() })

		return true
	}) {
		t.Fatal("no allocation possible after one was released")
	}
	if n := srv.Stats().Allocations; n != limit+1 {
		t.Fatalf("%d allocations, want %d", n, limit+1)
	}
}
