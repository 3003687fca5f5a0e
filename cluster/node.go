package cluster

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostrelay/hostrelay/signaling"
)

// Node is one hostrelay node as the cluster lists it. Everything here is
// public: the lobby app reads it from /api/v1/nodes to measure regions.
type Node struct {
	ID     string `json:"id"`
	Region string `json:"region,omitempty"`
	// URL is the node's public base URL (https://eu1.example.com); share
	// links to its rooms start with it. WS is its lobby WebSocket URL.
	URL string `json:"url"`
	WS  string `json:"ws"`
	// STUN lists stun: URLs of the node's TURN, for measuring the round
	// trip to it from a player's network.
	STUN  []string `json:"stun,omitempty"`
	Rooms int      `json:"rooms"`
}

// announce writes this node's presence with its current room count.
func (c *Cluster) announce(ctx context.Context) error {
	self := c.self
	if c.lobby != nil {
		self.Rooms = c.lobby.RoomCount()
	}
	b, err := json.Marshal(self)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	_, err = c.nodesKV().Put(ctx, self.ID, b)
	return err
}

// heartbeat rewrites the presence every Heartbeat. After a failure streak
// long enough for the others to have called this node dead (and deleted its
// rooms), it writes every room again.
func (c *Cluster) heartbeat(ctx context.Context) {
	t := time.NewTicker(c.cfg.Heartbeat)
	defer t.Stop()
	lastOK, lastRecover := time.Now(), time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.announce(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log.Warn("heartbeat failed", "err", err, "since_ok", time.Since(lastOK).Round(time.Millisecond))
			// NATS answers but the write failed: the buckets may be gone
			// (a NATS restart loses them). Make them again, at most once
			// per DeadAfter.
			if c.nc.IsConnected() && time.Since(lastRecover) > c.cfg.DeadAfter {
				lastRecover = time.Now()
				c.recover(ctx)
			}
			continue
		}
		if time.Since(lastOK) > c.cfg.DeadAfter {
			c.log.Warn("heartbeat back after the others may have called this node dead; writing every room again",
				"gap", time.Since(lastOK).Round(time.Millisecond))
			c.republish()
		}
		lastOK = time.Now()
	}
}

// watchNodes follows the presence bucket: who is there, and who left.
func (c *Cluster) watchNodes(ctx context.Context, w jetstream.KeyWatcher, synced chan struct{}) {
	watch(ctx, w, c.nodeEntry, func() { close(synced) })
}

// watch feeds a bucket's entries to each until ctx ends, calling synced
// once the initial values are read (nats.go marks that with a nil entry).
func watch(ctx context.Context, w jetstream.KeyWatcher, each func(jetstream.KeyValueEntry), synced func()) {
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil {
				if synced != nil {
					synced()
					synced = nil
				}
				continue
			}
			each(e)
		}
	}
}

func (c *Cluster) nodeEntry(e jetstream.KeyValueEntry) {
	id := e.Key()
	if id == c.self.ID {
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		c.nodeGone(id, "left")
		return
	}
	n, err := parseNode(id, e.Value())
	if err != nil {
		c.counters.malformed.Add(1)
		c.log.Warn("ignoring a malformed node entry", "key", id, "err", err)
		return
	}
	// An entry read at start may be an old one of a node that died: it
	// counts from when it was written (NATS's clock; nodes keep theirs in
	// sync with NTP), not from when it was read.
	seen := time.Now()
	if e.Created().Before(seen) {
		seen = e.Created()
	}
	c.mu.Lock()
	p, known := c.peers[id]
	if !known {
		p = &peer{rooms: make(map[string]struct{})}
		c.peers[id] = p
	}
	p.node, p.lastSeen = n, seen
	delete(c.lostNodes, id)
	c.mu.Unlock()
	if !known {
		c.log.Info("node joined", "peer", id, "region", n.Region, "url", n.URL)
	}
}

