package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/bans"
	"github.com/hostrelay/hostrelay/cluster"
	"github.com/hostrelay/hostrelay/internal/buildinfo"
	"github.com/hostrelay/hostrelay/metrics"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/turn"
	"github.com/hostrelay/hostrelay/webhook"
)

// Server is a running hostrelay: HTTP, lobby and TURN.
type Server struct {
	cfg     Config
	log     *slog.Logger
	hub     *signaling.Hub
	auth    *auth.Verifier // nil with -auth off
	apiKeys apiKeys
	turn    *turn.Server
	http    *http.Server
	ln      net.Listener
	conns   *connLimiter // wraps ln
	serve   chan error
	debug   *debugServer    // nil unless cfg.Debug.Addr is set
	metrics *metrics.Server // nil unless cfg.Metrics.Addr is set
	tls     *tlsSetup       // nil unless TLS is configured
	// redirect is the plain-HTTP listener sending browsers to HTTPS; nil
	// without TLS or when off.
	redirect *redirectServer

	// The admin page's: its token (empty: off), wrong tokens per client
	// network, and what it shows of the process.
	adminToken    apiKeys
	adminFailures *failureLimit
	started       time.Time
	build         buildinfo.Info

	// cluster is this node's membership of a cluster; nil without -nats.
	cluster *cluster.Cluster
	// webhooks sends room events (nil without -webhook-url); joinHook
	// rules on joins (nil without -join-hook-url). webhook.go.
	webhooks *webhook.Sender
	joinHook *webhook.JoinHook
	// bans is the server-wide ban list (bans.go), in memory without -bans-file.
	bans *bans.Store

	shutdownOnce sync.Once
	shutdownErr  error
}

// The TURN relay caches each allocation's room and relies on the hub to say
// when memberships change; it detects that by a type assertion, so a drifted
// signature would silently turn the cache off. Fail the build instead.
var _ turn.RoomChangeNotifier = (*signaling.Hub)(nil)

// Addrs are the addresses the server actually listens on (ports resolved).
type Addrs struct {
	HTTP    string // HTTPS when TLS is on
	TURNUDP string
	TURNTCP string
	TURNTLS string // empty when TURN over TLS is off
	// HTTPRedirect is the plain-HTTP listener redirecting to HTTPS; empty
	// when off.
	HTTPRedirect string
	Debug        string // empty when the debug listener is off
	Metrics      string // empty when the metrics listener is off
}

