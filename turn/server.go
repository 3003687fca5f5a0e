// Package turn is hostrelay's embedded TURN server: pion/turn with TURN REST
// credentials bound to lobby sessions, per-session allocation quotas, and a
// peer policy under which a relay can reach only the relays of its own room.
package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"
)

// inboundMTU is the largest datagram pion's read loop accepts (we set
// ServerConfig.InboundMTU to it; it is also pion v4.1.4's default). pion
// drops any frame of this size or more, over UDP or TCP alike.
const inboundMTU = 1600

// closeTimeout bounds how long Close waits for pion to wind down allocations.
const closeTimeout = 5 * time.Second

// Server is a running TURN server. Its methods are safe for concurrent use.
type Server struct {
	cfg    Config
	log    *slog.Logger
	allocs *allocations
	pion   *pionturn.Server
	udp    []*net.UDPConn // SO_REUSEPORT group on one port, one pion read loop each
	tcp    *tcpListener
	tls    *tcpListener // TURN over TLS

	stopMu          sync.Mutex
	stopCtx         func() bool // unregisters the ctx hook; nil until New sets it
	stopRoomChanges func()      // unregisters the room-change listener; nil without one
	// stopJanitor ends the goroutine that closes ended sessions'
	// allocations; janitorDone is closed when it has.
	stopJanitor chan struct{}
	janitorDone chan struct{}
	closeOnce   sync.Once
	closeErr    error
}

// Stats is a snapshot of the server's counters, for metrics.
type Stats struct {
	// Allocations is the number of live allocations.
	Allocations int
	// DroppedWrites counts client packets the peer policy refused to relay,
	// and those addressed to a relay that closed while they were handed over.
	DroppedWrites uint64
	// DroppedReads counts packets that reached a relay socket from something
	// other than one of our relay sockets.
	DroppedReads uint64
	// DroppedOverflow counts packets the policy allowed but the receiving
	// allocation's queue (inboxMax packets) had no room for.
	DroppedOverflow uint64
	// DroppedBandwidth counts packets dropped because their sender's
	// allocation was over its bandwidth (Config.MaxBandwidth), and
	// DroppedBandwidthBytes their payload bytes.
	DroppedBandwidth      uint64
	DroppedBandwidthBytes uint64
	// TCPConns is the number of open TURN-over-TCP connections.
	TCPConns int
	// TCPRefused counts TURN-over-TCP connections closed at accept because
	// Config.MaxTCPConns or MaxTCPConnsPerIP was reached.
	TCPRefused uint64
	// TCPBadFrames counts TURN-over-TCP connections closed for sending a
	// frame that is not STUN or ChannelData of at most 1599 bytes.
	TCPBadFrames uint64
	// TCPAllocateTimeouts counts TURN-over-TCP connections closed for making
	// no allocation within Config.TCPAllocateTimeout.
	TCPAllocateTimeouts uint64
	// TCPWriteTimeouts counts TURN-over-TCP connections closed because a
	// write to them could not complete within 5 s: their client stopped
	// reading.
	TCPWriteTimeouts uint64
	// TLSConns, TLSRefused, TLSBadFrames, TLSAllocateTimeouts and
	// TLSWriteTimeouts are the same for TURN over TLS (TLSAddr), whose
	// connections count against the same caps as TCP's; a TLS connection
	// that never completes its handshake within TCPAllocateTimeout counts
	// as an allocate timeout.
	TLSConns            int
	TLSRefused          uint64
	TLSBadFrames        uint64
	TLSAllocateTimeouts uint64
	TLSWriteTimeouts    uint64
	// TLSHandshakeErrors counts TURN-over-TLS connections closed because
	// their TLS handshake failed (not TLS, no shared cipher, an unknown
	// server name).
	TLSHandshakeErrors uint64

	// AllocationsTCP is how many of Allocations are over TCP, TLS
	// included; AllocationsTLS how many of those are over TLS.
	AllocationsTCP int
	AllocationsTLS int
	// AllocationsCreated counts the allocations made since start.
	AllocationsCreated uint64
	// AllocationsRefused counts Allocates refused by a cap, by
	// AllocationRefusalReasons (every reason present, zero included).
	AllocationsRefused map[string]uint64
	// ChannelBindsRefused counts ChannelBinds refused past
	// MaxChannelsPerAllocation.
	ChannelBindsRefused uint64
	// AuthFailures counts refused credentials by AuthFailureReasons (every
	// reason present, zero included).
	AuthFailures map[string]uint64
	// RelayedFast is what the UDP listeners' read loops relayed on the
	// ChannelData fast path, straight to the receiving client; RelayedOther
	// what went through pion's relay code (Send indications, TCP clients,
	// a peer without a channel back). Packets dropped are not in either.
	RelayedFast  Traffic
	RelayedOther Traffic
}

