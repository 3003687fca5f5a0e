package server

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v4"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/internal/testwait"
	"github.com/hostrelay/hostrelay/protocol"
)

// scrape is one GET of /metrics, parsed.
type scrape map[string]*dto.MetricFamily

func scrapeMetrics(t *testing.T, addr string) scrape {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// get is the value of the sample of family name whose labels are exactly
// labels ("k=v" pairs); the test fails if there is none.
func (s scrape) get(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	v, ok := s.lookup(name, labels...)
	if !ok {
		t.Fatalf("no sample %s%v", name, labels)
	}
	return v
}

func (s scrape) lookup(name string, labels ...string) (float64, bool) {
	f := s[name]
	if f == nil {
		return 0, false
	}
	want := map[string]string{}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		want[k] = v
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if !maps.Equal(got, want) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetUntyped() != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// labelValues are the values label takes in family name.
func (s scrape) labelValues(name, label string) []string {
	var out []string
	for _, m := range s[name].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label && !slices.Contains(out, lp.GetValue()) {
				out = append(out, lp.GetValue())
			}
		}
	}
	slices.Sort(out)
	return out
}

// relayPeer is a pion TURN client's allocation made with a lobby
// session's credentials.
type relayPeer struct {
	client *pionturn.Client
	relay  net.PacketConn
}

func newRelayPeerFor(t *testing.T, turnAddr string, ice protocol.ICE) relayPeer {
	t.Helper()
	c := turnClient(t, "127.0.0.1", turnAddr, ice.Servers[0].Username, ice.Servers[0].Credential)
	relay, err := c.Allocate()
	if err != nil {
		t.Fatalf("allocate: %v", err)
	}
	t.Cleanup(func() { relay.Close() })
	return relayPeer{client: c, relay: relay}
}

