package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/cluster"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/turn"
)

// family is one metric family: its description and type.
type family struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

// emit sends one sample. A label count that does not match the family is
// our bug; it fails the scrape's sample with the reason rather than
// panicking in the server.
func (f family) emit(ch chan<- prometheus.Metric, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(f.desc, f.typ, v, labels...)
	if err != nil {
		m = prometheus.NewInvalidMetric(f.desc, err)
	}
	ch <- m
}

// collector reads Sources at each scrape; it keeps no state of its own.
type collector struct {
	src Sources

	sessions, rooms, roomsCreated, roomsClosed, joins, hostMigrations, originsRefused, resumes, refusals, rateLimited family
	hostChecks, freezeVotesRefused, freezeMigrations                                                                  family
	spectators, spectates, spectatorFrames, spectatorBufferBytes, spectatorBudgetFrames                               family

	allocations, allocationsCreated, allocationsRefused, channelBindsRefused, authFailures  family
	relayedPackets, relayedBytes, dropped, bandwidthDroppedBytes, streamConns, streamClosed family

	httpConns, webSockets, httpShed family

	authTokens family

	clusterConnected, clusterNodes, clusterWrites, clusterWriteErrors, clusterNodesLost, clusterMalformed, clusterLookups family

	webhookDelivered, webhookRetries, webhookDropped, webhookQueue, webhookQueueBytes, joinHookChecks family

	bansHeld, banRefusals family

	all []family
}

