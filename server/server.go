package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/turn"
)

// Server is a running hostrelay: HTTP, lobby and TURN.
type Server struct {
	cfg     Config
	log     *slog.Logger
	hub     *signaling.Hub
	apiKeys apiKeys
	turn    *turn.Server
	http    *http.Server
	ln      net.Listener
	conns   *connLimiter // wraps ln
	serve   chan error
	debug   *debugServer // nil unless cfg.Debug.Addr is set

	// The admin page's: its token (empty: off), wrong tokens per client
	// network, and what it shows of the process.
	adminToken    apiKeys
	adminFailures *failureLimit
	started       time.Time
	build         buildInfo
}

// The TURN relay caches each allocation's room and relies on the hub to say
// when memberships change; it detects that by a type assertion, so a drifted
// signature would silently turn the cache off. Fail the build instead.
var _ turn.RoomChangeNotifier = (*signaling.Hub)(nil)

// Addrs are the addresses the server actually listens on (ports resolved).
type Addrs struct {
	HTTP    string
	TURNUDP string
	TURNTCP string
	Debug   string // empty when the debug listener is off
}

// New builds the whole graph and starts listening. Components are built in
// dependency order by hand so the wiring reads top to bottom.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.TURN.Secret == "" {
		var b [32]byte
		_, _ = rand.Read(b[:])
		cfg.TURN.Secret = base64.RawStdEncoding.EncodeToString(b[:])
		log.Warn("no TURN secret configured: generated a random one; TURN credentials will not survive a restart",
			"component", "server", "hint", "set -turn-secret or HOSTRELAY_TURN_SECRET")
	}
	s := &Server{cfg: cfg, log: log, serve: make(chan error, 1), apiKeys: newAPIKeys(cfg.HTTP.APIKeys),
		adminFailures: newFailureLimit(adminFailureEvery, adminFailureBurst), started: time.Now(), build: readBuildInfo()}
	if cfg.HTTP.AdminToken != "" {
		s.adminToken = newAPIKeys([]string{cfg.HTTP.AdminToken})
	}
	if cfg.TURN.PublicIP.IsLoopback() {
		log.Warn("relay address is loopback: only players on this machine can connect",
			"component", "server", "public_ip", cfg.TURN.PublicIP, "hint", "set -public-ip to this host's public address")
	}

	var err error
	// The hub needs TURN for credentials and TURN needs the hub for session
	// checks; the closure breaks the cycle (TURN exists before any request).
	lobby := cfg.Lobby
	hc := signaling.DefaultConfig()
	hc.OriginPatterns = lobby.AllowedOrigins
	hc.ICE = s.iceFor
	hc.Grace = lobby.SeatGrace
	hc.MaxConnsPerIP = lobby.MaxConnsPerIP
	hc.JoinsPerMinute = lobby.JoinsPerMinute
	hc.RoomsPerMinute = lobby.RoomsPerMinute
	hc.MaxRooms = lobby.MaxRooms
	// The burst lets a client catch up after a stall (a resume replays its
	// queue) without tripping the limit.
	hc.MessagesPerSecond = lobby.MessagesPerSecond
	hc.MessageBurst = int(2 * lobby.MessagesPerSecond)
	hc.SignalsPerSecond = lobby.SignalsPerSecond
	hc.SignalBurst = lobby.SignalBurst
	hc.MaxFrame = int(lobby.MaxFrame)
	hc.MaxSDP = int(lobby.MaxSDP)
	hc.MaxCandidate = int(lobby.MaxCandidate)
	hc.MaxChatText = lobby.MaxChatLength
	hc.MaxRoomName = lobby.MaxRoomName
	hc.Logger = log
	s.hub, err = signaling.NewHub(hc)
	if err != nil {
		return nil, err
	}
	files := newFileBudget(log)
	httpConns, turnTCPConns := orAuto(cfg.HTTP.MaxConns, files.httpConns), orAuto(cfg.TURN.TCPMaxConns, files.turnTCP)
	allocations := orAuto(cfg.TURN.MaxAllocations, files.allocations)                              // one relay socket each
	if files.limit > 0 && uint64(httpConns+turnTCPConns+allocations+files.reserve) > files.limit { //nolint:gosec // positive
		log.Warn("connection caps exceed the open-file limit: a flood can exhaust it; lower -max-http-conns, -turn-tcp-max-conns or -turn-max-allocations-total, or raise the limit",
			"component", "server", "http_conns", httpConns, "turn_tcp_conns", turnTCPConns, "allocations", allocations,
			"file_limit", files.limit)
	}
	relay := cfg.TURN
	tc := turn.DefaultConfig()
	tc.Secret = []byte(relay.Secret)
	tc.PublicIP = net.IP(relay.PublicIP.AsSlice())
	tc.UDPAddr, tc.TCPAddr = relay.UDPAddr, relay.TCPAddr
	tc.CredentialTTL = relay.CredentialTTL
	tc.MaxAllocationsPerSession = relay.MaxAllocationsPerSession
	tc.MaxAllocationsPerIP = relay.MaxAllocationsPerIP
	tc.MaxAllocations = allocations
	tc.MaxAllocationLifetime = relay.MaxLifetime
	tc.MaxChannelsPerAllocation = relay.MaxChannels
	tc.MaxBandwidth, tc.BandwidthBurst = relay.turnBandwidth()
	tc.TCPAllocateTimeout = relay.TCPAllocateTimeout
	tc.MaxTCPConns = turnTCPConns
	tc.MaxTCPConnsPerIP = relay.TCPConnsPerIP
	tc.Sessions = s.hub
	tc.Logger = log
	s.turn, err = turn.New(ctx, tc)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}

	if cfg.Debug.Addr != "" {
		if s.debug, err = startDebug(ctx, cfg.Debug.Addr, log); err != nil {
			_ = s.turn.Close()
			return nil, err
		}
	}
	var lc net.ListenConfig
	s.ln, err = lc.Listen(ctx, "tcp", cfg.HTTP.Addr)
	if err != nil {
		_ = s.debug.close()
		_ = s.turn.Close()
		return nil, fmt.Errorf("server: listen %s: %w", cfg.HTTP.Addr, err)
	}
	s.conns = newConnLimiter(s.ln, httpConns, log)
	// Hijacking clears the deadlines these set, so lobby WebSockets live on
	// past them (TestHTTPTimeoutsSpareWebSockets).
	s.http = &http.Server{
		Handler:           newHTTP(s),
		ReadHeaderTimeout: min(maxHeaderTime, cfg.HTTP.ReadTimeout),
		ReadTimeout:       cfg.HTTP.ReadTimeout,
		WriteTimeout:      cfg.HTTP.WriteTimeout,
		IdleTimeout:       cfg.HTTP.IdleTimeout,
		ConnState:         s.conns.connState,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() { s.serve <- s.http.Serve(s.conns) }()

	a := s.Addrs()
	attrs := []any{"component", "server", "http", a.HTTP, "turn_udp", a.TURNUDP, "turn_tcp", a.TURNTCP, "public_ip", cfg.TURN.PublicIP}
	if a.Debug != "" {
		attrs = append(attrs, "debug", a.Debug)
	}
	log.Info("listening", attrs...)
	return s, nil
}