// New validates cfg, opens the listeners and starts serving. Cancelling ctx
// later closes the server, as Close does.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("turn: %w", err)
	}
	cfg = cfg.prepared()
	if err := cfg.validate(); err != nil {
		return nil, err // already "turn: ..."
	}
	log := cfg.Logger.With("component", "turn")
	s := &Server{cfg: cfg, log: log, allocs: newAllocations(cfg, log)}

	ls, err := listen(ctx, cfg, s.newRewriter)
	if err != nil {
		return nil, err
	}
	s.udp, s.tcp, s.tls = ls.udp, ls.tcp, ls.tls
	streams := s.streamListeners()

	gen := &relayGenerator{allocs: s.allocs, bindIP: cfg.RelayBindIP, ports: cfg.RelayPorts, log: log}
	events := s.allocs.eventHandler()
	if len(streams) > 0 {
		// The first allocation on a TCP or TLS connection lifts its
		// allocate deadline; the listener that does not hold src ignores it.
		created := events.OnAllocationCreated
		events.OnAllocationCreated = func(src, dst net.Addr, proto, user, realm string, relay net.Addr, lifetime int) {
			created(src, dst, proto, user, realm, relay, lifetime)
			for _, l := range streams {
				l.allocated(src)
			}
		}
	}
	pcfg := pionturn.ServerConfig{
		Realm:         cfg.Realm,
		AuthHandler:   s.authenticate,
		QuotaHandler:  s.allocs.quota,
		EventHandler:  events,
		LoggerFactory: pionLoggerFactory{log: log},
		InboundMTU:    inboundMTU, // tcpFramer's maxTCPFrame depends on it
	}
	udpBatch := 0 // what the listeners got: 1 where the platform cannot batch
	udpGSO := false
	for _, u := range s.udp {
		if rcv, snd, ok := raiseBuffers(u); !ok {
			log.Warn("listener socket buffers below target; raise net.core.rmem_max/wmem_max",
				"want", socketBufferBytes, "rcvbuf", rcv, "sndbuf", snd)
		}
		tc := newUDPListener(u, s.allocs, s.newRewriter(), s.allocs.stats.newListener(), cfg.UDPBatch, !cfg.DisableUDPGSO)
		udpBatch = len(tc.in)
		udpGSO = segmenting(tc.io)
		pcfg.PacketConnConfigs = append(pcfg.PacketConnConfigs, pionturn.PacketConnConfig{
			PacketConn:            tc,
			RelayAddressGenerator: gen,
			PermissionHandler:     s.allocs.permit,
		})
	}
	for _, l := range streams {
		pcfg.ListenerConfigs = append(pcfg.ListenerConfigs, pionturn.ListenerConfig{
			Listener:              l,
			RelayAddressGenerator: gen,
			PermissionHandler:     s.allocs.permit,
		})
	}
	// Before any packet flows: roomChanges is read without a lock.
	if w, ok := cfg.Sessions.(RoomChangeNotifier); ok {
		s.allocs.roomChanges = true
		s.stopRoomChanges = w.OnRoomChange(s.allocs.invalidate)
	}
	s.pion, err = pionturn.NewServer(pcfg)
	if err != nil {
		if s.stopRoomChanges != nil {
			s.stopRoomChanges()
		}
		s.closeListeners()

		return nil, fmt.Errorf("turn: start: %w", err)
	}
	s.stopJanitor, s.janitorDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.janitorDone)
		s.allocs.janitor(s.stopJanitor)
	}()

	// The hook may fire (and run Close) before AfterFunc returns, so stopCtx
	// is published under a lock.
	stop := context.AfterFunc(ctx, func() { _ = s.Close() })
	s.stopMu.Lock()
	s.stopCtx = stop
	s.stopMu.Unlock()
	log.Info("listening", "udp", addrString(s.UDPAddr()), "udp_listeners", len(s.udp), "udp_batch", udpBatch, "udp_gso", udpGSO, "tcp", addrString(s.TCPAddr()),
		"tls", addrString(s.TLSAddr()),
		"public_ip", cfg.PublicIP.String(), "relay_bind_ip", cfg.RelayBindIP.String(), "relay_ports", relayPortsString(cfg.RelayPorts),
		"realm", cfg.Realm,
		"max_bandwidth", cfg.MaxBandwidth, "bandwidth_burst", cfg.BandwidthBurst,
		"max_allocations", cfg.MaxAllocations, "max_allocations_per_ip", cfg.MaxAllocationsPerIP,
		"max_allocations_per_session", cfg.MaxAllocationsPerSession,
		"max_allocation_lifetime", cfg.MaxAllocationLifetime, "max_channels", cfg.MaxChannelsPerAllocation,
		"tcp_max_conns", cfg.MaxTCPConns, "tcp_max_conns_per_ip", cfg.MaxTCPConnsPerIP,
		"tcp_allocate_timeout", cfg.TCPAllocateTimeout)

	return s, nil
}

func (s *Server) newRewriter() *requestRewriter {
	return &requestRewriter{allocs: s.allocs, authKey: s.quietAuthKey, realm: stun.NewRealm(s.cfg.Realm), lifetime: s.cfg.MaxAllocationLifetime}
}

