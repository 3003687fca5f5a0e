package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
)

// entry is a room's value in the rooms bucket. Private rooms carry no
// listing: other nodes need only their owner, to send players there.
type entry struct {
	Node    string                `json:"node"`
	Public  bool                  `json:"public,omitempty"`
	Listing *protocol.RoomSummary `json:"listing,omitempty"`
}

// ClaimRoom takes code for this node cluster-wide; taken reports that
// another room holds it (the lobby draws another code), err that NATS did
// not answer. The lobby calls it before it makes a room, so no two nodes
// ever hand out one code.
func (c *Cluster) ClaimRoom(ctx context.Context, code string) (taken bool, err error) {
	b, err := json.Marshal(entry{Node: c.self.ID})
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if _, err := c.roomsKV().Create(ctx, code, b); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return true, nil
		}
		c.counters.writeErrors.Add(1)
		return false, fmt.Errorf("cluster: claim room %s: %w", code, err)
	}
	c.counters.writes.Add(1)
	c.mu.Lock()
	c.written[code] = b
	c.mu.Unlock()
	return false, nil
}

// RoomChanged notes that a local room's listing changed, that the room is
// gone, or that a claimed code went unused; the flusher writes the latest
// state within FlushInterval. It never blocks: the lobby calls it under
// its lock.
func (c *Cluster) RoomChanged(code string) {
	c.mu.Lock()
	c.dirty[code] = struct{}{}
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// republish marks every local room dirty and forgets what was written, so
// each is written again: after the others may have deleted them.
func (c *Cluster) republish() {
	codes := c.lobby.LocalRooms()
	c.mu.Lock()
	for _, code := range codes {
		c.dirty[code] = struct{}{}
		delete(c.written, code)
	}
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// flusher writes dirty rooms, at most once per FlushInterval each.
func (c *Cluster) flusher(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		c.mu.Lock()
		dirty := c.dirty
		c.dirty = make(map[string]struct{})
		c.mu.Unlock()
		c.flushAll(ctx, dirty)
		select { // changes in the meantime wait for the next round
		case <-ctx.Done():
			return
		case <-time.After(c.cfg.FlushInterval):
		}
	}
}

// flushWorkers bounds the writes in flight at once. One write is a round
// trip to NATS; one at a time carried about 1,800 a second on this
// machine's loopback, under what 500 busy rooms offer (5,000 at ten a
// second each).
const flushWorkers = 16

// flushAll writes one round of dirty rooms, several at once. A code is in a
// round once and rounds do not overlap, so each room's writes stay in order.
func (c *Cluster) flushAll(ctx context.Context, dirty map[string]struct{}) {
	codes := make(chan string)
	var wg sync.WaitGroup
	for range min(flushWorkers, len(dirty)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for code := range codes {
				c.flushRoom(ctx, code)
			}
		}()
	}
	for code := range dirty {
		codes <- code
	}
	close(codes)
	wg.Wait()
}

func (c *Cluster) flushRoom(ctx context.Context, code string) {
	sum, public, ok := c.lobby.RoomListing(code)
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if !ok {
		c.mu.Lock()
		_, had := c.written[code]
		delete(c.written, code)
		c.mu.Unlock()
		if had {
			if err := c.roomsKV().Delete(ctx, code); err != nil {
				c.counters.writeErrors.Add(1)
				if ctx.Err() == nil {
					c.log.Warn("could not delete a closed room", "room", code, "err", err)
				}
			} else {
				c.counters.deletes.Add(1)
			}
		}
		return
	}
	e := entry{Node: c.self.ID, Public: public}
	if public {
		sum.Region = c.self.Region
		e.Listing = &sum
	}
	b, err := json.Marshal(e)
	if err != nil {
		c.log.Error("encode a room entry", "room", code, "err", err)
		return
	}
	c.mu.Lock()
	same := bytes.Equal(c.written[code], b)
	c.mu.Unlock()
	if same {
		return
	}
	if _, err := c.roomsKV().Put(ctx, code, b); err != nil {
		c.counters.writeErrors.Add(1)
		if ctx.Err() == nil {
			c.log.Warn("could not write a room; trying again", "room", code, "err", err)
			c.RoomChanged(code)
		}
		return
	}
	c.counters.writes.Add(1)
	c.mu.Lock()
	c.written[code] = b
	c.mu.Unlock()
}

// watchRooms follows the rooms bucket into this node's lists. A watch
// started again (recover) reads the whole bucket first: rooms the mirror
// holds that are not in it any more went while the watch was down.
func (c *Cluster) watchRooms(ctx context.Context, w jetstream.KeyWatcher, synced chan struct{}) {
	initial := make(map[string]struct{})
	watch(ctx, w, func(e jetstream.KeyValueEntry) {
		if initial != nil {
			initial[e.Key()] = struct{}{}
		}
		c.roomEntry(e)
	}, func() {
		c.forgetUnseen(initial)
		initial = nil
		close(synced)
	})
}

