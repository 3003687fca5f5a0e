package slowclient

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// A server that gives a request 300 ms to arrive closes a trickling one,
// and Trickle says so; one with no bound keeps it.
func TestTrickleSeesTheServerClose(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		closes  bool
	}{{"bounded", 300 * time.Millisecond, true}, {"unbounded", 0, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{ReadTimeout: tc.timeout, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("ok"))
			})}
			go func() { _ = srv.Serve(ln) }()
			t.Cleanup(func() { _ = srv.Close() })
			closed := Trickle(t, ln.Addr().String())
			select {
			case <-closed:
				if !tc.closes {
					t.Fatal("the connection was closed, though the server has no bound")
				}
			case <-time.After(2 * time.Second):
				if tc.closes {
					t.Fatal("the trickling request was still open 2 s after the server's 300 ms bound")
				}
			}
		})
	}
}