// sendOnce sends msg from→to once and waits until to reads it.
func sendOnce(t *testing.T, from, to relayPeer, msg string) {
	t.Helper()
	if err := to.relay.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := from.relay.WriteTo([]byte(msg), to.relay.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	for {
		n, _, err := to.relay.ReadFrom(buf)
		if err != nil {
			t.Fatalf("%q did not arrive: %v", msg, err)
		}
		if string(buf[:n]) == msg {
			return
		}
	}
}

// TestMetricsAfterAGame plays a short game through the real server, lobby
// and embedded TURN, then reads every hostrelay family from /metrics over
// HTTP and checks its values, and that no label carries what a client sent.
func TestMetricsAfterAGame(t *testing.T) {
	s := startServer(t, "-metrics-addr", "127.0.0.1:0", "-seat-grace", "10s", "-rooms-per-minute", "1",
		"-turn-max-bandwidth", "16KiB", "-turn-bandwidth-burst", "32KiB")
	addrs := s.Addrs()
	if addrs.Metrics == "" {
		t.Fatal("no metrics address")
	}
	m0 := scrapeMetrics(t, addrs.Metrics)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_open_fds", "process_resident_memory_bytes"} {
		if _, ok := m0.lookup(name); !ok {
			t.Errorf("no %s: the Go runtime and process collectors are missing", name)
		}
	}

	// The lobby: a room made to migrate its host, a join, refusals, a
	// rate limit.
	ada := dialLobby(t, addrs.HTTP, "Ada")
	var rj protocol.RoomJoined
	if err := ada.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "Friday", MaxPlayers: 4, Migrate: true, Password: "pw"}, &rj); err != nil {
		t.Fatal(err)
	}
	bob := dialLobby(t, addrs.HTTP, "Bob")
	brj, err := bob.join(rj.Room.Code, "pw")
	if err != nil {
		t.Fatal(err)
	}
	eve := dialLobby(t, addrs.HTTP, "Eve")
	if _, err := eve.join(rj.Room.Code, "guess"); !isCode(err, protocol.CodeWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := eve.join("2345678", ""); !isCode(err, protocol.CodeRoomNotFound) {
		t.Fatalf("unknown code: %v", err)
	}
	const hostile = "x'); DROP TABLE rooms; --"
	if err := eve.call(hostile, nil, nil); !isCode(err, protocol.CodeUnknownType) {
		t.Fatalf("unknown type: %v", err)
	}
	eve.create("Eve's", 2, "")
	if err := eve.call(protocol.TypeLeaveRoom, nil, &protocol.OK{}); err != nil {
		t.Fatal(err)
	}
	if err := eve.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "again", MaxPlayers: 2}, nil); !isCode(err, protocol.CodeRateLimited) {
		t.Fatalf("second room in a minute: %v", err)
	}
	if err := bob.call(protocol.TypeSetReady, &protocol.SetReady{Ready: true}, &protocol.OK{}); err != nil {
		t.Fatal(err)
	}
	if err := ada.call(protocol.TypeStartGame, nil, &protocol.OK{}); err != nil {
		t.Fatal(err)
	}

	// TURN: two allocations with the players' credentials, a wrong
	// password, then game packets both ways on the fast path.
	turnAddr := addrs.TURNUDP
	a, b := newRelayPeerFor(t, turnAddr, rj.ICE), newRelayPeerFor(t, turnAddr, brj.ICE)
	bad := brj.ICE
	bad.Servers = []protocol.ICEServer{{URLs: bad.Servers[0].URLs, Username: bad.Servers[0].Username, Credential: "wrong"}}
	if _, err := tryAllocateFrom(t, "127.0.0.1", turnAddr, bad); turnCode(err) != 401 {
		t.Fatalf("Allocate with a wrong password: %v, want 401", err)
	}
	for _, p := range []struct{ c, peer relayPeer }{{a, b}, {b, a}} {
		if err := p.c.client.CreatePermission(p.peer.relay.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	// pion's client sends Send indications until it hears its channel is
	// bound, and the fast path needs a channel each way; once a packet each
	// way took it, all do.
	fast := func() float64 {
		return scrapeMetrics(t, addrs.Metrics).get(t, "hostrelay_turn_relayed_packets_total", "path=fast")
	}
	testwait.For(t, "a packet each way on the fast path", func() bool {
		before := fast()
		sendOnce(t, a, b, "warm up")
		sendOnce(t, b, a, "warm up")
		return fast()-before == 2
	})
	m1 := scrapeMetrics(t, addrs.Metrics)
	const n = 25
	for i := range n {
		sendOnce(t, a, b, "snapshot "+string(rune('a'+i%26)))
		sendOnce(t, b, a, "input "+string(rune('a'+i%26)))
	}
	m2 := scrapeMetrics(t, addrs.Metrics)
	relayed := func(m scrape, what, path string) float64 {
		return m.get(t, "hostrelay_turn_relayed_"+what+"_total", "path="+path)
	}
	if d := relayed(m2, "packets", "fast") - relayed(m1, "packets", "fast"); d != 2*n {
		t.Errorf("fast path relayed %v packets, want %d", d, 2*n)
	}
	if d := relayed(m2, "bytes", "fast") - relayed(m1, "bytes", "fast"); d != n*float64(len("snapshot a")+len("input a")) {
		t.Errorf("fast path relayed %v bytes, want %d", d, n*(len("snapshot a")+len("input a")))
	}
	if d := relayed(m2, "packets", "pion") - relayed(m1, "packets", "pion"); d != 0 {
		t.Errorf("%v packets went through pion once channels were bound", d)
	}

	// A burst over the sender's bandwidth: what is not relayed is
	// dropped and counted, with its bytes.
	const burst, size = 60, 1200
	payload := strings.Repeat("x", size)
	for range burst {
		if _, err := a.relay.WriteTo([]byte(payload), b.relay.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	var m3 scrape
	testwait.For(t, "the burst relayed or dropped", func() bool {
		m3 = scrapeMetrics(t, addrs.Metrics)
		got := relayed(m3, "packets", "fast") - relayed(m2, "packets", "fast") +
			m3.get(t, "hostrelay_turn_dropped_packets_total", "reason=bandwidth") - m2.get(t, "hostrelay_turn_dropped_packets_total", "reason=bandwidth")
		return got == burst
	})
	dropped := m3.get(t, "hostrelay_turn_dropped_packets_total", "reason=bandwidth")
	if dropped == 0 || dropped == burst {
		t.Errorf("%v of %d packets dropped over 32KiB of burst: want some, not all", dropped, burst)
	}
	if got := m3.get(t, "hostrelay_turn_bandwidth_dropped_bytes_total"); got != dropped*size {
		t.Errorf("dropped bytes %v, want %v", got, dropped*size)
	}

	// The host leaves: Bob takes over. Bob's connection drops and he
	// resumes his seat.
	if err := ada.call(protocol.TypeLeaveRoom, nil, &protocol.OK{}); err != nil {
		t.Fatal(err)
	}
	_ = bob.CloseNow()
	testwait.For(t, "Bob's seat held", func() bool {
		v, _ := scrapeMetrics(t, addrs.Metrics).lookup("hostrelay_lobby_sessions", "state=away")
		return v == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	back, _, err := lobbytest.Dial(ctx, "ws://"+addrs.HTTP+"/ws", lobbytest.Options{Received: bob.Received()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = back.CloseNow() })
	if w, err := back.Hello(ctx, protocol.Hello{Version: protocol.Version, Resume: bob.welcome.Resume, Received: bob.Received()}); err != nil || !w.Resumed {
		t.Fatalf("resume: %+v %v", w, err)
	}

	m := scrapeMetrics(t, addrs.Metrics)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"hostrelay_lobby_sessions", []string{"state=connected"}, 3},
		{"hostrelay_lobby_sessions", []string{"state=away"}, 0},
		{"hostrelay_lobby_rooms", []string{"state=open"}, 0},
		{"hostrelay_lobby_rooms", []string{"state=started"}, 1},
		{"hostrelay_lobby_rooms_created_total", nil, 2},
		{"hostrelay_lobby_rooms_closed_total", nil, 1}, // Eve's
		{"hostrelay_lobby_joins_total", nil, 1},
		{"hostrelay_lobby_host_migrations_total", nil, 1},
		{"hostrelay_lobby_resumes_total", []string{"result=resumed"}, 1},
		{"hostrelay_lobby_resumes_total", []string{"result=failed"}, 0},
		{"hostrelay_lobby_refusals_total", []string{"request=joinRoom", "reason=wrong_password"}, 1},
		{"hostrelay_lobby_refusals_total", []string{"request=joinRoom", "reason=room_not_found"}, 1},
		{"hostrelay_lobby_refusals_total", []string{"request=other", "reason=unknown_type"}, 1},
		{"hostrelay_lobby_refusals_total", []string{"request=createRoom", "reason=rate_limited"}, 1},
		{"hostrelay_lobby_rate_limited_total", []string{"limit=rooms_per_session"}, 1},
		{"hostrelay_lobby_rate_limited_total", []string{"limit=joins_per_ip"}, 0},
		{"hostrelay_turn_allocations", []string{"transport=udp"}, 2},
		{"hostrelay_turn_allocations", []string{"transport=tcp"}, 0},
		{"hostrelay_turn_allocations", []string{"transport=tls"}, 0},
		{"hostrelay_turn_allocations_created_total", nil, 2},
		{"hostrelay_turn_allocations_refused_total", []string{"reason=session_quota"}, 0},
		{"hostrelay_turn_channel_binds_refused_total", nil, 0},
		{"hostrelay_turn_auth_failures_total", []string{"reason=bad_integrity"}, 1},
		{"hostrelay_turn_auth_failures_total", []string{"reason=session_not_live"}, 0},
		{"hostrelay_turn_dropped_packets_total", []string{"reason=policy"}, 0},
		{"hostrelay_turn_dropped_packets_total", []string{"reason=overflow"}, 0},
		{"hostrelay_turn_connections", []string{"transport=tcp"}, 0},
		{"hostrelay_turn_connections_closed_total", []string{"transport=tcp", "reason=refused"}, 0},
		{"hostrelay_http_websocket_connections", nil, 3},
		{"hostrelay_http_connections_shed_total", []string{"action=refused"}, 0},
	} {
		if got := m.get(t, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := m.get(t, "hostrelay_http_connections"); got < 3 {
		t.Errorf("hostrelay_http_connections = %v, want at least the 3 WebSockets", got)
	}

	// Every family says what it is, and no label carries a client's words:
	// the hostile type is "other", and refusals name only protocol types.
	for name, f := range m {
		if strings.HasPrefix(name, "hostrelay_") && (f.GetHelp() == "" || f.GetType() == dto.MetricType_UNTYPED) {
			t.Errorf("%s: help %q, type %v", name, f.GetHelp(), f.GetType())
		}
		for _, mt := range f.GetMetric() {
			for _, lp := range mt.GetLabel() {
				if strings.Contains(lp.GetValue(), "DROP") || strings.Contains(lp.GetValue(), rj.Room.Code) {
					t.Errorf("%s: label %s=%q carries client input", name, lp.GetName(), lp.GetValue())
				}
			}
		}
	}
	if got, want := m.labelValues("hostrelay_lobby_refusals_total", "request"), []string{"createRoom", "joinRoom", "other"}; !slices.Equal(got, want) {
		t.Errorf("refusals by request %v, want %v", got, want)
	}
}

// TestMetricsOffByDefault: without -metrics-addr nothing listens for
// metrics, and the public port does not serve them either.
func TestMetricsOffByDefault(t *testing.T) {
	for _, s := range []*Server{startServer(t), startServer(t, "-metrics-addr", "127.0.0.1:0")} {
		resp, err := http.Get("http://" + s.Addrs().HTTP + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "hostrelay_") {
			t.Errorf("public port answered /metrics: %d %.80q", resp.StatusCode, body)
		}
	}
	if a := startServer(t).Addrs().Metrics; a != "" {
		t.Errorf("metrics listener on %s without -metrics-addr", a)
	}
	if DefaultConfig().Metrics.Addr != "" {
		t.Errorf("DefaultConfig turns metrics on at %q", DefaultConfig().Metrics.Addr)
	}
}

// TestMetricsAddrValidated: a malformed -metrics-addr stops the start with
// the flag and key named; one that cannot be bound stops New.
func TestMetricsAddrValidated(t *testing.T) {
	_, err := LoadConfig([]string{"-metrics-addr", "9090"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-metrics-addr (metrics.addr)") {
		t.Fatalf("-metrics-addr 9090: %v, want the flag and key named", err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := DefaultConfig()
	cfg.HTTP.Addr, cfg.TURN.UDPAddr, cfg.TURN.TCPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.TURN.Secret = []byte("0123456789abcdef0123456789abcdef")
	cfg.Metrics.Addr = taken.Addr().String()
	if s, err := New(t.Context(), cfg, slog.New(slog.DiscardHandler)); err == nil {
		_ = s.Shutdown(context.Background())
		t.Fatal("New succeeded with the metrics port taken")
	} else if !strings.Contains(err.Error(), "metrics: listen") {
		t.Fatalf("New: %v, want the metrics listener named", err)
	}
}

// TestRegisterMetrics: an embedder adds the server's families to a
// registry of its own; the Go runtime's are left to it.
func TestRegisterMetrics(t *testing.T) {
	s := startServer(t)
	reg := prometheus.NewRegistry()
	if err := s.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fams {
		names = append(names, f.GetName())
	}
	if !slices.Contains(names, "hostrelay_lobby_sessions") || !slices.Contains(names, "hostrelay_turn_relayed_packets_total") ||
		slices.Contains(names, "go_goroutines") {
		t.Fatalf("families %v", names)
	}
}

// TestSpectatorBudgetMetrics: the bytes spectator streams hold and what
// -spectator-budget cost reach /metrics. 20 rooms nobody watches send a
// keyframe of the largest size each: the budget's idle share (a quarter of
// 1 MiB) keeps 16 of them, and the other 4 are refused.
func TestSpectatorBudgetMetrics(t *testing.T) {
	s := startServer(t, "-metrics-addr", "127.0.0.1:0", "-spectator-budget", "1MiB")
	addrs := s.Addrs()
	for range 20 {
		host := dialLobby(t, addrs.HTTP, "Ada")
		host.create("Final", 2, "")
		frame := &protocol.SpectatorFrame{Key: true, Data: make([]byte, protocol.MaxSpectatorData)}
		if err := host.call(protocol.TypeSpectatorFrame, frame, &protocol.OK{}); err != nil {
			t.Fatal(err)
		}
	}
	m := scrapeMetrics(t, addrs.Metrics)
	if got, want := m.get(t, "hostrelay_lobby_spectator_buffer_bytes"), float64(16*16<<10); got != want {
		t.Errorf("hostrelay_lobby_spectator_buffer_bytes %v, want %v", got, want)
	}
	if got := m.get(t, "hostrelay_lobby_spectator_budget_frames_total", "action=refused"); got != 4 {
		t.Errorf("refused %v frames for the budget, want 4", got)
	}
	if got := m.get(t, "hostrelay_lobby_spectator_budget_frames_total", "action=dropped"); got != 0 {
		t.Errorf("dropped %v frames for the budget, want 0", got)
	}
}
