package turn

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// registry is the peer policy: it knows every relay socket this server handed
// out, which session owns it, and how many allocations each session holds.
// turn is never an open relay because every relayed packet is checked here:
// the only destinations allowed are live relay sockets of the same room.
//
// Relays are keyed by port alone: all of them share one advertised IP
// (PublicIP) and one bind IP, so the port identifies the socket.
type registry struct {
	sessions      Sessions
	log           *slog.Logger
	maxPerSession int
	// public is the advertised relay IP in its 4-byte form. Comparing
	// netip.Addr values (never Unmap) keeps ::ffff:a.b.c.d from matching it.
	public netip.Addr
	// local is where relay sockets are reachable from this host. Relay to
	// relay traffic is sent there rather than to public, so it never leaves
	// the host and needs no NAT hairpin when PublicIP is not on an interface.
	local netip.Addr

	// watching is set when Sessions reports room changes (RoomWatcher), so
	// rooms can be cached per allocation.
	watching bool

	droppedWrites atomic.Uint64
	droppedReads  atomic.Uint64
	droppedFull   atomic.Uint64 // allowed packets dropped because the peer's inbox was full
	lastDropLog   atomic.Int64  // unix nanoseconds of the last drop logged

	// bw is the per-allocation bandwidth limit; read-only after newRegistry.
	bw                    bandwidthPolicy
	droppedBandwidth      atomic.Uint64
	droppedBandwidthBytes atomic.Uint64

	mu         sync.RWMutex
	closed     bool
	pending    map[uint16]*relayConn         // sockets whose allocation is not created yet
	relays     map[uint16]*relayConn         // sockets of live allocations
	clients    map[netip.AddrPort]*relayConn // live allocations of UDP clients, by client address
	bySession  map[string][]*relayConn       // live allocations by session, for invalidate
	allocs     map[allocKey]allocRecord
	perSession map[string]int
}

// allocKey names an allocation by its client transport address, the part of
// the 5-tuple that pion's AuthHandler also sees.
type allocKey struct {
	tcp    bool
	client netip.AddrPort
}

type allocRecord struct {
	session  string
	username string
	relay    *relayConn // nil if the socket closed before the allocation was reported
}

func newRegistry(cfg Config, log *slog.Logger) *registry {
	public, _ := netip.AddrFromSlice(cfg.PublicIP.To4())
	local, _ := netip.AddrFromSlice(cfg.RelayBindIP.To4())
	if local.IsUnspecified() {
		local = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}

	return &registry{
		sessions:      cfg.Sessions,
		log:           log,
		maxPerSession: cfg.MaxAllocationsPerSession,
		bw:            newBandwidthPolicy(cfg.MaxBandwidth, cfg.BandwidthBurst),
		public:        public,
		local:         local,
		pending:       make(map[uint16]*relayConn),
		relays:        make(map[uint16]*relayConn),
		clients:       make(map[netip.AddrPort]*relayConn),
		bySession:     make(map[string][]*relayConn),
		allocs:        make(map[allocKey]allocRecord),
		perSession:    make(map[string]int),
	}
}

func clientKey(addr net.Addr) (allocKey, bool) {
	switch a := addr.(type) {
	case *net.UDPAddr:
		ap := a.AddrPort()

		return allocKey{client: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())}, true
	case *net.TCPAddr:
		ap := a.AddrPort()

		return allocKey{tcp: true, client: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())}, true
	}

	return allocKey{}, false
}

// permit is the pion PermissionHandler. pion hands it only the peer IP, never
// the port, so it can only narrow peers to our own relay IP; outbound checks
// the port on every packet.
func (r *registry) permit(client net.Addr, peer net.IP) bool {
	// XOR-PEER-ADDRESS decodes to 4 bytes for family IPv4 and 16 for IPv6, so
	// an IPv4-mapped IPv6 peer stays distinct from public here.
	if ip, ok := netip.AddrFromSlice(peer); ok && ip == r.public {
		return true
	}
	r.log.Debug("peer refused", "client", client.String(), "peer", peer.String())

	return false
}

