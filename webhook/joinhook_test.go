package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/signaling"
)

func newHook(t *testing.T, url string, failOpen bool) *JoinHook {
	t.Helper()
	h, err := NewJoinHook(JoinHookConfig{URL: url, Secret: testSecret, Timeout: 200 * time.Millisecond, FailOpen: failOpen,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// hookServer answers every request with handle, after checking its
// signature and body.
func hookServer(t *testing.T, handle func(w http.ResponseWriter, j JoinHookRequest)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := Verify(testSecret, r.Header.Get(SignatureHeader), body, time.Now()); err != nil {
			t.Errorf("join hook request: %v", err)
		}
		var j JoinHookRequest
		if err := json.Unmarshal(body, &j); err != nil {
			t.Errorf("join hook body %q: %v", body, err)
		}
		handle(w, j)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var join = signaling.JoinRequest{Action: "join", Room: "ABCD", Session: "s1", Name: "Ada"} //nolint:gochecknoglobals // a constant

func TestJoinHookAllowsAndRefuses(t *testing.T) {
	url := hookServer(t, func(w http.ResponseWriter, j JoinHookRequest) {
		if j.Name == "Ada" && j.Room == "ABCD" && j.Action == "join" && j.Session == "s1" {
			_, _ = io.WriteString(w, `{"allow":true}`)
			return
		}
		_, _ = io.WriteString(w, `{"allow":false,"message":"Bob is banned"}`)
	})
	h := newHook(t, url, false)
	if err := h.CheckJoin(context.Background(), join); err != nil {
		t.Errorf("allowed: %v", err)
	}
	bob := join
	bob.Name = "Bob"
	var refused *signaling.JoinRefused
	if err := h.CheckJoin(context.Background(), bob); !errors.As(err, &refused) || refused.Message != "Bob is banned" {
		t.Errorf("refused: %v", err)
	}
	if st := h.Stats(); st != (JoinHookStats{Allowed: 1, Refused: 1}) {
		t.Errorf("stats %+v", st)
	}
}

// A hook that is down, slow (past the timeout), answers an error status
// or garbage has failed: fail-open lets the join through, fail-closed
// refuses it (an error that is not a refusal: the lobby's unavailable).
func TestJoinHookFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	release := make(chan struct{})
	defer close(release)
	slowURL := hookServer(t, func(w http.ResponseWriter, _ JoinHookRequest) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		_, _ = io.WriteString(w, `{"allow":true}`)
	})
	statusURL := hookServer(t, func(w http.ResponseWriter, _ JoinHookRequest) {
		http.Error(w, `{"allow":true}`, http.StatusInternalServerError)
	})
	garbageURL := hookServer(t, func(w http.ResponseWriter, _ JoinHookRequest) { _, _ = io.WriteString(w, "<html>") })
	hugeURL := hookServer(t, func(w http.ResponseWriter, _ JoinHookRequest) {
		_, _ = io.WriteString(w, `{"allow":true,"message":"`+strings.Repeat("x", maxHookAnswer)+`"}`)
	})
	for _, c := range []struct{ name, url string }{
		{"down", downURL}, {"slow", slowURL}, {"status 500", statusURL}, {"not JSON", garbageURL},
		{"answer past 4KiB", hugeURL},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, open := range []bool{true, false} {
				h := newHook(t, c.url, open)
				start := time.Now()
				err := h.CheckJoin(context.Background(), join)
				if d := time.Since(start); d > time.Second {
					t.Errorf("took %v with a 200ms timeout", d)
				}
				var refused *signaling.JoinRefused
				switch {
				case open && err != nil:
					t.Errorf("fail-open: %v", err)
				case !open && (err == nil || errors.As(err, &refused)):
					t.Errorf("fail-closed: %v, want a failure", err)
				}
				want := JoinHookStats{FailedOpen: 1}
				if !open {
					want = JoinHookStats{FailedClosed: 1}
				}
				if st := h.Stats(); st != want {
					t.Errorf("stats %+v, want %+v", st, want)
				}
			}
		})
	}
}

// The timeout at its limit: an answer just inside it counts, one just
// past it does not.
func TestJoinHookTimeoutAtAndPastLimit(t *testing.T) {
	delay := make(chan time.Duration, 1)
	url := hookServer(t, func(w http.ResponseWriter, _ JoinHookRequest) {
		time.Sleep(<-delay)
		_, _ = io.WriteString(w, `{"allow":false,"message":"late or not"}`)
	})
	h := newHook(t, url, true)
	delay <- 50 * time.Millisecond // well inside 200ms
	if err := h.CheckJoin(context.Background(), join); err == nil {
		t.Error("an answer inside the timeout was ignored")
	}
	delay <- 300 * time.Millisecond
	if err := h.CheckJoin(context.Background(), join); err != nil {
		t.Errorf("an answer past the timeout counted: %v", err)
	}
}

func TestSignAndVerify(t *testing.T) {
	body := []byte(`{"type":"room.created"}`)
	now := time.Unix(1_800_000_000, 0)
	h := Sign(testSecret, now, body)
	if !strings.HasPrefix(h, "t=1800000000,v1=") || len(h) != len("t=1800000000,v1=")+64 {
		t.Fatalf("header %q", h)
	}
	for _, c := range []struct {
		name   string
		secret []byte
		header string
		body   []byte
		at     time.Time
		want   error
	}{
		{"good", testSecret, h, body, now, nil},
		{"at the age limit", testSecret, h, body, now.Add(MaxSignatureAge), nil},
		{"past the age limit", testSecret, h, body, now.Add(MaxSignatureAge + time.Second), ErrStaleSignature},
		{"from the future, past the limit", testSecret, h, body, now.Add(-MaxSignatureAge - time.Second), ErrStaleSignature},
		{"body changed", testSecret, h, []byte(`{"type":"room.closed"}`), now, ErrBadSignature},
		{"other secret", []byte("another secret, 16+"), h, body, now, ErrBadSignature},
		{"timestamp changed", testSecret, strings.Replace(h, "t=1800000000", "t=1800000001", 1), body, now, ErrBadSignature},
		{"no v1", testSecret, "t=1800000000", body, now, ErrBadSignature},
		{"empty", testSecret, "", body, now, ErrBadSignature},
	} {
		if err := Verify(c.secret, c.header, c.body, c.at); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// A verified player's user id reaches the hook; an unverified one's is absent.
func TestJoinHookCarriesTheUserID(t *testing.T) {
	seen := make(chan string, 2)
	url := hookServer(t, func(w http.ResponseWriter, j JoinHookRequest) {
		seen <- j.UserID
		_, _ = io.WriteString(w, `{"allow":true}`)
	})
	h := newHook(t, url, false)
	verified := join
	verified.UserID = "user-42"
	for _, j := range []signaling.JoinRequest{verified, join} {
		if err := h.CheckJoin(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := <-seen, <-seen; a != "user-42" || b != "" {
		t.Fatalf("user ids %q and %q, want user-42 and none", a, b)
	}
}
