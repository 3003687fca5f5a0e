package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

func TestConfigDebugAddr(t *testing.T) {
	cfg, err := LoadConfig(nil, noEnv, io.Discard)
	if err != nil || cfg.Debug.Addr != "" {
		t.Fatalf("default debug addr %q, %v: want off", cfg.Debug.Addr, err)
	}
	for _, ok := range []string{"127.0.0.1:0", "127.0.0.1:6060", "127.9.9.9:6060", "[::1]:6060", "[::ffff:127.0.0.1]:6060"} {
		if cfg, err := LoadConfig([]string{"-debug-addr", ok}, noEnv, io.Discard); err != nil || cfg.Debug.Addr != ok {
			t.Errorf("-debug-addr %s: %q, %v", ok, cfg.Debug.Addr, err)
		}
	}
	// Every address that is not a loopback literal, including the ones
	// that would listen on every interface.
	for _, bad := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "192.0.2.1:6060", "10.0.0.1:6060",
		"[::ffff:192.0.2.1]:6060", "localhost:6060", "127.0.0.1", "example.com:6060"} {
		_, err := LoadConfig([]string{"-debug-addr", bad}, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-debug-addr") {
			t.Errorf("-debug-addr %q: %v, want refused naming the flag", bad, err)
		}
	}
	env := func(k string) string {
		if k == "HOSTRELAY_DEBUG_ADDR" {
			return "0.0.0.0:6060"
		}
		return ""
	}
	if _, err := LoadConfig(nil, env, io.Discard); err == nil {
		t.Error("HOSTRELAY_DEBUG_ADDR=0.0.0.0:6060 accepted")
	}
}

// TestDebugListener: with -debug-addr the goroutine count is readable from
// pprof (as the soak run reads it); pprof is never on the public listener.
func TestDebugListener(t *testing.T) {
	s := startServer(t, "-debug-addr", "127.0.0.1:0")
	if s.Addrs().Debug == "" {
		t.Fatal("no debug address")
	}
	resp, err := http.Get("http://" + s.Addrs().Debug + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first, _ := bufio.NewReader(resp.Body).ReadString('\n')
	var n int
	if _, err := fmt.Sscanf(first, "goroutine profile: total %d", &n); err != nil || n < 1 || resp.StatusCode != http.StatusOK {
		t.Fatalf("goroutine profile: %d %q %v", resp.StatusCode, first, err)
	}

	for _, srv := range []*Server{s, startServer(t)} {
		resp, err := http.Get("http://" + srv.Addrs().HTTP + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "goroutine") {
			t.Errorf("public listener answered pprof: %d %.80q", resp.StatusCode, body)
		}
	}
	if d := startServer(t).Addrs().Debug; d != "" {
		t.Errorf("debug listener on %s without -debug-addr", d)
	}
}

// TestHealthCountsAllocations: /healthz reports live TURN allocations, the
// figure a monitor watches return to its baseline, and relayed packets
// dropped by cause.
func TestHealthCountsAllocations(t *testing.T) {
	s := startServer(t)
	type health struct {
		TURN *struct {
			Allocations int `json:"allocations"`
			Dropped     *struct {
				Policy, Stray, Overflow, Bandwidth uint64
			} `json:"dropped"`
		} `json:"turn"`
	}
	get := func() health {
		t.Helper()
		resp, err := http.Get("http://" + s.Addrs().HTTP + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h health
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || h.TURN == nil || h.TURN.Dropped == nil {
			t.Fatalf("healthz: %+v %v", h, err)
		}
		return h
	}
	if h := get(); h.TURN.Allocations != 0 || h.TURN.Dropped.Policy != 0 {
		t.Fatalf("before any client: %+v", *h.TURN)
	}
	roomA := dialLobby(t, s.Addrs().HTTP, "Ada").create("A", 2, "")
	roomB := dialLobby(t, s.Addrs().HTTP, "Bob").create("B", 2, "")
	a := allocate(t, s.Addrs().TURNUDP, roomA.ICE)
	b := allocate(t, s.Addrs().TURNUDP, roomB.ICE)
	if h := get(); h.TURN.Allocations != 2 {
		t.Fatalf("healthz says %d allocations, want 2", h.TURN.Allocations)
	}
	// Another room's relay: the peer policy drops it, and /healthz says so.
	if _, err := a.WriteTo([]byte("probe"), b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a policy drop in /healthz", func() bool { return get().TURN.Dropped.Policy == 1 })
}
