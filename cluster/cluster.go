package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
)

// The two seams with the lobby, each satisfied directly: the lobby asks
// the cluster what signaling.Cluster names, and the cluster tells the
// lobby what Lobby names.
var (
	_ signaling.Cluster = (*Cluster)(nil)
	_ Lobby             = (*signaling.Hub)(nil)
)

// Lobby is this node's lobby as the cluster needs it (signaling.Hub). The
// cluster never calls it while holding its own lock, so Lobby may call the
// cluster back from under its own.
type Lobby interface {
	// RoomListing is what the directory should hold for a local room:
	// whether it is public and its summary; ok is false once it is gone.
	RoomListing(code string) (sum protocol.RoomSummary, public, ok bool)
	// LocalRooms lists the codes of this node's rooms; RoomCount counts
	// them (every heartbeat carries it).
	LocalRooms() []string
	RoomCount() int
	// RemoteRoomSet lists (or updates) a public room of another node;
	// RemoteRoomGone takes one off the list.
	RemoteRoomSet(sum protocol.RoomSummary)
	RemoteRoomGone(code string)
	// SpendJoinFailure spends a failed join of addr that another node saw,
	// so guessing codes across nodes costs what it costs on one.
	SpendJoinFailure(addr netip.Addr)
}

// Cluster is this node's membership in a cluster.
type Cluster struct {
	cfg Config
	// self is this node as the others see it: ID and Region from Config,
	// its Addrs from Start, before anything reads them.
	self  Node
	log   *slog.Logger
	nc    *nats.Conn
	js    jetstream.JetStream
	lobby Lobby

	// runCtx ends with the node; stopWatch ends the current watches.
	runCtx    context.Context //nolint:containedctx // the node's lifetime, for watches restarted by recover
	stopWatch context.CancelFunc

	mu sync.Mutex
	// nodes and rooms are the buckets; recover replaces them.
	nodes, rooms jetstream.KeyValue
	// peers are the other nodes by id, with when each was last heard.
	peers map[string]*peer
	// where maps every other node's room codes to their node.
	where map[string]string
	// lost remembers rooms and nodes lost, until their expiry.
	lostRooms map[string]time.Time
	lostNodes map[string]time.Time
	// dirty holds local room codes whose listing must be rewritten.
	dirty   map[string]struct{}
	written map[string][]byte // what was last written per local code
	closed  bool

	counters counters

	kick chan struct{} // wakes the flusher
	// reconnected wakes the recoverer: after a reconnect the buckets may be
	// gone (a restarted NATS) and the watches broken.
	reconnected chan struct{}
	stop        context.CancelFunc
	wg          sync.WaitGroup
	subs        []*nats.Subscription
	synced      chan struct{} // closed once both buckets' initial values are read
}

type peer struct {
	node     Node
	lastSeen time.Time
	rooms    map[string]struct{}
}

// New checks cfg and returns a cluster that has not connected yet; Start
// connects. The lobby is built between the two, since each needs the other:
// it holds the Cluster (signaling.Config.Cluster) and is Start's Lobby.
func New(cfg Config) (*Cluster, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Cluster{
		cfg:         cfg,
		self:        Node{ID: cfg.ID, Region: cfg.Region},
		log:         cfg.Logger.With("component", "cluster", "node", cfg.ID),
		peers:       make(map[string]*peer),
		where:       make(map[string]string),
		lostRooms:   make(map[string]time.Time),
		lostNodes:   make(map[string]time.Time),
		dirty:       make(map[string]struct{}),
		written:     make(map[string][]byte),
		kick:        make(chan struct{}, 1),
		reconnected: make(chan struct{}, 1),
		synced:      make(chan struct{}),
	}, nil
}

// Start connects to NATS, creates the buckets if they are missing,
// announces this node at its addresses (refusing an id a live node already
// holds), reads the directory and starts the heartbeat, the watchers and
// the flusher. It returns once this node's lists hold every other node's
// rooms. Call it once, before the lobby serves.
func (c *Cluster) Start(ctx context.Context, lobby Lobby, at Addrs) error {
	if err := at.validate(); err != nil {
		return err
	}
	c.self.URL, c.self.WS, c.self.STUN = at.URL, at.WS, at.STUN
	c.lobby = lobby
	nc, err := nats.Connect(c.cfg.NATS,
		nats.Name("hostrelay "+c.self.ID),
		nats.Timeout(c.cfg.RequestTimeout),
		nats.MaxReconnects(-1), // a node outlives a NATS restart
		nats.ReconnectWait(250*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			c.log.Warn("nats disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
			select { // the recoverer renews buckets and watches
			case c.reconnected <- struct{}{}:
			default:
			}
		}),
	)
	if err != nil {
		return fmt.Errorf("cluster: connect %s: %w", redact(c.cfg.NATS), err)
	}
	c.mu.Lock() // Stats may be read (metrics) while the node starts
	c.nc = nc
	c.mu.Unlock()
	if err := c.open(ctx); err != nil {
		nc.Close()
		return err
	}
	return nil
}

