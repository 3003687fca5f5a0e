package netcut

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A request over the cuttable client works; Cut closes its kept-alive
// connection (counted), and the next request dials a new one.
func TestCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	var c Cuttable
	client := c.Client()
	get := func() {
		t.Helper()
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	get()
	if n := c.Cut(); n != 1 {
		t.Fatalf("Cut closed %d connections, want 1", n)
	}
	if n := c.Cut(); n != 0 {
		t.Fatalf("a second Cut closed %d, want 0", n)
	}
	get()
	if n := c.Cut(); n != 1 {
		t.Fatalf("after a new request Cut closed %d, want 1", n)
	}
}
