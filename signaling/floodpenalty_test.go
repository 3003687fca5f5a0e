package signaling

import (
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The hold doubles with each flood close within floodMemory, up to
// maxFloodHold; closes while held are one hold; an IPv6 /64 is one network.
func TestFloodHoldsDoubleUpToTheCap(t *testing.T) {
	f := newFloodHolds()
	ip := netip.MustParseAddr("2001:db8::1")
	now := time.Unix(1_000_000, 0)
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60}
	for i, w := range want {
		if got := f.closed(ip, now); got != w*time.Second {
			t.Fatalf("close %d: held %v, want %v", i+1, got, w*time.Second)
		}
		if got := f.held(netip.MustParseAddr("2001:db8::2"), now); got != w*time.Second {
			t.Fatalf("close %d: the /64's other address held %v, want %v", i+1, got, w*time.Second)
		}
		if f.held(netip.MustParseAddr("2001:db8:0:1::1"), now) != 0 {
			t.Fatal("another /64 held")
		}
		// A close while held (a connection opened before) is the same hold.
		if got := f.closed(ip, now.Add(time.Millisecond)); got != w*time.Second {
			t.Fatalf("close %d again while held: %v", i+1, got)
		}
		now = now.Add(w*time.Second + time.Millisecond)
		if f.held(ip, now) != 0 {
			t.Fatalf("close %d: still held after its hold", i+1)
		}
	}
	// Quiet for longer than floodMemory: back to the first hold.
	now = now.Add(floodMemory + time.Second)
	if got := f.closed(ip, now); got != firstFloodHold {
		t.Fatalf("after %v of quiet: held %v, want %v", floodMemory, got, firstFloodHold)
	}
}

// A network whose connection was closed for a flood gets 429 with
// Retry-After on its next upgrades until its hold ends; other networks do
// not. Before the hold, a flood reconnected at once, 35 times a second.
func TestFloodClosedNetworkIsHeldBack(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	hub, url := testHub(t, func(c *Config) { c.Now = clock })
	c := helloed(t, url)
	stop := make(chan struct{})
	defer close(stop)
	flood(c, clientFrameOp(0x8a, nil), stop)
	if status, _ := closedWith(t, c, 5*time.Second); status != 0 && status != 1008 {
		t.Fatalf("closed with %d, want 1008", status)
	}
	dialFrom := func(ip string) (*http.Response, error) {
		conn, resp, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{HTTPHeader: http.Header{"X-Test-IP": {ip}}})
		if err == nil {
			conn.CloseNow()
		}
		return resp, err
	}
	// The flood's close and the hold may come a moment after the close frame.
	deadline := time.Now().Add(5 * time.Second)
	for hub.floods.held(netip.MustParseAddr("127.0.0.1"), clock()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the network was not held after the flood")
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := dialFrom("127.0.0.1")
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("held network's upgrade: %v, %v; want 429 with Retry-After 1", resp, err)
	}
	if _, err := dialFrom("127.0.0.2"); err != nil {
		t.Fatalf("another network refused: %v", err)
	}
	if n := hub.Metrics().RateLimited["flood_hold"]; n != 1 {
		t.Fatalf("flood_hold counted %d, want 1", n)
	}
	advance(firstFloodHold)
	if _, err := dialFrom("127.0.0.1"); err != nil {
		t.Fatalf("after the hold: %v", err)
	}
}

// A network is refused at accept only once an upgrade in the same hold was
// told why (tell); a new hold starts untold, so each hold's first upgrade
// hears 429 with Retry-After.
func TestRefuseAtAcceptOnlyOnceTold(t *testing.T) {
	f := newFloodHolds()
	ip := netip.MustParseAddr("192.0.2.7")
	now := time.Unix(1_000_000, 0)
	if f.refuseAtAccept(ip, now) || f.tell(ip, now) != 0 {
		t.Fatal("a network never closed for a flood is held")
	}
	f.closed(ip, now)
	if f.refuseAtAccept(ip, now) {
		t.Fatal("refused at accept before any upgrade was told")
	}
	if got := f.tell(ip, now.Add(100*time.Millisecond)); got != 900*time.Millisecond {
		t.Fatalf("told to wait %v, want 900ms", got)
	}
	if !f.refuseAtAccept(ip, now.Add(200*time.Millisecond)) {
		t.Fatal("not refused at accept once told")
	}
	if f.refuseAtAccept(netip.MustParseAddr("192.0.2.8"), now) {
		t.Fatal("another network refused")
	}
	now = now.Add(firstFloodHold)
	if f.refuseAtAccept(ip, now) {
		t.Fatal("refused at accept after the hold")
	}
	// The next flood close starts a longer hold, untold again.
	f.closed(ip, now)
	if f.refuseAtAccept(ip, now) {
		t.Fatal("a new hold refused at accept before it was told")
	}
	f.tell(ip, now)
	// A close while held (a connection opened before) keeps the hold told.
	f.closed(ip, now.Add(time.Millisecond))
	if !f.refuseAtAccept(ip, now.Add(time.Millisecond)) {
		t.Fatal("a close within the hold forgot that the network was told")
	}
}