func (c *Cluster) open(ctx context.Context) error {
	js, err := jetstream.New(c.nc)
	if err != nil {
		return fmt.Errorf("cluster: jetstream: %w", err)
	}
	c.js = js
	if err := c.ensureBuckets(ctx); err != nil {
		return err
	}
	if err := c.claimNodeID(ctx); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stop = cancel
	c.runCtx = runCtx
	if err := c.subscribe(); err != nil {
		cancel()
		return err
	}
	synced, err := c.startWatches()
	if err != nil {
		cancel()
		return err
	}
	c.goRun(func() { c.heartbeat(runCtx) })
	c.goRun(func() { c.sweep(runCtx) })
	c.goRun(func() { c.flusher(runCtx) })
	c.goRun(func() { c.recoverer(runCtx) })
	for _, ch := range synced {
		select {
		case <-ch:
		case <-ctx.Done():
			cancel()
			return fmt.Errorf("cluster: reading the directory: %w", ctx.Err())
		}
	}
	close(c.synced)
	c.log.Info("joined cluster", "cluster", c.cfg.Name, "region", c.self.Region, "url", c.self.URL,
		"peers", len(c.Nodes())-1)
	return nil
}

// ensureBuckets creates the two buckets, or finds them. Memory storage:
// the directory describes live processes, and a NATS restart that loses it
// is repaired by the nodes themselves (recover).
func (c *Cluster) ensureBuckets(ctx context.Context) error {
	nodes, err := c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: c.cfg.Name + "_nodes", History: 1, TTL: 10 * c.cfg.DeadAfter,
		MaxValueSize: maxEntry, Storage: jetstream.MemoryStorage, Replicas: c.cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("cluster: nodes bucket: %w", err)
	}
	rooms, err := c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: c.cfg.Name + "_rooms", History: 1,
		MaxValueSize: maxEntry, Storage: jetstream.MemoryStorage, Replicas: c.cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("cluster: rooms bucket: %w", err)
	}
	c.mu.Lock()
	c.nodes, c.rooms = nodes, rooms
	c.mu.Unlock()
	return nil
}

// startWatches (re)starts following both buckets, ending any earlier
// watch; the channels close once each has read the initial values.
func (c *Cluster) startWatches() ([]chan struct{}, error) {
	c.mu.Lock()
	if c.stopWatch != nil {
		c.stopWatch()
	}
	wctx, cancel := context.WithCancel(c.runCtx)
	c.stopWatch = cancel
	nodes, rooms := c.nodes, c.rooms
	c.mu.Unlock()
	nodesW, err := nodes.WatchAll(wctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: watch nodes: %w", err)
	}
	roomsW, err := rooms.WatchAll(wctx)
	if err != nil {
		_ = nodesW.Stop()
		return nil, fmt.Errorf("cluster: watch rooms: %w", err)
	}
	nodesSynced, roomsSynced := make(chan struct{}), make(chan struct{})
	c.goRun(func() { c.watchNodes(wctx, nodesW, nodesSynced) })
	c.goRun(func() { c.watchRooms(wctx, roomsW, roomsSynced) })
	return []chan struct{}{nodesSynced, roomsSynced}, nil
}

// recoverer renews the directory after every reconnect to NATS.
func (c *Cluster) recoverer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.reconnected:
			c.recover(ctx)
		}
	}
}

// recover repairs the directory after NATS lost it (a NATS restart with the
// buckets in memory): the buckets again, the watches again, and this node's
// rooms written back. Called by the heartbeat when NATS answers but a write
// failed; cheap when nothing was lost.
func (c *Cluster) recover(ctx context.Context) {
	if err := c.ensureBuckets(ctx); err != nil {
		c.log.Warn("cluster directory: could not make the buckets", "err", err)
		return
	}
	if _, err := c.startWatches(); err != nil {
		c.log.Warn("cluster directory: could not watch the buckets", "err", err)
		return
	}
	c.republish()
	c.log.Info("cluster directory: buckets and watches renewed; writing this node's rooms again")
}

func (c *Cluster) goRun(f func()) {
	c.wg.Add(1)
	go func() { defer c.wg.Done(); f() }()
}