func newCollector(src Sources) *collector {
	c := &collector{src: src}
	def := func(f *family, typ prometheus.ValueType, name, help string, labels ...string) {
		*f = family{desc: prometheus.NewDesc("hostrelay_"+name, help, labels, nil), typ: typ}
		c.all = append(c.all, *f)
	}
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue

	def(&c.sessions, gauge, "lobby_sessions",
		"Lobby sessions, by state: connected, or away (connection lost, seat held for a resume).", "state")
	def(&c.rooms, gauge, "lobby_rooms", "Rooms, by state: open (game not started) or started.", "state")
	def(&c.roomsCreated, counter, "lobby_rooms_created_total", "Rooms created.")
	def(&c.roomsClosed, counter, "lobby_rooms_closed_total",
		"Rooms closed because their host left and no member could take over.")
	def(&c.joins, counter, "lobby_joins_total", "Players who joined a room (its creator not counted).")
	def(&c.hostMigrations, counter, "lobby_host_migrations_total",
		"Hosts replaced by a member after the host left a room made with migrate.")
	def(&c.hostChecks, counter, "lobby_host_checks_total",
		"Hosts asked for a sign of life (hostCheck) after most of their room reported them silent.")
	def(&c.freezeVotesRefused, counter, "lobby_freeze_votes_refused_total",
		"Votes on a silent host refused because the host answered its check in time.")
	def(&c.freezeMigrations, counter, "lobby_freeze_migrations_total",
		"Hosts replaced for not answering their check (a frozen tab); also counted in lobby_host_migrations_total.")
	def(&c.originsRefused, counter, "lobby_origins_refused_total",
		"Browser connections from a page on an origin the server does not allow (-allowed-origins), closed with 1008 and a reason the page can show.")
	def(&c.resumes, counter, "lobby_resumes_total",
		"Resumes of a session on a new connection, by result: resumed or failed.", "result")
	def(&c.spectators, gauge, "lobby_spectators", "Spectators watching a room now.")
	def(&c.spectates, counter, "lobby_spectates_total", "Watches begun (spectate answered with spectating).")
	def(&c.spectatorFrames, counter, "lobby_spectator_frames_total",
		"Spectator frames, by direction: in (taken from hosts), out (queued to spectators) or dropped (a slow or away spectator lost them).",
		"direction")
	def(&c.spectatorBufferBytes, gauge, "lobby_spectator_buffer_bytes",
		"Memory of the spectator frames every room holds now, for the delay and for joiners (bounded by -spectator-budget).")
	def(&c.spectatorBudgetFrames, counter, "lobby_spectator_budget_frames_total",
		"Spectator frames the -spectator-budget cost, by action: refused (a host's frame not taken) or dropped (a held frame let go to make room).",
		"action")
	def(&c.refusals, counter, "lobby_refusals_total",
		"Lobby requests answered with an Error, by request type and error code (other: outside the protocol's, or a frame refused unread).",
		"request", "reason")
	def(&c.rateLimited, counter, "lobby_rate_limited_total",
		"Requests and connections refused by a lobby rate limit, by limit.", "limit")

	def(&c.allocations, gauge, "turn_allocations", "Live TURN allocations, by client transport: udp, tcp or tls.", "transport")
	def(&c.allocationsCreated, counter, "turn_allocations_created_total", "TURN allocations made.")
	def(&c.allocationsRefused, counter, "turn_allocations_refused_total",
		"TURN Allocates refused by a cap, by reason: session_quota, ip_quota (486), capacity, ports (508).", "reason")
	def(&c.channelBindsRefused, counter, "turn_channel_binds_refused_total",
		"TURN ChannelBinds refused past the channels an allocation may bind (508).")
	def(&c.authFailures, counter, "turn_auth_failures_total",
		"TURN requests whose credentials were refused, by reason.", "reason")
	def(&c.relayedPackets, counter, "turn_relayed_packets_total",
		"Packets relayed between allocations, by path: fast (ChannelData forwarded by the listener itself) or pion (through pion's relay code).", "path")
	def(&c.relayedBytes, counter, "turn_relayed_bytes_total",
		"Payload bytes relayed between allocations (TURN framing not counted), by path: fast or pion.", "path")
	def(&c.dropped, counter, "turn_dropped_packets_total",
		"Relayed packets dropped, by reason: policy (not a room mate), stray (reached a relay socket from outside), overflow (receiving queue full), bandwidth (sender over its limit).",
		"reason")
	def(&c.bandwidthDroppedBytes, counter, "turn_bandwidth_dropped_bytes_total",
		"Payload bytes of the packets dropped for their sender's bandwidth limit.")
	def(&c.streamConns, gauge, "turn_connections", "Open TURN connections, by transport: tcp or tls.", "transport")
	def(&c.streamClosed, counter, "turn_connections_closed_total",
		"TURN-over-TCP and -TLS connections closed by the server, by transport and reason: refused (over a cap at accept), bad_frame, allocate_timeout, write_timeout, handshake_failed (TLS).",
		"transport", "reason")

	def(&c.httpConns, gauge, "http_connections", "Open HTTP connections, lobby WebSockets included.")
	def(&c.webSockets, gauge, "http_websocket_connections", "Open lobby WebSockets.")
	def(&c.httpShed, counter, "http_connections_shed_total",
		"HTTP connections closed at the connection cap, by action: evicted (idle, to make room) or refused (none idle).", "action")

	def(&c.clusterConnected, gauge, "cluster_connected", "1 while this node is connected to the cluster's NATS, 0 while not.")
	def(&c.clusterNodes, gauge, "cluster_nodes", "Live nodes of the cluster as this node sees them, itself included.")
	def(&c.clusterWrites, counter, "cluster_directory_writes_total",
		"Room entries this node wrote to the cluster directory, by op: put (a claim or a listing) or delete (a closed or lost room).", "op")
	def(&c.clusterWriteErrors, counter, "cluster_directory_errors_total",
		"Directory writes and deletes of this node that NATS refused or that timed out.")
	def(&c.clusterNodesLost, counter, "cluster_nodes_lost_total",
		"Nodes this node called dead after they fell silent (their rooms lost), not counting nodes that left.")
	def(&c.clusterMalformed, counter, "cluster_entries_malformed_total",
		"Directory entries and cluster events read from NATS and refused as malformed.")
	def(&c.clusterLookups, counter, "cluster_directory_lookups_total",
		"Room codes this node looked up in the cluster directory (joins, spectates and share links of rooms not on this node).")
	def(&c.authTokens, counter, "auth_tokens_total",
		"Identity tokens in hello (-auth optional or required), by result: verified, or the cause of a refusal (missing, too_large, malformed, algorithm, signature, unknown_key, expired, not_yet_valid, audience, issuer, claims, unavailable).",
		"result")

	def(&c.webhookDelivered, counter, "webhook_events_delivered_total", "Room events the webhook receiver took (2xx).")
	def(&c.webhookRetries, counter, "webhook_retries_total",
		"Webhook deliveries that failed (no answer, 408, 429, 5xx) and were tried again after a backoff.")
	def(&c.webhookDropped, counter, "webhook_events_dropped_total",
		"Room events never delivered, by reason: queue_full (over -webhook-queue), too_old (still failing after 10 minutes), rejected (a 4xx answer), shutdown (still queued at the end of shutdown).",
		"reason")
	def(&c.webhookQueue, gauge, "webhook_queue_events", "Room events waiting for the webhook receiver, those in flight included.")
	def(&c.webhookQueueBytes, gauge, "webhook_queue_bytes", "Their bytes.")
	def(&c.joinHookChecks, counter, "join_hook_checks_total",
		"Creates and joins the join hook was asked about, by result: allowed, refused, failed_open (the hook failed; let through), failed_closed (the hook failed; refused with unavailable).",
		"result")
	def(&c.bansHeld, gauge, "bans", "Server-wide bans in force (the admin page's), by kind: user or ip.", "kind")
	def(&c.banRefusals, counter, "ban_refusals_total",
		"Hellos and resumes refused, and sessions ended, for a server-wide ban, by kind: user or ip.", "kind")
	return c
}

