package turn

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostrelay/hostrelay/internal/netkey"
)

// allocations is what the server knows of pion's allocations, and the peer
// policy over them: every relay socket this server handed out, which session
// owns it, and how many allocations each session holds.
// turn is never an open relay because every relayed packet is checked here:
// the only destinations allowed are live relay sockets of the same room.
//
// Relays are keyed by port alone: all of them share one advertised IP
// (PublicIP) and one bind IP, so the port identifies the socket.
type allocations struct {
	sessions      Sessions
	log           *slog.Logger
	maxPerSession int
	maxPerIP      int
	maxTotal      int           // relay sockets of the whole server
	maxChannels   int           // channel bindings per allocation
	lifetime      time.Duration // the longest an allocation lives unrefreshed
	// public is the advertised relay IP in its 4-byte form. Comparing
	// netip.Addr values (never Unmap) keeps ::ffff:a.b.c.d from matching it.
	public netip.Addr
	// local is where relay sockets are reachable from this host. Relay to
	// relay traffic is sent there rather than to public, so it never leaves
	// the host and needs no NAT hairpin when PublicIP is not on an interface.
	local netip.Addr

	// roomChanges is set when Sessions reports membership changes
	// (RoomChangeNotifier), so rooms can be cached per allocation.
	roomChanges bool

	droppedWrites atomic.Uint64
	droppedReads  atomic.Uint64
	droppedFull   atomic.Uint64 // allowed packets dropped because the peer's inbox was full
	lastDropLog   atomic.Int64  // unix nanoseconds of the last drop logged
	refusalLog    logLimiter    // quota, capacity and channel refusals, which a flood repeats

	// bw is the per-allocation bandwidth limit; read-only after newRegistry.
	bw                    bandwidthPolicy
	droppedBandwidth      atomic.Uint64
	droppedBandwidthBytes atomic.Uint64
	// stats are the totals Stats reports beyond the drops above.
	stats *allocationCounters

	mu         sync.RWMutex
	closed     bool
	pending    map[uint16]*relayConn         // sockets whose allocation is not created yet
	relays     map[uint16]*relayConn         // sockets of live allocations
	clients    map[netip.AddrPort]*relayConn // live allocations of UDP clients, by client address
	bySession  map[string][]*relayConn       // live allocations by session, for invalidate
	records    map[allocKey]allocRecord
	reserved   map[allocKey]reservation // quota granted, allocation not reported yet
	perSession map[string]int           // allocs and reservations by session
	perIP      map[netip.Prefix]int     // allocs and reservations by client IP (/64 for IPv6)

	ends sessionEnds
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
	prefix   netip.Prefix // the client's, for perIP
	relay    *relayConn   // nil if the socket closed before the allocation was reported
}

// reservation is a quota slot granted to an Allocate that pion has not
// reported yet, so that concurrent Allocates (one per UDP listener and TCP
// connection) cannot overshoot the caps between the check and the count.
type reservation struct {
	session string
	prefix  netip.Prefix
	at      time.Time
}

// reservationTTL bounds how long a reservation whose Allocate neither
// succeeded nor reported an error (which pion always does) holds its slot.
const reservationTTL = 10 * time.Second

func newAllocations(cfg Config, log *slog.Logger) *allocations {
	public, _ := netip.AddrFromSlice(cfg.PublicIP.To4())
	local, _ := netip.AddrFromSlice(cfg.RelayBindIP.To4())
	if local.IsUnspecified() {
		local = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}

	return &allocations{
		sessions:      cfg.Sessions,
		log:           log,
		maxPerSession: cfg.MaxAllocationsPerSession,
		maxPerIP:      cfg.MaxAllocationsPerIP,
		maxTotal:      cfg.MaxAllocations,
		maxChannels:   cfg.MaxChannelsPerAllocation,
		lifetime:      cfg.MaxAllocationLifetime,
		bw:            newBandwidthPolicy(cfg.MaxBandwidth, cfg.BandwidthBurst),
		public:        public,
		local:         local,
		pending:       make(map[uint16]*relayConn),
		relays:        make(map[uint16]*relayConn),
		clients:       make(map[netip.AddrPort]*relayConn),
		bySession:     make(map[string][]*relayConn),
		records:       make(map[allocKey]allocRecord),
		reserved:      make(map[allocKey]reservation),
		perSession:    make(map[string]int),
		perIP:         make(map[netip.Prefix]int),
		ends:          newSessionEnds(),
		stats:         newAllocationCounters(),
	}
}

