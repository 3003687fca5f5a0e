package metrics

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hostrelay/hostrelay/bans"
	"github.com/hostrelay/hostrelay/cluster"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/turn"
	"github.com/hostrelay/hostrelay/webhook"
)

// snapshot is a lobby and a relay as their Metrics and Stats report them:
// the collector's whole input.
func snapshot() Sources {
	return Sources{
		Lobby: func() signaling.Metrics {
			return signaling.Metrics{
				Sessions: 5, SessionsAway: 1, RoomsOpen: 2, RoomsStarted: 1,
				RoomsCreated: 7, RoomsClosed: 4, Joins: 9, HostMigrations: 1, Resumes: 3, ResumesFailed: 2,
				Spectators: 50, Spectates: 61, SpectatorFramesIn: 800, SpectatorFramesOut: 40000, SpectatorFramesDropped: 552,
				SpectatorBufferBytes: 3 << 20, SpectatorBudgetRefused: 12, SpectatorBudgetDropped: 30,
				RateLimited: map[string]uint64{"joins_per_ip": 6, "chat_per_session": 0},
				Refusals: []signaling.Refusal{
					{Request: "joinRoom", Code: "wrong_password", Count: 4},
					{Request: "other", Code: "unknown_type", Count: 1},
				},
			}
		},
		TURN: func() turn.Stats {
			return turn.Stats{
				Allocations: 6, AllocationsTCP: 2, AllocationsTLS: 1, AllocationsCreated: 11,
				AllocationsRefused: map[string]uint64{"session_quota": 1, "ip_quota": 0, "capacity": 0},
				AuthFailures:       map[string]uint64{"bad_integrity": 2, "expired": 0},
				RelayedFast:        turn.Traffic{Packets: 1000, Bytes: 150000},
				RelayedOther:       turn.Traffic{Packets: 10, Bytes: 900},
				DroppedWrites:      3, DroppedReads: 1, DroppedOverflow: 0, DroppedBandwidth: 5, DroppedBandwidthBytes: 6000,
				TCPConns: 2, TCPRefused: 1, TLSConns: 1, TLSHandshakeErrors: 3,
			}
		},
		HTTP: func() HTTP { return HTTP{Open: 9, WebSockets: 4, Evicted: 2} },
		Cluster: func() cluster.Stats {
			return cluster.Stats{Connected: true, Nodes: 3, Writes: 120, Deletes: 40, WriteErrors: 2, NodesLost: 1, Malformed: 5, Lookups: 7}
		},
	}
}

