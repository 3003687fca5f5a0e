package cluster

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/nats-io/nats.go"

	"github.com/hostrelay/hostrelay/protocol"
)

// Requests and events between nodes, on plain NATS subjects.

func (c *Cluster) roomSubject(node string) string { return c.cfg.Name + ".node." + node + ".room" }
func (c *Cluster) joinFailSubject() string        { return c.cfg.Name + ".limits.joinfail" }

func (c *Cluster) subscribe() error {
	room, err := c.nc.Subscribe(c.roomSubject(c.self.ID), func(m *nats.Msg) {
		code := string(m.Data)
		live := false
		if len(code) == protocol.RoomCodeLength {
			_, _, live = c.lobby.RoomListing(code)
		}
		reply := []byte("0")
		if live {
			reply = []byte("1")
		}
		_ = m.Respond(reply)
	})
	if err != nil {
		return fmt.Errorf("cluster: subscribe: %w", err)
	}
	fails, err := c.nc.Subscribe(c.joinFailSubject(), func(m *nats.Msg) {
		from, a, err := parseJoinFail(m.Data)
		if err != nil {
			c.counters.malformed.Add(1)
			c.log.Debug("ignoring a malformed failed-join event", "err", err)
			return
		}
		if from != c.self.ID {
			c.lobby.SpendJoinFailure(a)
		}
	})
	if err != nil {
		_ = room.Unsubscribe()
		return fmt.Errorf("cluster: subscribe: %w", err)
	}
	c.subs = append(c.subs, room, fails)
	return nil
}

// askRoom asks node whether room code is live there.
func (c *Cluster) askRoom(ctx context.Context, node, code string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	m, err := c.nc.RequestWithContext(ctx, c.roomSubject(node), []byte(code))
	if err != nil {
		return false, fmt.Errorf("cluster: ask %s about %s: %w", node, code, err)
	}
	return string(m.Data) == "1", nil
}

// JoinFailed tells every other node that addr spent a failed join (a code
// that does not exist, a wrong password), so a guesser's budget is one for
// the whole cluster. Fire and forget: a lost event costs one guess.
func (c *Cluster) JoinFailed(addr netip.Addr) {
	if err := c.nc.Publish(c.joinFailSubject(), []byte(c.self.ID+" "+addr.String())); err != nil {
		c.log.Debug("could not share a failed join", "err", err)
	}
}