// addr is the client's address as pion reports it, unmapped.
func (k allocKey) addr() net.Addr {
	if k.tcp {
		return net.TCPAddrFromAddrPort(k.client)
	}

	return net.UDPAddrFromAddrPort(k.client)
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
func (a *allocations) permit(client net.Addr, peer net.IP) bool {
	// XOR-PEER-ADDRESS decodes to 4 bytes for family IPv4 and 16 for IPv6, so
	// an IPv4-mapped IPv6 peer stays distinct from public here.
	if ip, ok := netip.AddrFromSlice(peer); ok && ip == a.public {
		return true
	}
	a.log.Debug("peer refused", "client", client.String(), "peer", peer.String())

	return false
}

// quota is the pion QuotaHandler; it runs after authentication, and a
// refusal is answered 486 Allocation Quota Reached. It checks the session's
// and the client IP's live allocations and reserves a slot in both at once,
// so Allocates racing on separate listeners or TCP connections cannot
// overshoot; the allocation's creation (or pion's error report) settles the
// reservation. The server-wide cap is left to AllocatePacketConn, whose
// refusal pion answers 508 Insufficient Capacity.
func (a *allocations) quota(username, _ string, src net.Addr) bool {
	_, session, err := parseUsername(username)
	if err != nil {
		return false
	}
	key, ok := clientKey(src)
	if !ok {
		return false
	}
	prefix := netkey.Prefix(key.client.Addr())
	refused, limit := "", 0

	a.mu.Lock()
	// A reservation still here belongs to an earlier Allocate on this
	// 5-tuple that made nothing; requests on one 5-tuple run one at a time.
	a.settleLocked(key)
	switch {
	case a.perSession[session] >= a.maxPerSession:
		refused, limit = "session", a.maxPerSession
		a.stats.refusedSession.Add(1)
	case a.perIP[prefix] >= a.maxPerIP:
		refused, limit = "ip", a.maxPerIP
		a.stats.refusedIP.Add(1)
	case len(a.pending)+len(a.relays) >= a.maxTotal:
		// No reservation: AllocatePacketConn refuses this one.
	default:
		a.reserved[key] = reservation{session: session, prefix: prefix, at: time.Now()}
		a.countLocked(session, prefix)
	}
	a.mu.Unlock()

	if refused != "" {
		if skipped, ok := a.refusalLog.allow(); ok {
			a.log.Info("allocation refused: quota reached", "per", refused, "session", session,
				"client", src.String(), "limit", limit, "refusals_not_logged", skipped)
		}

		return false
	}

	return true
}

// settleLocked drops key's reservation, if any, and its counts.
func (a *allocations) settleLocked(key allocKey) {
	if res, ok := a.reserved[key]; ok {
		delete(a.reserved, key)
		a.releaseLocked(res.session, res.prefix)
	}
}

func (a *allocations) countLocked(session string, prefix netip.Prefix) {
	a.perSession[session]++
	a.perIP[prefix]++
}

func (a *allocations) releaseLocked(session string, prefix netip.Prefix) {
	if a.perSession[session] <= 1 {
		delete(a.perSession, session)
	} else {
		a.perSession[session]--
	}
	if a.perIP[prefix] <= 1 {
		delete(a.perIP, prefix)
	} else {
		a.perIP[prefix]--
	}
}

// dropStaleReservations releases reservations older than reservationTTL.
func (a *allocations) dropStaleReservations(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key, res := range a.reserved {
		if now.Sub(res.at) > reservationTTL {
			a.settleLocked(key)
		}
	}
}

// outbound decides whether a packet that from's client sends to dst may go,
// and to which relay socket. It runs for every packet pion relays (the fast
// path checks the same with sameRoom): one read lock, two RoomOf calls, no
// allocation.
func (a *allocations) outbound(from *relayConn, dst net.Addr) (*relayConn, bool) {
	ua, ok := dst.(*net.UDPAddr)
	if !ok {
		return nil, false
	}
	to := ua.AddrPort()
	if to.Addr() != a.public {
		return nil, false
	}
	a.mu.RLock()
	peer := a.relays[to.Port()]
	self := from.session
	var other string
	if peer != nil {
		other = peer.session
	}
	a.mu.RUnlock()
	if peer == nil || !a.sameRoom(from, self, peer, other) {
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
func (a *allocations) inbound(src netip.AddrPort) *relayConn {
	if src.Addr().Unmap() != a.local {
		return nil
	}
	a.mu.RLock()
	peer := a.relays[src.Port()]
	a.mu.RUnlock()

	return peer
}

// noteDroppedWrite counts a refused packet and logs at most one per second.
func (a *allocations) noteDroppedWrite(from *relayConn, dst net.Addr) {
	total := a.droppedWrites.Add(1)
	if !a.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	now := time.Now().UnixNano()
	last := a.lastDropLog.Load()
	if now-last < int64(time.Second) || !a.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	a.mu.RLock()
	session := from.session
	a.mu.RUnlock()
	a.log.Debug("relay packet dropped", "session", session, "peer", dst.String(), "dropped_total", total)
}

// hasAllocation reports whether client already holds an allocation made with
// username. The auth handler uses it to keep serving allocations whose
// credential expired mid-game.
func (a *allocations) hasAllocation(client net.Addr, username string) bool {
	key, ok := clientKey(client)
	if !ok {
		return false
	}
	a.mu.RLock()
	rec, ok := a.records[key]
	a.mu.RUnlock()

	return ok && rec.username == username
}

// full reports whether the server holds MaxAllocations relay sockets.
func (a *allocations) full() bool {
	a.mu.RLock()
	defer a.mu.RUnlock()

	return len(a.pending)+len(a.relays) >= a.maxTotal
}

// relayCount is how many relay sockets the server holds, pending or live.
func (a *allocations) relayCount() int {
	a.mu.RLock()
	defer a.mu.RUnlock()

	return len(a.pending) + len(a.relays)
}

// holdsPort reports whether one of our relay sockets holds port.
func (a *allocations) holdsPort(port uint16) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()

	return a.pending[port] != nil || a.relays[port] != nil
}

// addPending records a relay socket handed to pion before its allocation
// exists, unless the server is closed or full.
func (a *allocations) addPending(c *relayConn) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return ErrClosed
	}
	if len(a.pending)+len(a.relays) >= a.maxTotal {
		a.stats.refusedCapacity.Add(1)

		return errCapacity
	}
	a.pending[c.port] = c

	return nil
}

