package deploy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/server"
)

type dashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// metricName is a metric in a PromQL expression.
var metricName = regexp.MustCompile(`\b(hostrelay|go|process)_[a-z_]+\b`)

// TestGrafanaDashboard: the dashboard is JSON Grafana can import, has the
// panels an operator looks at first, takes its data source from a variable,
// and queries only metrics a running server serves (a renamed metric
// fails here, not on someone's empty panel).
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("grafana/hostrelay.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("grafana/hostrelay.json: %v", err)
	}
	served := servedMetrics(t)

	var titles []string
	for _, p := range d.Panels {
		titles = append(titles, p.Title)
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source not the dashboard's variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q: no query", p.Title)
		}
		for _, tg := range p.Targets {
			names := metricName.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q queries no metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				if !slices.Contains(served, n) {
					t.Errorf("panel %q: %s is not served", p.Title, n)
				}
			}
		}
	}
	for _, want := range []string{"Lobby sessions", "Rooms", "Joins and rooms per second", "Refusals per second",
		"Relayed bytes per second", "TURN allocations", "Dropped packets per second"} {
		if !slices.Contains(titles, want) {
			t.Errorf("no panel %q (panels: %q)", want, titles)
		}
	}
}

// servedMetrics starts a server with metrics on loopback, refuses one lobby
// request, and lists the families its /metrics serves.
func servedMetrics(t *testing.T) []string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.HTTP.Addr, cfg.TURN.UDPAddr, cfg.TURN.TCPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.TURN.Secret = []byte("0123456789abcdef0123456789abcdef")
	cfg.Metrics.Addr = "127.0.0.1:0"
	s, err := server.New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	// A refusal series appears at its first count: make one.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, _, err := lobbytest.Dial(ctx, "ws://"+s.Addrs().HTTP+"/ws", lobbytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Call(ctx, protocol.TypeHello, &protocol.Hello{Version: protocol.Version + 1, Name: "From the future"}, nil); err == nil {
		t.Fatal("hello with another protocol version accepted")
	}
	resp, err := http.Get("http://" + s.Addrs().Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var names []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "# TYPE "); ok {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("/metrics served no family")
	}
	return names
}
