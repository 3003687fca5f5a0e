package server

import (
	"context"
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
	debug   *debugServer // nil unless cfg.DebugAddr is set
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
	s := &Server{cfg: cfg, log: log, serve: make(chan error, 1), apiKeys: newAPIKeys(cfg.APIKeys)}
	if cfg.secretGenerated {
		log.Warn("no TURN secret configured: generated a random one; TURN credentials will not survive a restart",
			"component", "server", "hint", "set -turn-secret or HOSTRELAY_TURN_SECRET")
	}
	if cfg.PublicIP.IsLoopback() {
		log.Warn("relay address is loopback: only players on this machine can connect",
			"component", "server", "public_ip", cfg.PublicIP, "hint", "set -public-ip to this host's public address")
	}

	var err error
	// The hub needs TURN for credentials and TURN needs the hub for session
	// checks; the closure breaks the cycle (TURN exists before any request).
	hc := signaling.DefaultConfig()
	hc.OriginPatterns = cfg.AllowedOrigins
	hc.ICE = s.iceFor
	hc.Grace = cfg.SeatGrace
	hc.MaxConnsPerIP = cfg.MaxConnsPerIP
	hc.JoinsPerMinute = cfg.JoinsPerMinute
	hc.RoomsPerMinute = cfg.RoomsPerMinute
	hc.MaxRooms = cfg.MaxRooms
	// The burst lets a client catch up after a stall (a resume replays its
	// queue) without tripping the limit.
	hc.MessagesPerSecond = cfg.MessagesPerSecond
	hc.MessageBurst = int(2 * cfg.MessagesPerSecond)
	hc.SignalsPerSecond = cfg.SignalsPerSecond
	hc.SignalBurst = cfg.SignalBurst
	hc.MaxFrame = int(cfg.MaxFrame)
	hc.MaxSDP = int(cfg.MaxSDP)
	hc.MaxCandidate = int(cfg.MaxCandidate)
	hc.MaxChatText = cfg.MaxChatLength
	hc.MaxRoomName = cfg.MaxRoomName
	hc.Logger = log
	s.hub, err = signaling.NewHub(hc)
	if err != nil {
		return nil, err
	}
	files := newFileBudget(log)
	httpConns, turnTCPConns := orDefault(cfg.MaxHTTPConns, files.httpConns), orDefault(cfg.TURNTCPMaxConns, files.turnTCP)
	allocations := orDefault(cfg.TURNMaxAllocsTotal, files.allocations)                            // one relay socket each
	if files.limit > 0 && uint64(httpConns+turnTCPConns+allocations+files.reserve) > files.limit { //nolint:gosec // positive
		log.Warn("connection caps exceed the open-file limit: a flood can exhaust it; lower -max-http-conns, -turn-tcp-max-conns or -turn-max-allocations-total, or raise the limit",
			"component", "server", "http_conns", httpConns, "turn_tcp_conns", turnTCPConns, "allocations", allocations,
			"file_limit", files.limit)
	}
	maxBandwidth, burst := cfg.turnBandwidth()
	tc := turn.DefaultConfig()
	tc.Secret = []byte(cfg.TURNSecret)
	tc.PublicIP = net.IP(cfg.PublicIP.AsSlice())
	tc.UDPAddr, tc.TCPAddr = cfg.TURNUDPAddr, cfg.TURNTCPAddr
	tc.CredentialTTL = cfg.TURNTTL
	tc.MaxAllocationsPerSession = cfg.TURNMaxAllocs
	tc.MaxAllocationsPerIP = cfg.TURNAllocsPerIP
	tc.MaxAllocations = allocations
	tc.MaxAllocationLifetime = cfg.TURNMaxLifetime
	tc.MaxChannelsPerAllocation = cfg.TURNMaxChannels
	tc.MaxBandwidth, tc.BandwidthBurst = maxBandwidth, burst
	tc.TCPAllocateTimeout = cfg.TURNTCPAllocateTimeout
	tc.MaxTCPConns = turnTCPConns
	tc.MaxTCPConnsPerIP = cfg.TURNTCPConnsPerIP
	tc.Sessions = s.hub
	tc.Logger = log
	s.turn, err = turn.New(ctx, tc)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}

	if cfg.DebugAddr != "" {
		if s.debug, err = startDebug(ctx, cfg.DebugAddr, log); err != nil {
			_ = s.turn.Close()
			return nil, err
		}
	}
	var lc net.ListenConfig
	s.ln, err = lc.Listen(ctx, "tcp", cfg.HTTPAddr)
	if err != nil {
		_ = s.debug.close()
		_ = s.turn.Close()
		return nil, fmt.Errorf("server: listen %s: %w", cfg.HTTPAddr, err)
	}
	s.conns = newConnLimiter(s.ln, httpConns, log)
	// Hijacking clears the deadlines these set, so lobby WebSockets live on
	// past them (TestHTTPTimeoutsSpareWebSockets).
	s.http = &http.Server{
		Handler:           newHTTP(s),
		ReadHeaderTimeout: min(maxHeaderTime, cfg.HTTPReadTimeout),
		ReadTimeout:       cfg.HTTPReadTimeout,
		WriteTimeout:      cfg.HTTPWriteTimeout,
		IdleTimeout:       cfg.HTTPIdleTimeout,
		ConnState:         s.conns.connState,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() { s.serve <- s.http.Serve(s.conns) }()

	a := s.Addrs()
	attrs := []any{"component", "server", "http", a.HTTP, "turn_udp", a.TURNUDP, "turn_tcp", a.TURNTCP, "public_ip", cfg.PublicIP}
	if a.Debug != "" {
		attrs = append(attrs, "debug", a.Debug)
	}
	log.Info("listening", attrs...)
	return s, nil
}

// maxHeaderTime bounds reading a request header: a client sends it at once.
const maxHeaderTime = 10 * time.Second

// orDefault is v, or def where v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
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
	host := s.cfg.PublicHost
	if host == "" {
		host = hostOnly(requestHost)
	}
	if host == "" {
		host = s.cfg.PublicIP.String()
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