// Describe sends every family's description.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.all {
		ch <- f.desc
	}
}

// Collect reads the sources once and sends every sample.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.collectLobby(ch, c.src.Lobby())
	c.collectTURN(ch, c.src.TURN())
	if c.src.HTTP != nil {
		h := c.src.HTTP()
		c.httpConns.emit(ch, float64(h.Open))
		c.webSockets.emit(ch, float64(h.WebSockets))
		c.httpShed.emit(ch, float64(h.Evicted), "evicted")
		c.httpShed.emit(ch, float64(h.Refused), "refused")
	}
	if c.src.Cluster != nil {
		c.collectCluster(ch, c.src.Cluster())
	}
	if c.src.Auth != nil {
		st := c.src.Auth()
		c.authTokens.emit(ch, float64(st.Verified), "verified")
		for _, cause := range auth.Causes() {
			c.authTokens.emit(ch, float64(st.Refused[cause]), string(cause))
		}
	}
	if c.src.Webhook != nil {
		st := c.src.Webhook()
		c.webhookDelivered.emit(ch, float64(st.Delivered))
		c.webhookRetries.emit(ch, float64(st.Retried))
		for reason, n := range st.Dropped {
			c.webhookDropped.emit(ch, float64(n), reason)
		}
		c.webhookQueue.emit(ch, float64(st.Queued))
		c.webhookQueueBytes.emit(ch, float64(st.Bytes))
	}
	if c.src.JoinHook != nil {
		st := c.src.JoinHook()
		c.joinHookChecks.emit(ch, float64(st.Allowed), "allowed")
		c.joinHookChecks.emit(ch, float64(st.Refused), "refused")
		c.joinHookChecks.emit(ch, float64(st.FailedOpen), "failed_open")
		c.joinHookChecks.emit(ch, float64(st.FailedClosed), "failed_closed")
	}
	if c.src.Bans != nil {
		st := c.src.Bans()
		c.bansHeld.emit(ch, float64(st.Users), "user")
		c.bansHeld.emit(ch, float64(st.IPs), "ip")
		c.banRefusals.emit(ch, float64(st.RefusedUser), "user")
		c.banRefusals.emit(ch, float64(st.RefusedIP), "ip")
	}
}

func (c *collector) collectCluster(ch chan<- prometheus.Metric, st cluster.Stats) {
	connected := 0.0
	if st.Connected {
		connected = 1
	}
	c.clusterConnected.emit(ch, connected)
	c.clusterNodes.emit(ch, float64(st.Nodes))
	c.clusterWrites.emit(ch, float64(st.Writes), "put")
	c.clusterWrites.emit(ch, float64(st.Deletes), "delete")
	c.clusterWriteErrors.emit(ch, float64(st.WriteErrors))
	c.clusterNodesLost.emit(ch, float64(st.NodesLost))
	c.clusterMalformed.emit(ch, float64(st.Malformed))
	c.clusterLookups.emit(ch, float64(st.Lookups))
}

