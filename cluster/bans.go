package cluster

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostrelay/hostrelay/bans"
)

// The operator's bans, shared by every node through a KV bucket of their
// own (<name>_bans): a ban added or lifted on one node's admin page holds
// on all of them, and survives every node's restart. File storage, unlike
// the directory's buckets: bans describe people, not live processes, and
// a NATS restart must not lift them.

// banStore is what ShareBans feeds: the node's ban list.
type banStore interface {
	Share(shared bans.Shared, onChange func()) []bans.Ban
	Apply(b bans.Ban) error
	Remove(id string)
}

// banKey is a ban id as a KV key: ids hold ':' (and IPv6 more), which keys
// may not.
func banKey(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

func banID(key string) (string, bool) {
	id, err := base64.RawURLEncoding.DecodeString(key)
	return string(id), err == nil
}

// ShareBans makes store this cluster's ban list: its changes go to the
// bucket, and every ban in the bucket (now, and as other nodes add and
// lift them) is applied to it; onChange is called after a ban from the
// bucket is applied. Bans store held already (its file) are written to the
// bucket. It returns once the bucket's bans are read.
func (c *Cluster) ShareBans(ctx context.Context, store banStore, onChange func()) error {
	kv, err := c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: c.cfg.Name + "_bans", History: 1, MaxValueSize: bans.MaxBanBytes,
		Storage: jetstream.FileStorage, Replicas: c.cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("cluster: bans bucket: %w", err)
	}
	shared := &sharedBans{kv: kv}
	for _, b := range store.Share(shared, onChange) {
		if err := shared.PutBan(ctx, b); err != nil {
			return err
		}
	}
	w, err := kv.WatchAll(c.runCtx)
	if err != nil {
		return fmt.Errorf("cluster: watch bans: %w", err)
	}
	synced := make(chan struct{})
	c.goRun(func() {
		watch(c.runCtx, w, func(e jetstream.KeyValueEntry) { c.banEntry(store, e) }, func() { close(synced) })
	})
	select {
	case <-synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cluster: reading the bans: %w", ctx.Err())
	}
}

func (c *Cluster) banEntry(store banStore, e jetstream.KeyValueEntry) {
	id, ok := banID(e.Key())
	if !ok {
		c.counters.malformed.Add(1)
		c.log.Warn("ignoring a malformed ban key", "key", e.Key())
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		store.Remove(id)
		return
	}
	b, err := bans.DecodeBan(e.Value())
	if err == nil && b.ID != id {
		err = fmt.Errorf("key names %q, the ban %q", id, b.ID)
	}
	if err == nil {
		err = store.Apply(b)
	}
	if err != nil {
		c.counters.malformed.Add(1)
		c.log.Warn("ignoring a malformed ban", "key", e.Key(), "err", err)
	}
}

// sharedBans writes a node's ban changes to the bucket.
type sharedBans struct{ kv jetstream.KeyValue }

func (s *sharedBans) PutBan(ctx context.Context, b bans.Ban) error {
	data, err := bans.EncodeBan(b)
	if err != nil {
		return err
	}
	if _, err := s.kv.Put(ctx, banKey(b.ID), data); err != nil {
		return fmt.Errorf("cluster: write ban: %w", err)
	}
	return nil
}

func (s *sharedBans) DeleteBan(ctx context.Context, id string) error {
	if err := s.kv.Delete(ctx, banKey(id)); err != nil {
		return fmt.Errorf("cluster: delete ban: %w", err)
	}
	return nil
}
