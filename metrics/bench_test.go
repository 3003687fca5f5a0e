package metrics

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkScrape is one scrape of a server's registry, hostrelay's
// families and the Go runtime and process collectors, written in the text
// format, without the network. The sources are snapshots, so what the lobby
// spends on its side is BenchmarkHubMetrics (signaling).
func BenchmarkScrape(b *testing.B) {
	reg, err := NewRegistry(snapshot())
	if err != nil {
		b.Fatal(err)
	}
	h := Handler(reg, slog.New(slog.DiscardHandler))
	req := httptest.NewRequest(http.MethodGet, Path, nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
