package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hostrelay/hostrelay/static"
)

// TestLicensesServed: /licenses is the notices of the Go packages in the
// binary and, when the web app is built in, of the npm packages in it.
func TestLicensesServed(t *testing.T) {
	s := startServer(t)
	resp, err := http.Get("http://" + s.Addrs().HTTP + "/licenses")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/licenses: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	want := []string{"MIT License", "\ngithub.com/pion/turn/v4 v", "\ngithub.com/coder/websocket v", "Go standard library"}
	if static.Built() {
		want = append(want, "\n@msgpack/msgpack ", "License: ISC")
	} else {
		want = append(want, "The web app was not built into this binary")
	}
	for _, w := range want {
		if !strings.Contains(string(body), w) {
			t.Errorf("/licenses has no %q", w)
		}
	}
}
