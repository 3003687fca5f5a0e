package wsload

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/bare"
	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
	"github.com/hostrelay/hostrelay/bench/internal/memstat"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
)

// Smoke runs of the lobby load against the real hub and the bare harness,
// both in this process: a few sessions, a second of chat. No figure is
// asserted.

func hubServer(t *testing.T) (url, memURL string) {
	t.Helper()
	cfg := signaling.DefaultConfig()
	cfg.ICE = func(string, string) protocol.ICE { return protocol.ICE{} }
	cfg.ChatPerSecond, cfg.ChatBurst = 1000, 1000
	cfg.MaxConnsPerIP, cfg.JoinsPerMinute = 1000, 1000
	cfg.Logger = slog.New(slog.DiscardHandler)
	hub, err := signaling.NewHub(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		ap, _ := netip.ParseAddrPort(r.RemoteAddr)
		hub.ServeWebSocket(w, r, ap.Addr())
	})
	mux.Handle("/debug/mem", memstat.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		_ = hub.Close(t.Context())
		srv.Close()
	})

	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws", srv.URL + "/debug/mem"
}

func bareServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(&bare.Fanout{})
	t.Cleanup(srv.Close)

	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestSmokeIdle(t *testing.T) {
	url, mem := hubServer(t)
	r, err := MeasureIdle(t.Context(), Ours, url, nil, mem, os.Getpid(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sessions != 10 {
		t.Fatalf("%+v", r)
	}
	if _, err := MeasureIdle(t.Context(), Bare, bareServer(t), nil, "", os.Getpid(), 10, 0); err != nil {
		t.Fatal(err)
	}
}

func TestSmokeFanout(t *testing.T) {
	ours, _ := hubServer(t)
	for kind, url := range map[Kind]string{Ours: ours, Bare: bareServer(t)} {
		t.Run(string(kind), func(t *testing.T) {
			f, err := OpenFanout(t.Context(), kind, url, 20, 10)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cpu := &loadgen.CPUMeter{PID: os.Getpid()}
			r := f.Run(t.Context(), 5, 500*time.Millisecond, 300*time.Millisecond, cpu.Mark)
			if r.Sent == 0 || r.Delivered == 0 {
				t.Fatalf("no chat went round: %+v", r)
			}
		})
	}
}

// The generator's shortcut reads the send time out of a ChatMessage as the
// server encodes it.
func TestRawChatTime(t *testing.T) {
	now := time.Now().UnixNano()
	frame, err := protocol.Encode(protocol.TypeChatMessage, 0, &protocol.ChatMessage{
		From: "p1", Name: "Ada", Text: strconv.FormatInt(now, 10), At: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &Fanout{}
	r := &fanoutRun{hist: new(loadgen.Hist), start: now - 1}
	f.run.Store(r)
	if !f.rawOurs(frame) || r.delivered.Load() != 1 {
		t.Fatal("ChatMessage frame not recognised")
	}
	ok, _ := protocol.Encode(protocol.TypeOK, 3, &protocol.OK{})
	if f.rawOurs(ok) {
		t.Fatal("an OK frame taken for a chat line")
	}
}