// TestCollectorFollowsConventions: promlint's checks (counters end in
// _total, units in names, help on every family) find nothing.
func TestCollectorFollowsConventions(t *testing.T) {
	problems, err := testutil.CollectAndLint(newCollector(snapshot()))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// TestCollectorValues: each figure of the snapshot comes out under its
// family and labels, gauges as gauges and totals as counters.
func TestCollectorValues(t *testing.T) {
	want := `
# HELP hostrelay_lobby_sessions Lobby sessions, by state: connected, or away (connection lost, seat held for a resume).
# TYPE hostrelay_lobby_sessions gauge
hostrelay_lobby_sessions{state="away"} 1
hostrelay_lobby_sessions{state="connected"} 4
# HELP hostrelay_lobby_spectators Spectators watching a room now.
# TYPE hostrelay_lobby_spectators gauge
hostrelay_lobby_spectators 50
# HELP hostrelay_lobby_spectates_total Watches begun (spectate answered with spectating).
# TYPE hostrelay_lobby_spectates_total counter
hostrelay_lobby_spectates_total 61
# HELP hostrelay_lobby_spectator_frames_total Spectator frames, by direction: in (taken from hosts), out (queued to spectators) or dropped (a slow or away spectator lost them).
# TYPE hostrelay_lobby_spectator_frames_total counter
hostrelay_lobby_spectator_frames_total{direction="dropped"} 552
hostrelay_lobby_spectator_frames_total{direction="in"} 800
hostrelay_lobby_spectator_frames_total{direction="out"} 40000
# HELP hostrelay_lobby_spectator_buffer_bytes Memory of the spectator frames every room holds now, for the delay and for joiners (bounded by -spectator-budget).
# TYPE hostrelay_lobby_spectator_buffer_bytes gauge
hostrelay_lobby_spectator_buffer_bytes 3.145728e+06
# HELP hostrelay_lobby_spectator_budget_frames_total Spectator frames the -spectator-budget cost, by action: refused (a host's frame not taken) or dropped (a held frame let go to make room).
# TYPE hostrelay_lobby_spectator_budget_frames_total counter
hostrelay_lobby_spectator_budget_frames_total{action="dropped"} 30
hostrelay_lobby_spectator_budget_frames_total{action="refused"} 12
# HELP hostrelay_lobby_refusals_total Lobby requests answered with an Error, by request type and error code (other: outside the protocol's, or a frame refused unread).
# TYPE hostrelay_lobby_refusals_total counter
hostrelay_lobby_refusals_total{reason="unknown_type",request="other"} 1
hostrelay_lobby_refusals_total{reason="wrong_password",request="joinRoom"} 4
# HELP hostrelay_lobby_rate_limited_total Requests and connections refused by a lobby rate limit, by limit.
# TYPE hostrelay_lobby_rate_limited_total counter
hostrelay_lobby_rate_limited_total{limit="chat_per_session"} 0
hostrelay_lobby_rate_limited_total{limit="joins_per_ip"} 6
# HELP hostrelay_turn_allocations Live TURN allocations, by client transport: udp, tcp or tls.
# TYPE hostrelay_turn_allocations gauge
hostrelay_turn_allocations{transport="tcp"} 1
hostrelay_turn_allocations{transport="tls"} 1
hostrelay_turn_allocations{transport="udp"} 4
# HELP hostrelay_turn_relayed_bytes_total Payload bytes relayed between allocations (TURN framing not counted), by path: fast or pion.
# TYPE hostrelay_turn_relayed_bytes_total counter
hostrelay_turn_relayed_bytes_total{path="fast"} 150000
hostrelay_turn_relayed_bytes_total{path="pion"} 900
# HELP hostrelay_turn_dropped_packets_total Relayed packets dropped, by reason: policy (not a room mate), stray (reached a relay socket from outside), overflow (receiving queue full), bandwidth (sender over its limit).
# TYPE hostrelay_turn_dropped_packets_total counter
hostrelay_turn_dropped_packets_total{reason="bandwidth"} 5
hostrelay_turn_dropped_packets_total{reason="overflow"} 0
hostrelay_turn_dropped_packets_total{reason="policy"} 3
hostrelay_turn_dropped_packets_total{reason="stray"} 1
# HELP hostrelay_turn_connections Open TURN connections, by transport: tcp or tls.
# TYPE hostrelay_turn_connections gauge
hostrelay_turn_connections{transport="tcp"} 2
hostrelay_turn_connections{transport="tls"} 1
# HELP hostrelay_http_connections_shed_total HTTP connections closed at the connection cap, by action: evicted (idle, to make room) or refused (none idle).
# TYPE hostrelay_http_connections_shed_total counter
hostrelay_http_connections_shed_total{action="evicted"} 2
hostrelay_http_connections_shed_total{action="refused"} 0
# HELP hostrelay_cluster_connected 1 while this node is connected to the cluster's NATS, 0 while not.
# TYPE hostrelay_cluster_connected gauge
hostrelay_cluster_connected 1
# HELP hostrelay_cluster_nodes Live nodes of the cluster as this node sees them, itself included.
# TYPE hostrelay_cluster_nodes gauge
hostrelay_cluster_nodes 3
# HELP hostrelay_cluster_directory_writes_total Room entries this node wrote to the cluster directory, by op: put (a claim or a listing) or delete (a closed or lost room).
# TYPE hostrelay_cluster_directory_writes_total counter
hostrelay_cluster_directory_writes_total{op="delete"} 40
hostrelay_cluster_directory_writes_total{op="put"} 120
# HELP hostrelay_cluster_directory_errors_total Directory writes and deletes of this node that NATS refused or that timed out.
# TYPE hostrelay_cluster_directory_errors_total counter
hostrelay_cluster_directory_errors_total 2
# HELP hostrelay_cluster_nodes_lost_total Nodes this node called dead after they fell silent (their rooms lost), not counting nodes that left.
# TYPE hostrelay_cluster_nodes_lost_total counter
hostrelay_cluster_nodes_lost_total 1
# HELP hostrelay_cluster_entries_malformed_total Directory entries and cluster events read from NATS and refused as malformed.
# TYPE hostrelay_cluster_entries_malformed_total counter
hostrelay_cluster_entries_malformed_total 5
# HELP hostrelay_cluster_directory_lookups_total Room codes this node looked up in the cluster directory (joins, spectates and share links of rooms not on this node).
# TYPE hostrelay_cluster_directory_lookups_total counter
hostrelay_cluster_directory_lookups_total 7
`
	if err := testutil.CollectAndCompare(newCollector(snapshot()), strings.NewReader(want),
		"hostrelay_lobby_sessions", "hostrelay_lobby_spectators", "hostrelay_lobby_spectates_total",
		"hostrelay_lobby_spectator_frames_total", "hostrelay_lobby_spectator_buffer_bytes",
		"hostrelay_lobby_spectator_budget_frames_total", "hostrelay_lobby_refusals_total", "hostrelay_lobby_rate_limited_total",
		"hostrelay_turn_allocations", "hostrelay_turn_relayed_bytes_total", "hostrelay_turn_dropped_packets_total",
		"hostrelay_turn_connections",
		"hostrelay_http_connections_shed_total", "hostrelay_cluster_connected", "hostrelay_cluster_nodes",
		"hostrelay_cluster_directory_writes_total", "hostrelay_cluster_directory_errors_total",
		"hostrelay_cluster_nodes_lost_total", "hostrelay_cluster_entries_malformed_total",
		"hostrelay_cluster_directory_lookups_total"); err != nil {
		t.Fatal(err)
	}
	// Closed connections: each reason for each transport, and the TLS
	// handshakes.
	if n := testutil.CollectAndCount(newCollector(snapshot()), "hostrelay_turn_connections_closed_total"); n != 9 {
		t.Fatalf("%d closed-connection series, want 4 reasons by 2 transports and TLS handshakes", n)
	}
	// Without an HTTP source its families are simply absent.
	src := snapshot()
	src.HTTP = nil
	if n := testutil.CollectAndCount(newCollector(src), "hostrelay_http_connections"); n != 0 {
		t.Fatalf("%d HTTP samples without an HTTP source", n)
	}
	// A single node has no cluster families.
	src.Cluster = nil
	if n := testutil.CollectAndCount(newCollector(src), "hostrelay_cluster_nodes"); n != 0 {
		t.Fatalf("%d cluster samples on a single node", n)
	}
}

// TestRegistriesAreSeparate: two servers in one process each get a
// registry; the process-wide default one is never touched.
func TestRegistriesAreSeparate(t *testing.T) {
	before, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	r1, err := NewRegistry(snapshot())
	if err != nil {
		t.Fatal(err)
	}
	r2, err := NewRegistry(snapshot())
	if err != nil {
		t.Fatalf("second registry: %v", err)
	}
	if n, _ := testutil.GatherAndCount(r1, "hostrelay_lobby_joins_total"); n != 1 {
		t.Fatalf("registry 1: %d samples of hostrelay_lobby_joins_total", n)
	}
	if n, _ := testutil.GatherAndCount(r2, "go_goroutines", "process_open_fds"); n != 2 {
		t.Fatalf("registry 2: %d Go runtime and process samples, want 2", n)
	}
	after, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("the default registry changed: %d families, then %d", len(before), len(after))
	}
	// Registering twice on one registry is refused, not a panic.
	if err := Register(r1, snapshot()); err == nil {
		t.Fatal("the same collector registered twice")
	}
	if err := Register(prometheus.NewRegistry(), Sources{TURN: snapshot().TURN}); !errors.Is(err, ErrNoSource) {
		t.Fatalf("without a lobby source: %v", err)
	}
}