// UDPAddr returns the TURN UDP listen address, or nil if UDP is disabled.
func (s *Server) UDPAddr() *net.UDPAddr {
	if len(s.udp) == 0 {
		return nil
	}
	a := *s.udp[0].LocalAddr().(*net.UDPAddr) //nolint:forcetypeassert // a UDP socket

	return &a
}

// TCPAddr returns the TURN TCP listen address, or nil if TCP is disabled.
func (s *Server) TCPAddr() *net.TCPAddr {
	if s.tcp == nil {
		return nil
	}
	a := *s.tcp.Addr().(*net.TCPAddr) //nolint:forcetypeassert // a TCP listener

	return &a
}

// TLSAddr returns the TURN-over-TLS listen address, or nil if TLS is disabled.
func (s *Server) TLSAddr() *net.TCPAddr {
	if s.tls == nil {
		return nil
	}
	a := *s.tls.Addr().(*net.TCPAddr) //nolint:forcetypeassert // a TCP listener

	return &a
}

// streamListeners returns the TCP and TLS listeners that are open.
func (s *Server) streamListeners() []*tcpListener {
	var ls []*tcpListener
	for _, l := range []*tcpListener{s.tcp, s.tls} {
		if l != nil {
			ls = append(ls, l)
		}
	}

	return ls
}

// streamsOpen counts the TCP and TLS connections pion has not closed yet.
func (s *Server) streamsOpen() int {
	n := 0
	for _, l := range s.streamListeners() {
		n += l.open()
	}

	return n
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	st := Stats{
		DroppedWrites:         s.allocs.droppedWrites.Load(),
		DroppedReads:          s.allocs.droppedReads.Load(),
		DroppedOverflow:       s.allocs.droppedFull.Load(),
		DroppedBandwidth:      s.allocs.droppedBandwidth.Load(),
		DroppedBandwidthBytes: s.allocs.droppedBandwidthBytes.Load(),
	}
	var stream []netip.AddrPort
	st.Allocations, stream = s.allocs.allocationCounts()
	st.AllocationsTCP = len(stream)
	if s.tls != nil {
		st.AllocationsTLS = s.tls.tracking(stream)
	}
	s.allocs.stats.fill(&st)
	if s.tcp != nil {
		st.TCPConns = s.tcp.open()
		st.TCPRefused = s.tcp.refused.Load()
		st.TCPBadFrames = s.tcp.badFrames.Load()
		st.TCPAllocateTimeouts = s.tcp.allocTimeouts.Load()
		st.TCPWriteTimeouts = s.tcp.writeTimeouts.Load()
	}
	if s.tls != nil {
		st.TLSConns = s.tls.open()
		st.TLSRefused = s.tls.refused.Load()
		st.TLSBadFrames = s.tls.badFrames.Load()
		st.TLSAllocateTimeouts = s.tls.allocTimeouts.Load()
		st.TLSWriteTimeouts = s.tls.writeTimeouts.Load()
		st.TLSHandshakeErrors = s.tls.handshakes.Load()
	}

	return st
}

// Close closes the listeners and all allocations, and waits (up to 5s) for
// them to wind down. It is idempotent: later calls return the first result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })

	return s.closeErr
}

func (s *Server) close() error {
	s.stopMu.Lock()
	if s.stopCtx != nil {
		s.stopCtx()
	}
	s.stopMu.Unlock()
	if s.stopRoomChanges != nil {
		s.stopRoomChanges()
	}
	close(s.stopJanitor)
	<-s.janitorDone
	// pion's Close closes only the listeners; its read loops then close the
	// allocations they own, but TCP and TLS connections stay open until
	// closed here.
	err := s.pion.Close()
	for _, l := range s.streamListeners() {
		l.closeConns()
	}
	s.allocs.closeRelays()

	// pion gives no completion signal; allocations are gone once their
	// OnAllocationDeleted ran, TCP read loops once they closed their conn.
	deadline := time.Now().Add(closeTimeout)
	for s.allocs.allocationCount() > 0 || s.streamsOpen() > 0 {
		if time.Now().After(deadline) {
			return errors.Join(err, ErrCloseTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
	s.log.Info("closed")
	if err != nil {
		return fmt.Errorf("turn: close: %w", err)
	}

	return nil
}

func (s *Server) closeListeners() {
	listeners{udp: s.udp, tcp: s.tcp, tls: s.tls}.close()
}

// relayPortsString is how the listening line shows RelayPorts.
func relayPortsString(r PortRange) string {
	if r.Size() == 0 {
		return "ephemeral"
	}

	return r.String()
}

func addrString(a net.Addr) string {
	switch v := a.(type) {
	case *net.UDPAddr:
		if v != nil {
			return v.String()
		}
	case *net.TCPAddr:
		if v != nil {
			return v.String()
		}
	}

	return ""
}