// forgetUnseen drops other nodes' rooms that a full read of the bucket did
// not find.
func (c *Cluster) forgetUnseen(seen map[string]struct{}) {
	c.mu.Lock()
	var gone []string
	for code, node := range c.where {
		if _, ok := seen[code]; !ok {
			gone = append(gone, code)
			delete(c.where, code)
			if p := c.peers[node]; p != nil {
				delete(p.rooms, code)
			}
		}
	}
	c.mu.Unlock()
	for _, code := range gone {
		c.lobby.RemoteRoomGone(code)
	}
}

func (c *Cluster) roomEntry(e jetstream.KeyValueEntry) {
	code := e.Key()
	if e.Operation() != jetstream.KeyValuePut {
		c.mu.Lock()
		node, known := c.where[code]
		delete(c.where, code)
		if p := c.peers[node]; known && p != nil {
			delete(p.rooms, code)
		}
		_, mine := c.written[code]
		c.mu.Unlock()
		if known {
			c.lobby.RemoteRoomGone(code)
		}
		// Another node deleted a room of ours that is still live: it took
		// this node for dead. Write it back.
		if mine {
			if _, _, live := c.lobby.RoomListing(code); live {
				c.mu.Lock()
				delete(c.written, code)
				c.mu.Unlock()
				c.RoomChanged(code)
			}
		}
		return
	}
	en, err := parseEntry(code, e.Value())
	if err != nil {
		c.counters.malformed.Add(1)
		c.log.Warn("ignoring a malformed room entry", "room", code, "err", err)
		return
	}
	if en.Node == c.self.ID {
		return
	}
	c.mu.Lock()
	if _, dead := c.lostNodes[en.Node]; dead && c.peers[en.Node] == nil {
		// A node called dead writes nothing; its entries are deleted by the
		// first live node. A late one is taken in (the node may have been
		// cut off, not dead): if no heartbeat follows, the sweep drops it
		// again after DeadAfter.
		delete(c.lostNodes, en.Node)
	}
	p := c.peers[en.Node]
	if p == nil {
		// Rooms can arrive before their node's presence: count the node
		// as heard now; the sweep drops it if no heartbeat follows.
		p = &peer{node: Node{ID: en.Node}, lastSeen: time.Now(), rooms: make(map[string]struct{})}
		c.peers[en.Node] = p
	}
	p.rooms[code] = struct{}{}
	c.where[code] = en.Node
	delete(c.lostRooms, code)
	c.mu.Unlock()
	if en.Listing != nil {
		c.lobby.RemoteRoomSet(*en.Listing)
	} else {
		c.lobby.RemoteRoomGone(code) // made private: off the list
	}
}

// Locate finds the node of a room this node does not have: a live node's
// Location, Lost for a room lost with its node, the zero Location for a
// code no node has. The local mirror answers most lookups; a code it does
// not know yet (made within the watch's delay) is read from the bucket.
// The owner is then asked whether the room is still live, so a player is
// never sent to a room that closed, or to a node that died, in the last
// moments.
func (c *Cluster) Locate(ctx context.Context, code string) (signaling.Location, error) {
	c.counters.lookups.Add(1)
	if !c.nc.IsConnected() {
		// Cut off, this node's mirror and tombstones may be stale.
		return signaling.Location{}, ErrDisconnected
	}
	c.mu.Lock()
	id, known := c.where[code]
	_, lost := c.lostRooms[code]
	c.mu.Unlock()
	if lost {
		return signaling.Location{Lost: true}, nil
	}
	if !known {
		gctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		e, err := c.roomsKV().Get(gctx, code)
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return signaling.Location{}, nil
		case err != nil:
			return signaling.Location{}, fmt.Errorf("cluster: locate %s: %w", code, err)
		}
		en, err := parseEntry(code, e.Value())
		if err != nil {
			return signaling.Location{}, fmt.Errorf("cluster: locate %s: %w", code, err)
		}
		id = en.Node
	}
	if id == c.self.ID {
		return signaling.Location{}, nil // closed here since the caller looked
	}
	c.mu.Lock()
	var owner Node // a copy: the watch rewrites a peer's node under c.mu
	if p := c.peers[id]; p != nil {
		owner = p.node
	}
	_, deadNode := c.lostNodes[id]
	c.mu.Unlock()
	if deadNode {
		return signaling.Location{Lost: true}, nil
	}
	if owner.WS == "" {
		return signaling.Location{}, nil // a stale entry of a node never seen
	}
	live, err := c.askRoom(ctx, id, code)
	switch {
	case err != nil:
		// The owner does not answer: it is dying. Say lost rather than
		// send the player to it; the sweep will agree within DeadAfter.
		c.log.Info("room owner did not answer", "room", code, "peer", id, "err", err)
		return signaling.Location{Lost: true}, nil
	case !live:
		return signaling.Location{}, nil
	}
	return owner.location(), nil
}

// LocateNode says where a node is: live (its Location), lost, or unknown
// (the zero Location). A resume token names its node: a node that gets
// another's token sends the player there, or says room_lost.
func (c *Cluster) LocateNode(id string) signaling.Location {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.peers[id]; p != nil && p.node.WS != "" {
		return p.node.location()
	}
	if _, lost := c.lostNodes[id]; lost {
		return signaling.Location{Lost: true}
	}
	return signaling.Location{}
}