// quota is the pion QuotaHandler; it runs after authentication. The count
// rises only when pion reports the allocation, so Allocates racing on separate
// TCP connections can overshoot by a few; UDP requests on one listener are
// handled one at a time and cannot.
func (r *registry) quota(username, _ string, src net.Addr) bool {
	_, session, err := parseUsername(username)
	if err != nil {
		return false
	}
	r.mu.RLock()
	n := r.perSession[session]
	r.mu.RUnlock()
	if n >= r.maxPerSession {
		r.log.Info("allocation quota reached", "session", session,
			"client", src.String(), "limit", r.maxPerSession)

		return false
	}

	return true
}

// outbound decides whether a packet that from's client sends to dst may go,
// and to which relay socket. It runs for every packet pion relays (the fast
// path checks the same with sameRoom): one read lock, two RoomOf calls, no
// allocation.
func (r *registry) outbound(from *relayConn, dst net.Addr) (*relayConn, bool) {
	ua, ok := dst.(*net.UDPAddr)
	if !ok {
		return nil, false
	}
	to := ua.AddrPort()
	if to.Addr() != r.public {
		return nil, false
	}
	r.mu.RLock()
	peer := r.relays[to.Port()]
	self := from.session
	var other string
	if peer != nil {
		other = peer.session
	}
	r.mu.RUnlock()
	if peer == nil || !r.sameRoom(from, self, peer, other) {
		return nil, false
	}

	return peer, true
}

// inbound maps the source of a packet read from a relay socket to the relay
// socket that sent it (whose advertised address pion expects as the source),
// or nil if the source is not one of our relay sockets. Writers were already checked by
// outbound; this keeps out everything else that can reach the port: scanners,
// other local services, spoofers. It also spares pion's per-packet
// "No Permission" log line for such traffic.
func (r *registry) inbound(src netip.AddrPort) *relayConn {
	if src.Addr().Unmap() != r.local {
		return nil
	}
	r.mu.RLock()
	peer := r.relays[src.Port()]
	r.mu.RUnlock()

	return peer
}

// noteDroppedWrite counts a refused packet and logs at most one per second.
func (r *registry) noteDroppedWrite(from *relayConn, dst net.Addr) {
	total := r.droppedWrites.Add(1)
	if !r.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	now := time.Now().UnixNano()
	last := r.lastDropLog.Load()
	if now-last < int64(time.Second) || !r.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	r.mu.RLock()
	session := from.session
	r.mu.RUnlock()
	r.log.Debug("relay packet dropped", "session", session, "peer", dst.String(), "dropped_total", total)
}

// hasAllocation reports whether client already holds an allocation made with
// username. The auth handler uses it to keep serving allocations whose
// credential expired mid-game.
func (r *registry) hasAllocation(client net.Addr, username string) bool {
	key, ok := clientKey(client)
	if !ok {
		return false
	}
	r.mu.RLock()
	rec, ok := r.allocs[key]
	r.mu.RUnlock()

	return ok && rec.username == username
}

// addPending records a relay socket handed to pion before its allocation exists.
func (r *registry) addPending(c *relayConn) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.pending[c.port] = c

	return nil
}

// removeRelay forgets a closing relay socket so no packet is routed to it.
func (r *registry) removeRelay(c *relayConn) {
	r.mu.Lock()
	if r.pending[c.port] == c {
		delete(r.pending, c.port)
	}
	if r.relays[c.port] == c {
		delete(r.relays, c.port)
	}
	if c.udpClient && r.clients[c.client] == c {
		delete(r.clients, c.client)
	}
	r.dropSessionRelayLocked(c)
	c.channels = nil
	r.mu.Unlock()
}

// dropSessionRelayLocked removes c from its session's list.
func (r *registry) dropSessionRelayLocked(c *relayConn) {
	list := r.bySession[c.session]
	for i, o := range list {
		if o == c {
			list[i] = list[len(list)-1]
			list[len(list)-1] = nil
			list = list[:len(list)-1]

			break
		}
	}
	if len(list) == 0 {
		delete(r.bySession, c.session)
	} else {
		r.bySession[c.session] = list
	}
}

// closeRelays refuses new relay sockets and closes every existing one, which
// makes pion delete their allocations.
func (r *registry) closeRelays() {
	r.mu.Lock()
	r.closed = true
	conns := make([]*relayConn, 0, len(r.pending)+len(r.relays))
	for _, c := range r.pending {
		conns = append(conns, c)
	}
	for _, c := range r.relays {
		conns = append(conns, c)
	}
	r.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

func (r *registry) allocationCount() int {
	r.mu.RLock()
	defer r.mu.RUnlock()

	return len(r.allocs)
}