// claimNodeID writes this node's presence, refusing to take over an id that
// a live node rewrote within DeadAfter (two nodes with one id would delete
// each other's rooms).
func (c *Cluster) claimNodeID(ctx context.Context) error {
	e, err := c.nodesKV().Get(ctx, c.self.ID)
	switch {
	case err == nil && e.Operation() == jetstream.KeyValuePut && time.Since(e.Created()) < c.cfg.DeadAfter:
		return fmt.Errorf("%w: %q (heard %s ago); choose another -node-id", ErrNodeIDInUse, c.self.ID,
			time.Since(e.Created()).Round(time.Millisecond))
	case err != nil && !errors.Is(err, jetstream.ErrKeyNotFound):
		return fmt.Errorf("cluster: read node %q: %w", c.self.ID, err)
	}
	return c.announce(ctx)
}

// Close leaves the cluster: this node's rooms and presence are deleted, so
// every other node takes them off its lists at once rather than after
// DeadAfter; then the connection is drained. Call it after the lobby closed
// its rooms.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	codes := make([]string, 0, len(c.written))
	for code := range c.written {
		codes = append(codes, code)
	}
	c.mu.Unlock()
	if c.stop != nil {
		c.stop()
	}
	c.wg.Wait()
	if c.nc == nil {
		return nil
	}
	if !c.nc.IsConnected() {
		// Nothing can be said: the others will call this node dead after
		// DeadAfter, as if it had crashed. Waiting would only hold up the
		// rest of the shutdown.
		c.nc.Close()
		c.log.Warn("left cluster without a goodbye: NATS unreachable", "rooms", len(codes))
		return nil
	}
	var errs []error
	del := func(kv jetstream.KeyValue, key string) error {
		dctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		defer cancel()
		return kv.Delete(dctx, key)
	}
	for _, code := range codes {
		if err := del(c.roomsKV(), code); err != nil {
			errs = append(errs, fmt.Errorf("cluster: delete room %s: %w", code, err))
		}
	}
	if err := del(c.nodesKV(), c.self.ID); err != nil {
		errs = append(errs, fmt.Errorf("cluster: delete presence: %w", err))
	}
	for _, s := range c.subs {
		_ = s.Unsubscribe()
	}
	if err := c.nc.Drain(); err != nil {
		errs = append(errs, fmt.Errorf("cluster: drain: %w", err))
	}
	// Drain returns at once; wait for it, as far as ctx allows.
	for c.nc.IsDraining() && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	c.nc.Close()
	c.log.Info("left cluster", "rooms", len(codes))
	return errors.Join(errs...)
}

// Kill drops out as a crash would: no goodbye, nothing deleted. Tests use it
// to see the others notice within DeadAfter.
func (c *Cluster) Kill() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	if c.nc != nil {
		c.nc.Close()
	}
	if c.stop != nil {
		c.stop()
	}
	c.wg.Wait()
}

// Self is this node's id and region.
func (c *Cluster) Self() (node, region string) { return c.self.ID, c.self.Region }

// redact hides the passwords in a NATS URL list for logs and errors.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// counters are the totals Stats reports.
type counters struct {
	writes, deletes, writeErrors, nodesLost, malformed, lookups atomic.Uint64
}

// Stats is what the cluster has done since this node joined, for metrics.
type Stats struct {
	Connected   bool   // NATS is connected now
	Nodes       int    // live nodes, this one included
	Writes      uint64 // room entries written (claims and listings)
	Deletes     uint64 // room entries deleted (closed rooms, lost ones)
	WriteErrors uint64 // writes and deletes NATS refused or timed out
	NodesLost   uint64 // nodes called dead after DeadAfter of silence
	Malformed   uint64 // entries and events read from NATS and refused
	// Lookups counts codes looked up (Locate) for rooms not on this node:
	// a guesser shows here first, and its failed-join budget bounds it.
	Lookups uint64
}

// Stats reads the counters.
func (c *Cluster) Stats() Stats {
	c.mu.Lock()
	nodes := len(c.peers) + 1
	nc := c.nc
	c.mu.Unlock()
	return Stats{
		Connected: nc != nil && nc.IsConnected(), Nodes: nodes,
		Writes: c.counters.writes.Load(), Deletes: c.counters.deletes.Load(), WriteErrors: c.counters.writeErrors.Load(),
		NodesLost: c.counters.nodesLost.Load(), Malformed: c.counters.malformed.Load(), Lookups: c.counters.lookups.Load(),
	}
}

// nodesKV and roomsKV are the buckets as they are now (recover may make
// them again).
func (c *Cluster) nodesKV() jetstream.KeyValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes
}

func (c *Cluster) roomsKV() jetstream.KeyValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rooms
}