// maxHeaderTime bounds reading a request header: a client sends it at once.
const maxHeaderTime = 10 * time.Second

// orAuto is v, or derived where v is Auto.
func orAuto(v, derived int) int {
	if v == Auto {
		return derived
	}
	return v
}

// Addrs reports the bound addresses.
func (s *Server) Addrs() Addrs {
	return Addrs{HTTP: s.ln.Addr().String(), TURNUDP: s.turn.UDPAddr().String(), TURNTCP: s.turn.TCPAddr().String(),
		Debug: s.debug.addr()}
}

// Hub exposes the lobby for in-process tests and operational endpoints.
func (s *Server) Hub() *signaling.Hub { return s.hub }

// iceFor issues a session's TURN credentials and the URLs to use them on.
func (s *Server) iceFor(sessionID, requestHost string) protocol.ICE {
	host := s.cfg.TURN.PublicHost
	if host == "" {
		host = hostOnly(requestHost)
	}
	if host == "" {
		host = s.cfg.TURN.PublicIP.String()
	}
	c := s.turn.Credentials(sessionID, time.Now())
	port := strconv.Itoa(s.turn.UDPAddr().Port)
	tcpPort := strconv.Itoa(s.turn.TCPAddr().Port)
	return protocol.ICE{
		Servers: []protocol.ICEServer{{
			URLs: []string{
				"turn:" + net.JoinHostPort(host, port) + "?transport=udp",
				"turn:" + net.JoinHostPort(host, tcpPort) + "?transport=tcp",
			},
			Username:   c.Username,
			Credential: c.Password,
		}},
		TTL: int(c.TTL / time.Second),
	}
}

// Shutdown stops accepting, tells every lobby client the server is going
// away, waits for them within ctx, then closes TURN.
func (s *Server) Shutdown(ctx context.Context) error {
	s.log.Info("shutting down", "component", "server")
	var errs []error
	if err := s.http.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("http: %w", err))
	}
	if err := s.hub.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.turn.Close(); err != nil {
		errs = append(errs, fmt.Errorf("turn: %w", err))
	}
	if err := s.debug.close(); err != nil {
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

// Run serves until ctx ends, then shuts down within cfg.ShutdownGrace.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	s, err := New(ctx, cfg, log)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-s.serve:
		s.serve <- err // Shutdown reads it
		log.Error("http server stopped", "component", "server", "err", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace)
	defer cancel()
	return s.Shutdown(sctx)
}