// removeRelay forgets a closing relay socket so no packet is routed to it.
func (a *allocations) removeRelay(c *relayConn) {
	a.mu.Lock()
	if a.pending[c.port] == c {
		delete(a.pending, c.port)
	}
	if a.relays[c.port] == c {
		delete(a.relays, c.port)
	}
	if c.udpClient && a.clients[c.client] == c {
		delete(a.clients, c.client)
	}
	a.dropSessionRelayLocked(c)
	c.channels.reset()
	if c.expiry != nil {
		c.expiry.Stop()
	}
	a.mu.Unlock()
}

// dropSessionRelayLocked removes c from its session's list.
func (a *allocations) dropSessionRelayLocked(c *relayConn) {
	list := a.bySession[c.session]
	for i, o := range list {
		if o == c {
			list[i] = list[len(list)-1]
			list[len(list)-1] = nil
			list = list[:len(list)-1]

			break
		}
	}
	if len(list) == 0 {
		delete(a.bySession, c.session)
	} else {
		a.bySession[c.session] = list
	}
}

// closeRelays refuses new relay sockets and closes every existing one, which
// makes pion delete their allocations.
func (a *allocations) closeRelays() {
	a.mu.Lock()
	a.closed = true
	conns := make([]*relayConn, 0, len(a.pending)+len(a.relays))
	for _, c := range a.pending {
		conns = append(conns, c)
	}
	for _, c := range a.relays {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

func (a *allocations) allocationCount() int {
	a.mu.RLock()
	defer a.mu.RUnlock()

	return len(a.records)
}

// allocationCounts returns the live allocations and the client addresses
// of those over TCP or TLS.
func (a *allocations) allocationCounts() (total int, stream []netip.AddrPort) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for k := range a.records {
		if k.tcp {
			stream = append(stream, k.client)
		}
	}

	return len(a.records), stream
}

// logLimiter lets one log line through per second and counts the rest, for
// refusals an attacker can repeat at line rate.
type logLimiter struct {
	last    atomic.Int64 // unix nanoseconds of the last line let through
	skipped atomic.Uint64
}

// allow reports whether to log now, and how many were held back since.
func (l *logLimiter) allow() (skipped uint64, ok bool) {
	now := time.Now().UnixNano()
	last := l.last.Load()
	if now-last < int64(time.Second) || !l.last.CompareAndSwap(last, now) {
		l.skipped.Add(1)

		return 0, false
	}

	return l.skipped.Swap(0), true
}