// sweep calls a node dead once it has been silent for DeadAfter, and
// forgets lost rooms after LostMemory.
func (c *Cluster) sweep(ctx context.Context) {
	t := time.NewTicker(c.cfg.Heartbeat / 4)
	defer t.Stop()
	// cut is when this node was last seen cut off from NATS: silence up to
	// then says nothing of the others, so it counts only from there.
	var cut time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		if !c.nc.IsConnected() {
			cut = now
			continue
		}
		var dead []string
		c.mu.Lock()
		for id, p := range c.peers {
			heard := p.lastSeen
			if cut.After(heard) {
				heard = cut
			}
			if now.Sub(heard) > c.cfg.DeadAfter {
				dead = append(dead, id)
			}
		}
		for code, until := range c.lostRooms {
			if now.After(until) {
				delete(c.lostRooms, code)
			}
		}
		for id, until := range c.lostNodes {
			if now.After(until) {
				delete(c.lostNodes, id)
			}
		}
		c.mu.Unlock()
		for _, id := range dead {
			c.nodeGone(id, "silent")
		}
	}
}

// nodeGone takes a node and its rooms off this node's lists. A node that
// fell silent lost its rooms (room_lost from now on); the first live node
// by id also deletes them from the directory, which only a dead node's
// rooms need (a node that leaves deletes its own).
func (c *Cluster) nodeGone(id, why string) {
	c.mu.Lock()
	p, ok := c.peers[id]
	if !ok {
		c.mu.Unlock()
		return
	}
	delete(c.peers, id)
	codes := make([]string, 0, len(p.rooms))
	for code := range p.rooms {
		codes = append(codes, code)
		delete(c.where, code)
	}
	silent := why == "silent"
	if silent {
		c.counters.nodesLost.Add(1)
		until := time.Now().Add(c.cfg.LostMemory)
		c.lostNodes[id] = until
		for _, code := range codes {
			if len(c.lostRooms) < c.cfg.MaxLost {
				c.lostRooms[code] = until
			}
		}
	}
	cleaner := c.firstLiveLocked()
	closed := c.closed
	c.mu.Unlock()
	for _, code := range codes {
		c.lobby.RemoteRoomGone(code)
	}
	c.log.Warn("node gone", "peer", id, "why", why, "rooms", len(codes))
	if silent && cleaner && !closed {
		c.goRun(func() { c.deleteRooms(codes) })
	}
}

// firstLiveLocked reports whether this node has the smallest id of the
// live nodes: the one that cleans up after dead ones.
func (c *Cluster) firstLiveLocked() bool {
	for id := range c.peers {
		if id < c.self.ID {
			return false
		}
	}
	return true
}

func (c *Cluster) deleteRooms(codes []string) {
	for _, code := range codes {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.RequestTimeout)
		err := c.roomsKV().Delete(ctx, code)
		cancel()
		if err != nil {
			c.counters.writeErrors.Add(1)
			c.log.Warn("could not delete a lost room", "room", code, "err", err)
		} else {
			c.counters.deletes.Add(1)
		}
	}
}

// Nodes lists the live nodes, this one included, by id.
func (c *Cluster) Nodes() []Node {
	self := c.self
	if c.lobby != nil {
		self.Rooms = c.lobby.RoomCount()
	}
	c.mu.Lock()
	out := make([]Node, 0, len(c.peers)+1)
	out = append(out, self)
	for _, p := range c.peers {
		out = append(out, p.node)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Origins are the host[:port] of every live node's public URL: a page one
// node served may open the lobby WebSocket of another.
func (c *Cluster) Origins() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.peers)+1)
	if h := hostOf(c.self.URL); h != "" {
		out = append(out, h)
	}
	for _, p := range c.peers {
		if h := hostOf(p.node.URL); h != "" {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

func hostOf(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	return host
}

// RegionNode picks the node for a room in region: ok is false when no
// live node is in it; the zero Location when this node is, else the live
// node there with the fewest rooms.
func (c *Cluster) RegionNode(region string) (loc signaling.Location, ok bool) {
	if c.self.Region == region {
		return signaling.Location{}, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *peer
	for _, p := range c.peers {
		if p.node.Region != region {
			continue
		}
		if best == nil || len(p.rooms) < len(best.rooms) || (len(p.rooms) == len(best.rooms) && p.node.ID < best.node.ID) {
			best = p
		}
	}
	if best == nil {
		return signaling.Location{}, false
	}
	return best.node.location(), true
}

// location sends a player to n: its lobby WebSocket for a request, its
// base URL for a share link.
func (n Node) location() signaling.Location {
	return signaling.Location{URL: n.WS, Region: n.Region, Base: n.URL}
}