// New builds the whole graph and starts listening. Components are built in
// dependency order by hand so the wiring reads top to bottom.
func New(ctx context.Context, cfg Config, log *slog.Logger) (_ *Server, err error) {
	if err = cfg.validate(); err != nil {
		return nil, err
	}
	if len(cfg.TURN.Secret) == 0 {
		var b [32]byte
		_, _ = rand.Read(b[:])
		cfg.TURN.Secret = []byte(base64.RawStdEncoding.EncodeToString(b[:]))
		log.Warn("no TURN secret configured: generated a random one; TURN credentials will not survive a restart",
			"component", "server", "hint", "set -turn-secret or HOSTRELAY_TURN_SECRET")
	}
	s := &Server{cfg: cfg, log: log, serve: make(chan error, 1), apiKeys: newAPIKeys(cfg.HTTP.APIKeys),
		adminFailures: newFailureLimit(adminFailureEvery, adminFailureBurst), started: time.Now(), build: buildinfo.Read()}
	if cfg.HTTP.AdminToken != "" {
		s.adminToken = newAPIKeys([]string{cfg.HTTP.AdminToken})
	}
	if cfg.TURN.PublicIP.IsLoopback() {
		log.Warn("relay address is loopback: only players on this machine can connect",
			"component", "server", "public_ip", cfg.TURN.PublicIP, "hint", "set -public-ip to this host's public address")
	}

	// What New opens is closed here, newest first, if a later step fails;
	// once New returns the server, Shutdown closes it instead.
	var undo cleanups
	defer func() {
		if err != nil {
			undo.run()
		}
	}()
	// First: a bad certificate file is the operator's to fix before
	// anything listens.
	if s.tls, err = newTLS(cfg.TLS, log); err != nil {
		return nil, err
	}
	// A corrupt ban file is the operator's to fix before anyone is let in.
	if s.bans, err = openBans(cfg.Bans, log); err != nil {
		return nil, err
	}
	if cfg.Cluster.NATS != "" {
		if s.cluster, err = newCluster(cfg.Cluster, log); err != nil {
			return nil, err
		}
		// lobbyConfig plugs it in; it is started once listening (joinCluster).
	}
	// Before the hub, which reports to them from its first room.
	if err = s.startWebhooks(log); err != nil {
		return nil, err
	}
	if s.webhooks != nil {
		undo.add(func() {
			ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			cancel() // nothing was queued worth waiting for
			_ = s.webhooks.Close(ctx)
		})
	}
	// The hub needs TURN for credentials and TURN needs the hub for session
	// checks; s.iceFor breaks the cycle (TURN exists before any request).
	if s.auth, err = auth.New(cfg.Auth, log.With("component", "auth")); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	undo.add(s.auth.Close)
	if s.hub, err = signaling.NewHub(s.lobbyConfig()); err != nil {
		return nil, err
	}
	files := newFileBudget(log)
	tc := s.turnConfig(files)
	httpConns := orAuto(cfg.HTTP.MaxConns, files.httpConns)
	if files.limit > 0 && uint64(httpConns+tc.MaxTCPConns+tc.MaxAllocations+files.reserve) > files.limit { //nolint:gosec // positive
		log.Warn("connection caps exceed the open-file limit: a flood can exhaust it; lower -max-http-conns, -turn-tcp-max-conns or -turn-max-allocations-total, or raise the limit",
			"component", "server", "http_conns", httpConns, "turn_tcp_conns", tc.MaxTCPConns, "allocations", tc.MaxAllocations,
			"file_limit", files.limit)
	}
	if s.turn, err = turn.New(ctx, tc); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	undo.add(func() { _ = s.turn.Close() })

	if cfg.Debug.Addr != "" {
		if s.debug, err = startDebug(ctx, cfg.Debug.Addr, log); err != nil {
			return nil, err
		}
		undo.add(func() { _ = s.debug.close() })
	}
	var lc net.ListenConfig
	if s.ln, err = lc.Listen(ctx, "tcp", cfg.HTTP.Addr); err != nil {
		return nil, fmt.Errorf("server: listen %s: %w", cfg.HTTP.Addr, err)
	}
	undo.add(func() { _ = s.ln.Close() })
	if s.tls != nil {
		if addr := cfg.TLS.redirectAddr(cfg.HTTP.Addr); addr != "" {
			h := s.tls.redirectHandler(s.ln.Addr().(*net.TCPAddr).Port) //nolint:forcetypeassert // a TCP listener
			if s.redirect, err = startRedirect(ctx, addr, h, cfg.HTTP.TrustedProxies, log); err != nil {
				return nil, err
			}
			undo.add(func() { _ = s.redirect.shutdown(context.WithoutCancel(ctx)) })
		}
	}
	s.conns = newConnLimiter(s.ln, connCaps{listener: "http", max: httpConns,
		perAddr: addrShare(httpConns, cfg.Lobby.MaxConnsPerIP+pageConns), exempt: cfg.HTTP.TrustedProxies,
		refuse: s.hub.RefuseAtAccept}, log)
	// After conns, which the metrics read.
	if s.metrics, err = s.startMetrics(ctx, cfg.Metrics.Addr, log); err != nil {
		return nil, err
	}
	undo.add(func() { _ = s.metrics.Close() })
	scheme := "http"
	if s.tls != nil {
		scheme = "https"
	}
	var publicURL string
	if s.cluster != nil {
		// Joining may fail after the node started (its Start).
		undo.add(s.cluster.Kill)
		if publicURL, err = s.joinCluster(ctx, scheme); err != nil {
			return nil, err
		}
		// One ban list for every node: a ban from another node's admin
		// page ends the sessions it covers here too.
		if err = s.cluster.ShareBans(ctx, s.bans, func() { s.hub.DropBanned() }); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	// Hijacking clears the deadlines these set, so lobby WebSockets live on
	// past them (TestHTTPTimeoutsSpareWebSockets).
	s.http = &http.Server{
		Handler:           newHTTP(s),
		ReadHeaderTimeout: min(maxHeaderTime, cfg.HTTP.ReadTimeout),
		ReadTimeout:       cfg.HTTP.ReadTimeout,
		WriteTimeout:      cfg.HTTP.WriteTimeout,
		IdleTimeout:       cfg.HTTP.IdleTimeout,
		ConnState:         s.conns.connState,
		ErrorLog:          httpErrorLog(log),
	}
	if s.tls != nil {
		s.http.TLSConfig = s.tls.httpsConfig()
		// Not nil: no HTTP/2 (see httpsConfig).
		s.http.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		go func() { s.serve <- s.http.ServeTLS(s.conns, "", "") }()
	} else {
		go func() { s.serve <- s.http.Serve(s.conns) }()
	}

	a := s.Addrs()
	attrs := []any{"component", "server", "http", a.HTTP, "scheme", scheme, "turn_udp", a.TURNUDP, "turn_tcp", a.TURNTCP,
		"public_ip", cfg.TURN.PublicIP, "version", s.build.Version, "commit", s.build.Commit}
	if a.TURNTLS != "" {
		attrs = append(attrs, "turn_tls", a.TURNTLS)
	}
	if a.HTTPRedirect != "" {
		attrs = append(attrs, "http_redirect", a.HTTPRedirect)
	}
	if a.Debug != "" {
		attrs = append(attrs, "debug", a.Debug)
	}
	if a.Metrics != "" {
		attrs = append(attrs, "metrics", a.Metrics)
	}
	if s.cluster != nil {
		node, region := s.cluster.Self()
		attrs = append(attrs, "node", node, "region", region, "public_url", publicURL)
	}
	log.Info("listening", attrs...)
	return s, nil
}

// lobbyConfig is the lobby section with what the server plugs in: TURN
// credentials (iceFor), the logger, the cluster and the webhooks. The message burst is
// twice the rate, as -messages-per-second says, so a client catches up after
// a stall (a resume replays its queue) without tripping the limit.
func (s *Server) lobbyConfig() signaling.Config {
	c := s.cfg.Lobby
	c.ICE, c.Logger, c.Auth, c.Bans = s.iceFor, s.log, s.auth, s.bans
	c.MessageBurst = int(2 * c.MessagesPerSecond)
	if s.cluster != nil {
		c.Cluster = s.cluster
	}
	// Typed nils would not be nil interfaces.
	if s.webhooks != nil {
		c.Events = s.webhooks
	}
	if s.joinHook != nil {
		c.JoinCheck = s.joinHook
	}
	return c
}

// turnConfig is the TURN section with what the server derives and plugs
// in: the caps left Auto (from the open-file budget; an allocation is a
// relay socket), the burst, TURN over TLS (with the TLS section's
// certificate, if TLS is on), the lobby's session checks and the logger.
func (s *Server) turnConfig(files fileBudget) turn.Config {
	c := s.cfg.TURN
	c.MaxAllocations = orAuto(c.MaxAllocations, files.allocations)
	c.MaxTCPConns = orAuto(c.MaxTCPConns, files.turnTCP)
	c.BandwidthBurst = bandwidthBurst(c)
	c.TLSAddr = s.cfg.turnTLSAddr()
	if s.tls != nil {
		c.TLS = s.tls.turnConfig()
	}
	c.Sessions, c.Logger = s.hub, s.log
	return c
}

// cleanups are closes to run newest first.
type cleanups []func()

func (c *cleanups) add(f func()) { *c = append(*c, f) }

func (c cleanups) run() {
	for _, f := range slices.Backward(c) {
		f()
	}
}

// maxHeaderTime bounds reading a request header: a client sends it at once.
const maxHeaderTime = 10 * time.Second

// pageConns is what one address may hold beside its lobby WebSockets (up to
// -max-conns-per-ip): a browser loads a page over up to 6 connections. So
// at a small -max-http-conns the lobby's 429, not a closed connection, is
// what a crowd behind one NAT meets first.
const pageConns = 8

// orAuto is v, or derived where v is Auto.
func orAuto(v, derived int) int {
	if v == Auto {
		return derived
	}
	return v
}

// Addrs reports the bound addresses.
func (s *Server) Addrs() Addrs {
	a := Addrs{HTTP: s.ln.Addr().String(), TURNUDP: s.turn.UDPAddr().String(), TURNTCP: s.turn.TCPAddr().String(),
		HTTPRedirect: s.redirect.addr(), Debug: s.debug.addr(), Metrics: s.metrics.Addr()}
	if t := s.turn.TLSAddr(); t != nil {
		a.TURNTLS = t.String()
	}
	return a
}

// Hub exposes the lobby for in-process tests and operational endpoints.
func (s *Server) Hub() *signaling.Hub { return s.hub }

// iceFor issues a session's TURN credentials and the URLs to use them on.
func (s *Server) iceFor(sessionID, requestHost string) protocol.ICE {
	host := s.cfg.ICE.PublicHost
	if host == "" {
		host = hostOnly(requestHost)
	}
	if host == "" {
		host = s.cfg.TURN.PublicIP.String()
	}
	c := s.turn.Credentials(sessionID, time.Now())
	return protocol.ICE{
		Servers: []protocol.ICEServer{{
			URLs:       s.turnURLs(host),
			Username:   c.Username,
			Credential: c.Password,
		}},
		TTL: int(c.TTL / time.Second),
	}
}

// turnURLs are the TURN URLs offered (-turn-offer) of those listening,
// always UDP, then TCP, then TLS: TLS costs the server most and is there
// for networks that let nothing else out. A turns: URL's host must match
// the certificate.
func (s *Server) turnURLs(host string) []string {
	urls := make([]string, 0, len(turnTransports))
	for _, t := range turnTransports {
		if !slices.Contains(s.cfg.ICE.Offer, t) {
			continue
		}
		switch a := s.turnAddr(t); {
		case a == nil:
		case t == "udp":
			urls = append(urls, "turn:"+net.JoinHostPort(host, strconv.Itoa(a.Port))+"?transport=udp")
		case t == "tcp":
			urls = append(urls, "turn:"+net.JoinHostPort(host, strconv.Itoa(a.Port))+"?transport=tcp")
		default:
			urls = append(urls, "turns:"+net.JoinHostPort(host, strconv.Itoa(a.Port))+"?transport=tcp")
		}
	}
	return urls
}

// turnAddr is the listening address of one TURN transport, nil if off.
func (s *Server) turnAddr(transport string) *net.TCPAddr {
	switch transport {
	case "udp":
		if a := s.turn.UDPAddr(); a != nil {
			return &net.TCPAddr{IP: a.IP, Port: a.Port}
		}
	case "tcp":
		return s.turn.TCPAddr()
	case "tls":
		return s.turn.TLSAddr()
	}
	return nil
}

// Shutdown stops accepting, tells every lobby client the server is going
// away, waits for them within ctx, then closes TURN. Plain HTTP requests
// still running are waited for beside the lobby, at most httpDrainBound,
// then their connections are closed. A second call waits for the first and
// returns its result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() { s.shutdownErr = s.shutdown(ctx) })
	return s.shutdownErr
}