func (c *collector) collectLobby(ch chan<- prometheus.Metric, m signaling.Metrics) {
	c.sessions.emit(ch, float64(m.Sessions-m.SessionsAway), "connected")
	c.sessions.emit(ch, float64(m.SessionsAway), "away")
	c.rooms.emit(ch, float64(m.RoomsOpen), "open")
	c.rooms.emit(ch, float64(m.RoomsStarted), "started")
	c.roomsCreated.emit(ch, float64(m.RoomsCreated))
	c.roomsClosed.emit(ch, float64(m.RoomsClosed))
	c.joins.emit(ch, float64(m.Joins))
	c.hostMigrations.emit(ch, float64(m.HostMigrations))
	c.originsRefused.emit(ch, float64(m.OriginsRefused))
	c.hostChecks.emit(ch, float64(m.HostChecks))
	c.freezeVotesRefused.emit(ch, float64(m.FreezeVotesRefused))
	c.freezeMigrations.emit(ch, float64(m.FreezeMigrations))
	c.resumes.emit(ch, float64(m.Resumes), "resumed")
	c.resumes.emit(ch, float64(m.ResumesFailed), "failed")
	c.spectators.emit(ch, float64(m.Spectators))
	c.spectates.emit(ch, float64(m.Spectates))
	c.spectatorFrames.emit(ch, float64(m.SpectatorFramesIn), "in")
	c.spectatorFrames.emit(ch, float64(m.SpectatorFramesOut), "out")
	c.spectatorFrames.emit(ch, float64(m.SpectatorFramesDropped), "dropped")
	c.spectatorBufferBytes.emit(ch, float64(m.SpectatorBufferBytes))
	c.spectatorBudgetFrames.emit(ch, float64(m.SpectatorBudgetRefused), "refused")
	c.spectatorBudgetFrames.emit(ch, float64(m.SpectatorBudgetDropped), "dropped")
	for _, r := range m.Refusals {
		c.refusals.emit(ch, float64(r.Count), r.Request, r.Code)
	}
	for limit, n := range m.RateLimited {
		c.rateLimited.emit(ch, float64(n), limit)
	}
}

func (c *collector) collectTURN(ch chan<- prometheus.Metric, st turn.Stats) {
	c.allocations.emit(ch, float64(st.Allocations-st.AllocationsTCP), "udp")
	c.allocations.emit(ch, float64(st.AllocationsTCP-st.AllocationsTLS), "tcp")
	c.allocations.emit(ch, float64(st.AllocationsTLS), "tls")
	c.allocationsCreated.emit(ch, float64(st.AllocationsCreated))
	for reason, n := range st.AllocationsRefused {
		c.allocationsRefused.emit(ch, float64(n), reason)
	}
	c.channelBindsRefused.emit(ch, float64(st.ChannelBindsRefused))
	for reason, n := range st.AuthFailures {
		c.authFailures.emit(ch, float64(n), reason)
	}
	for _, p := range []struct {
		path string
		t    turn.Traffic
	}{{"fast", st.RelayedFast}, {"pion", st.RelayedOther}} {
		c.relayedPackets.emit(ch, float64(p.t.Packets), p.path)
		c.relayedBytes.emit(ch, float64(p.t.Bytes), p.path)
	}
	c.dropped.emit(ch, float64(st.DroppedWrites), "policy")
	c.dropped.emit(ch, float64(st.DroppedReads), "stray")
	c.dropped.emit(ch, float64(st.DroppedOverflow), "overflow")
	c.dropped.emit(ch, float64(st.DroppedBandwidth), "bandwidth")
	c.bandwidthDroppedBytes.emit(ch, float64(st.DroppedBandwidthBytes))
	c.streamConns.emit(ch, float64(st.TCPConns), "tcp")
	c.streamConns.emit(ch, float64(st.TLSConns), "tls")
	for _, r := range []struct {
		reason   string
		tcp, tls uint64
	}{
		{"refused", st.TCPRefused, st.TLSRefused},
		{"bad_frame", st.TCPBadFrames, st.TLSBadFrames},
		{"allocate_timeout", st.TCPAllocateTimeouts, st.TLSAllocateTimeouts},
		{"write_timeout", st.TCPWriteTimeouts, st.TLSWriteTimeouts},
	} {
		c.streamClosed.emit(ch, float64(r.tcp), "tcp", r.reason)
		c.streamClosed.emit(ch, float64(r.tls), "tls", r.reason)
	}
	c.streamClosed.emit(ch, float64(st.TLSHandshakeErrors), "tls", "handshake_failed")
}
