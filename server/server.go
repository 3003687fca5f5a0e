package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
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
	tls     *tlsSetup    // nil unless TLS is configured
	// redirect is the plain-HTTP listener sending browsers to HTTPS; nil
	// without TLS or when off.
	redirect *redirectServer
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
	// First: a bad certificate file is the operator's to fix before
	// anything listens.
	if s.tls, err = newTLS(cfg.TLS, log); err != nil {
		return nil, err
	}
	// The hub needs TURN for credentials and TURN needs the hub for session
	// checks; the closure breaks the cycle (TURN exists before any request).
	s.hub, err = signaling.NewHub(signaling.Config{
		OriginPatterns: cfg.AllowedOrigins,
		ICE:            s.iceFor,
		Grace:          seatGrace(cfg.SeatGrace),
		MaxConnsPerIP:  cfg.MaxConnsPerIP,
		JoinsPerMinute: cfg.JoinsPerMinute,
		RoomsPerMinute: cfg.RoomsPerMinute,
		MaxRooms:       cfg.MaxRooms,
		// The burst lets a client catch up after a stall (a resume replays
		// its queue) without tripping the limit.
		MessagesPerSecond: cfg.MessagesPerSecond,
		MessageBurst:      int(2 * cfg.MessagesPerSecond),
		SignalsPerSecond:  cfg.SignalsPerSecond,
		SignalBurst:       cfg.SignalBurst,
		MaxFrame:          int(cfg.MaxFrame),
		MaxSDP:            int(cfg.MaxSDP),
		MaxCandidate:      int(cfg.MaxCandidate),
		MaxChatText:       cfg.MaxChatLength,
		MaxRoomName:       cfg.MaxRoomName,
		Logger:            log,
	})
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
	var turnTLSAddr string
	var turnTLS *tls.Config
	if s.tls != nil {
		turnTLSAddr, turnTLS = cfg.TLS.turnAddr(), s.tls.turnConfig()
	}
	s.turn, err = turn.New(ctx, turn.Config{
		Secret:                   []byte(cfg.TURNSecret),
		PublicIP:                 net.IP(cfg.PublicIP.AsSlice()),
		UDPAddr:                  cfg.TURNUDPAddr,
		TCPAddr:                  cfg.TURNTCPAddr,
		TLSAddr:                  turnTLSAddr,
		TLS:                      turnTLS,
		CredentialTTL:            cfg.TURNTTL,
		MaxAllocationsPerSession: cfg.TURNMaxAllocs,
		MaxAllocationsPerIP:      cfg.TURNAllocsPerIP,
		MaxAllocations:           allocations,
		MaxAllocationLifetime:    cfg.TURNMaxLifetime,
		MaxChannelsPerAllocation: cfg.TURNMaxChannels,
		MaxBandwidth:             maxBandwidth,
		BandwidthBurst:           burst,
		TCPAllocateTimeout:       cfg.TURNTCPAllocateTimeout,
		MaxTCPConns:              turnTCPConns,
		MaxTCPConnsPerIP:         cfg.TURNTCPConnsPerIP,
		Sessions:                 s.hub,
		Logger:                   log,
	})
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
	if s.tls != nil {
		if addr := cfg.TLS.redirectAddr(cfg.HTTPAddr); addr != "" {
			h := s.tls.redirectHandler(s.ln.Addr().(*net.TCPAddr).Port) //nolint:forcetypeassert // a TCP listener
			if s.redirect, err = startRedirect(ctx, addr, h, log); err != nil {
				_ = s.ln.Close()
				_ = s.debug.close()
				_ = s.turn.Close()
				return nil, err
			}
		}
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
		ErrorLog:          httpErrorLog(log),
	}
	scheme := "http"
	if s.tls != nil {
		scheme = "https"
		s.http.TLSConfig = s.tls.httpsConfig()
		// Not nil: no HTTP/2 (see httpsConfig).
		s.http.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		go func() { s.serve <- s.http.ServeTLS(s.conns, "", "") }()
	} else {
		go func() { s.serve <- s.http.Serve(s.conns) }()
	}

	a := s.Addrs()
	attrs := []any{"component", "server", "http", a.HTTP, "scheme", scheme, "turn_udp", a.TURNUDP, "turn_tcp", a.TURNTCP,
		"public_ip", cfg.PublicIP}
	if a.TURNTLS != "" {
		attrs = append(attrs, "turn_tls", a.TURNTLS)
	}
	if a.HTTPRedirect != "" {
		attrs = append(attrs, "http_redirect", a.HTTPRedirect)
	}
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

// seatGrace maps the operator's 0 ("do not hold seats") to the hub's
// negative, since the hub's zero means its default.
func seatGrace(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// Addrs reports the bound addresses.
func (s *Server) Addrs() Addrs {
	a := Addrs{HTTP: s.ln.Addr().String(), TURNUDP: s.turn.UDPAddr().String(), TURNTCP: s.turn.TCPAddr().String(),
		HTTPRedirect: s.redirect.addr(), Debug: s.debug.addr()}
	if t := s.turn.TLSAddr(); t != nil {
		a.TURNTLS = t.String()
	}
	return a
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
		if !slices.Contains(s.cfg.TURNOffer, t) {
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
	if err := s.redirect.shutdown(ctx); err != nil {
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