func (s *Server) shutdown(ctx context.Context) error {
	s.log.Info("shutting down", "component", "server")
	var errs []error
	// The HTTP listeners drain beside the lobby, not before it: one request
	// trickling its body used to hold http.Server.Shutdown for the whole
	// grace, so the lobby was never told (issue 24, finding 6).
	httpDone, redirectDone := make(chan error, 1), make(chan error, 1)
	go func() { httpDone <- drainHTTP(ctx, s.http, "http", s.log) }()
	go func() { redirectDone <- s.redirect.shutdown(ctx) }()
	// Shutdown closes the listener before it waits for anything: past this
	// no new lobby session can start, so every one is told below.
	select {
	case <-s.conns.done:
	case <-ctx.Done():
	}
	// Leave the cluster before the lobby closes (which may wait ShutdownGrace
	// for slow clients): no room here outlives a shutdown, so the other
	// nodes drop them from their lists and stop sending players here now,
	// not after DeadAfter.
	if s.cluster != nil {
		if err := s.cluster.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.hub.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	// After the lobby, whose last sessions' leaving is reported; beside
	// the HTTP drain and before TURN, within the grace.
	s.flushWebhooks(ctx)
	if err := <-httpDone; err != nil {
		errs = append(errs, fmt.Errorf("http: %w", err))
	}
	if err := <-redirectDone; err != nil {
		errs = append(errs, err)
	}
	if err := s.turn.Close(); err != nil {
		errs = append(errs, fmt.Errorf("turn: %w", err))
	}
	s.auth.Close()
	if err := s.debug.close(); err != nil {
		errs = append(errs, err)
	}
	if err := s.metrics.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := <-s.serve; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("http serve: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	s.log.Info("stopped", "component", "server")
	return nil
}

// httpDrainBound is how long shutdown waits for plain HTTP requests in
// progress before closing their connections. Pages, /healthz and the API
// answer in milliseconds, so a request still running after it is stalled
// or hostile, and cutting it short is no failure; lobby WebSockets, which
// do need time, are hijacked and drained by the hub within -shutdown-grace.
const httpDrainBound = 3 * time.Second

// drainHTTP shuts srv down, closing the connections still in a request
// after httpDrainBound (or when ctx ends first); listener names it in the
// log.
func drainHTTP(ctx context.Context, srv *http.Server, listener string, log *slog.Logger) error {
	dctx, cancel := context.WithTimeout(ctx, httpDrainBound)
	defer cancel()
	err := srv.Shutdown(dctx)
	if err == nil {
		return nil
	}
	if dctx.Err() == nil {
		return err // closing the listener failed
	}
	log.Warn("HTTP requests still running at shutdown: closing their connections",
		"component", "server", "listener", listener, "waited", httpDrainBound)
	return srv.Close()
}

// Run serves until ctx ends, then shuts down within cfg.ShutdownGrace.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	s, err := New(ctx, cfg, log)
	if err != nil {
		return err
	}
	return s.serveUntil(ctx)
}

// serveUntil is Run once the server is listening.
func (s *Server) serveUntil(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case err := <-s.serve:
		s.serve <- err // Shutdown reads it
		s.log.Error("http server stopped", "component", "server", "err", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownGrace)
	defer cancel()
	return s.Shutdown(sctx)
}
