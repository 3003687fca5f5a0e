package server

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

// shareLinks opens share links on one node from one loopback address,
// without following redirects.
type shareLinks struct {
	t    *testing.T
	base string
	http *http.Client
}

func newShareLinks(t *testing.T, s *Server, from string) *shareLinks {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 400}
	t.Cleanup(tr.CloseIdleConnections)
	return &shareLinks{t: t, base: "http://" + s.Addrs().HTTP, http: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// open GETs /r/code and returns the status (307 sent on, else the page:
// 200, or 503 in a binary built without the web app) and the redirect's
// target; status 0 when the request itself failed (reported, not fatal:
// it runs on many goroutines).
func (l *shareLinks) open(code string) (int, string) {
	ctx, cancel := context.WithTimeout(l.t.Context(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.base+"/r/"+code, nil)
	if err != nil {
		l.t.Error(err)
		return 0, ""
	}
	resp, err := l.http.Do(req)
	if err != nil {
		l.t.Error(err)
		return 0, ""
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// guessCode is the nth code of a run no room holds (rooms draw theirs at
// random: a clash is one in 30^5).
func guessCode(run, n int) string {
	a := protocol.RoomCodeAlphabet
	return "ZZ" + string([]byte{a[run%len(a)], a[n/(len(a)*len(a))%len(a)], a[n/len(a)%len(a)], a[n%len(a)], 'Z'})
}

// TestShareLinkLookupsWithinBudget: a share link looks its code up through
// the lobby's own FindRoom, which takes the failed-join token before the
// lookup. So a wave of concurrent guesses from one address reaches the
// cluster directory at most as many times as its budget has tokens (red
// team, issue 24 finding 5: 399 at once with one token left made 1-14
// lookups, up to 110 under load); a room that exists gives its token back,
// so share links to it keep working, even many at once.
func TestShareLinkLookupsWithinBudget(t *testing.T) {
	natsURL := startNATS(t)
	a := startNode(t, natsURL, "a", "eu")
	b := startNode(t, natsURL, "b", "us")
	testwait.For(t, "A sees B", func() bool { return len(a.cluster.Nodes()) == 2 })
	lookups := func() uint64 { return a.cluster.Stats().Lookups }
	probe := dialLobby(t, a.Addrs().HTTP, "Host").create("probe", 2, "").Room.Code
	const burst, wave = 10, 399 // signaling's JoinFailureBurst; the red team's wave

	// left is the tokens left when the wave comes: past the limit, the
	// finding's last token, and several.
	for run, left := range []int{0, 1, 4} {
		from := netip.AddrFrom4([4]byte{127, 0, 1, byte(10 + run)})
		links := newShareLinks(t, a, from.String())
		start := time.Now()
		for i := range burst - left {
			if status, to := links.open(guessCode(run, 1000+i)); status == 0 || status == http.StatusTemporaryRedirect {
				t.Fatalf("left %d: guess %d: %d %q, want the page", left, i, status, to)
			}
		}
		before := lookups()
		var wg sync.WaitGroup
		var redirected atomic.Int32
		for i := range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if status, _ := links.open(guessCode(run, i)); status == 0 || status == http.StatusTemporaryRedirect {
					redirected.Add(1)
				}
			}()
		}
		wg.Wait()
		// A token refills every 6 s; a slow machine may have earned some.
		refilled := int(time.Since(start) / (6 * time.Second))
		got := int(lookups() - before)
		t.Logf("%d tokens left: %d concurrent guesses made %d directory lookups (%d refilled)", left, wave, got, refilled)
		if got > left+refilled {
			t.Errorf("%d tokens left: %d concurrent guesses made %d directory lookups, want at most %d", left, wave, got, left+refilled)
		}
		if redirected.Load() != 0 {
			t.Errorf("%d tokens left: %d guesses were not answered with the page", left, redirected.Load())
		}
		if budgetLeft(t, a, from, probe) && refilled == 0 {
			t.Errorf("%d tokens left: the budget has a token after the wave", left)
		}
	}

	// A room of B, linked on A from an address with one token left: every
	// link, one after another or many at once, is sent to B and gives its
	// token back.
	room := dialLobby(t, b.Addrs().HTTP, "Host").create("far", 4, "")
	code := room.Room.Code
	from := netip.MustParseAddr("127.0.1.20")
	links := newShareLinks(t, a, from.String())
	for i := range burst - 1 {
		links.open(guessCode(9, i))
	}
	want := "http://" + b.Addrs().HTTP + "/r/" + code
	testwait.For(t, "A locates B's room", func() bool {
		_, to := links.open(code)
		return to == want
	})
	var wg sync.WaitGroup
	var missed atomic.Int32
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, to := links.open(code); status != http.StatusTemporaryRedirect || to != want {
				missed.Add(1)
			}
		}()
	}
	wg.Wait()
	if missed.Load() != 0 {
		t.Errorf("%d of 50 concurrent links to B's room with one token left were not sent to B", missed.Load())
	}
	if !budgetLeft(t, a, from, probe) {
		t.Error("links to a room that exists spent the last token")
	}
}
