package servertest

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// A started server answers on its lobby's HTTP address, and is gone once
// the test that started it has ended.
func TestStartServesAndStops(t *testing.T) {
	var addr string
	t.Run("started", func(t *testing.T) {
		s := Start(t, "servertest-secret-0123456789")
		addr = s.Addrs().HTTP
		if url := LobbyURL(s); !strings.HasPrefix(url, "ws://127.0.0.1:") || !strings.HasSuffix(url, "/ws") {
			t.Fatalf("LobbyURL %q", url)
		}
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz: %s", resp.Status)
		}
	})
	if c, err := net.Dial("tcp", addr); err == nil {
		_ = c.Close()
		t.Fatalf("%s still accepts connections after the test ended", addr)
	}
}