// TestListen: the listener serves the registry at /metrics and nothing
// else, and Close stops it.
func TestListen(t *testing.T) {
	reg, err := NewRegistry(snapshot())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen(t.Context(), "127.0.0.1:0", reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + s.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "hostrelay_lobby_joins_total 9") {
		t.Fatalf("/metrics: %d %.200q", code, body)
	}
	if code, _ := get("/"); code != http.StatusNotFound {
		t.Fatalf("/: %d, want 404", code)
	}
	addr := s.Addr()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Fatal("still serving after Close")
	}
	var off *Server
	if off.Addr() != "" || off.Close() != nil {
		t.Fatal("a nil Server is not off")
	}
}

// TestPrivateAddresses: the warning spares loopback and private networks,
// and nothing else.
func TestPrivateAddresses(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "192.168.0.9": true, "172.16.5.5": true,
		"fd00::1": true, "::ffff:10.0.0.1": true, "169.254.1.1": true,
		"0.0.0.0": false, "::": false, "203.0.113.10": false, "2001:db8::1": false, "::ffff:8.8.8.8": false,
	} {
		if got := private(netip.MustParseAddr(addr)); got != want {
			t.Errorf("private(%s) = %v, want %v", addr, got, want)
		}
	}
}

// The webhook families, sent only with a sender and a join hook.
func TestWebhookFamilies(t *testing.T) {
	src := snapshot()
	src.Webhook = func() webhook.Stats {
		return webhook.Stats{Delivered: 90, Retried: 12, Queued: 7, Bytes: 1400,
			Dropped: map[string]uint64{"queue_full": 3, "too_old": 0, "rejected": 1, "shutdown": 0}}
	}
	src.JoinHook = func() webhook.JoinHookStats {
		return webhook.JoinHookStats{Allowed: 20, Refused: 2, FailedOpen: 0, FailedClosed: 1}
	}
	const want = `
# HELP hostrelay_webhook_events_delivered_total Room events the webhook receiver took (2xx).
# TYPE hostrelay_webhook_events_delivered_total counter
hostrelay_webhook_events_delivered_total 90
# HELP hostrelay_webhook_retries_total Webhook deliveries that failed (no answer, 408, 429, 5xx) and were tried again after a backoff.
# TYPE hostrelay_webhook_retries_total counter
hostrelay_webhook_retries_total 12
# HELP hostrelay_webhook_events_dropped_total Room events never delivered, by reason: queue_full (over -webhook-queue), too_old (still failing after 10 minutes), rejected (a 4xx answer), shutdown (still queued at the end of shutdown).
# TYPE hostrelay_webhook_events_dropped_total counter
hostrelay_webhook_events_dropped_total{reason="queue_full"} 3
hostrelay_webhook_events_dropped_total{reason="rejected"} 1
hostrelay_webhook_events_dropped_total{reason="shutdown"} 0
hostrelay_webhook_events_dropped_total{reason="too_old"} 0
# HELP hostrelay_webhook_queue_events Room events waiting for the webhook receiver, those in flight included.
# TYPE hostrelay_webhook_queue_events gauge
hostrelay_webhook_queue_events 7
# HELP hostrelay_webhook_queue_bytes Their bytes.
# TYPE hostrelay_webhook_queue_bytes gauge
hostrelay_webhook_queue_bytes 1400
# HELP hostrelay_join_hook_checks_total Creates and joins the join hook was asked about, by result: allowed, refused, failed_open (the hook failed; let through), failed_closed (the hook failed; refused with unavailable).
# TYPE hostrelay_join_hook_checks_total counter
hostrelay_join_hook_checks_total{result="allowed"} 20
hostrelay_join_hook_checks_total{result="failed_closed"} 1
hostrelay_join_hook_checks_total{result="failed_open"} 0
hostrelay_join_hook_checks_total{result="refused"} 2
`
	if err := testutil.CollectAndCompare(newCollector(src), strings.NewReader(want),
		"hostrelay_webhook_events_delivered_total", "hostrelay_webhook_retries_total", "hostrelay_webhook_events_dropped_total",
		"hostrelay_webhook_queue_events", "hostrelay_webhook_queue_bytes", "hostrelay_join_hook_checks_total"); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(newCollector(src)); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	if n := testutil.CollectAndCount(newCollector(snapshot()), "hostrelay_webhook_queue_events", "hostrelay_join_hook_checks_total"); n != 0 {
		t.Fatalf("%d webhook samples with webhooks off", n)
	}
}

func TestBanFamilies(t *testing.T) {
	src := snapshot()
	src.Bans = func() bans.Stats { return bans.Stats{Users: 3, IPs: 1, RefusedUser: 7, RefusedIP: 2} }
	const want = `
# HELP hostrelay_bans Server-wide bans in force (the admin page's), by kind: user or ip.
# TYPE hostrelay_bans gauge
hostrelay_bans{kind="ip"} 1
hostrelay_bans{kind="user"} 3
# HELP hostrelay_ban_refusals_total Hellos and resumes refused, and sessions ended, for a server-wide ban, by kind: user or ip.
# TYPE hostrelay_ban_refusals_total counter
hostrelay_ban_refusals_total{kind="ip"} 2
hostrelay_ban_refusals_total{kind="user"} 7
`
	if err := testutil.CollectAndCompare(newCollector(src), strings.NewReader(want), "hostrelay_bans", "hostrelay_ban_refusals_total"); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(newCollector(src)); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	if n := testutil.CollectAndCount(newCollector(snapshot()), "hostrelay_bans"); n != 0 {
		t.Fatalf("%d ban samples without a ban list", n)
	}
}
