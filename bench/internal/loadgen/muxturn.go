package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	pionturn "github.com/pion/turn/v4"
)

// MuxTURN is a mux client with a TURN allocation made by pion's client.
type MuxTURN struct {
	*MuxClient
	Allocation
}

// Close releases the allocation (Refresh 0) and stops the client.
func (t *MuxTURN) Close() error {
	return errors.Join(t.release(), t.MuxClient.Close())
}

// Allocate takes a new client address and makes a TURN allocation from it
// on server with creds, pion's client writing through the mux and fed by its
// reader.
func (m *Mux) Allocate(server *net.UDPAddr, creds Creds) (*MuxTURN, error) {
	c, err := m.NewClient()
	if err != nil {
		return nil, err
	}
	tc, err := pionturn.NewClient(&pionturn.ClientConfig{
		TURNServerAddr: server.String(),
		STUNServerAddr: server.String(),
		Conn:           c,
		Username:       creds.Username,
		Password:       creds.Password,
		LoggerFactory:  silent{},
	})
	if err != nil {
		_ = c.Close()

		return nil, fmt.Errorf("loadgen: turn client: %w", err)
	}
	c.OnControl(func(b []byte, from net.Addr) { _, _ = tc.HandleInbound(b, from) })
	relay, err := tc.Allocate()
	if err != nil {
		tc.Close()
		_ = c.Close()

		return nil, fmt.Errorf("loadgen: allocate from %s: %w", c.Addr(), err)
	}
	c.Dst = server

	return &MuxTURN{MuxClient: c, Allocation: Allocation{Client: tc, Relay: relay}}, nil
}

// ConnectMux binds a channel from a to b's relay and from b to a's, then
// probes both ways until ChannelData frames pass (Connect for mux clients).
func ConnectMux(ctx context.Context, a, b *MuxTURN) error {
	if err := permitEachOther(a.Relay, b.Relay); err != nil {
		return err
	}

	return probeUntil(ctx, a.MuxClient, b.MuxClient)
}

// MuxGamePair is one player's link to the host through the relay, both ends
// emulated on a Mux: inputs go from Client to Host, snapshots back.
type MuxGamePair struct {
	Client, Host *MuxClient
}

// MuxGamePairs is GamePairs on a mux: one client-host link per player,
// players filling rooms of roomSize; credsFor(room, 0) is the host's,
// credsFor(room, k) player k's. Every allocation has its own address.
func MuxGamePairs(ctx context.Context, m *Mux, server *net.UDPAddr, players, roomSize int,
	credsFor func(room, member int) Creds,
) ([]MuxGamePair, func(), error) {
	alloc := func(cr Creds) (*MuxTURN, error) { return m.Allocate(server, cr) }

	return linkPlayers(players, roomSize, 32, credsFor, func(cc, hc Creds) (MuxGamePair, func() error, error) {
		c, h, closeBoth, err := allocatePair(ctx, cc, hc, alloc, ConnectMux)
		if err != nil {
			return MuxGamePair{}, nil, err
		}

		return MuxGamePair{Client: c.MuxClient, Host: h.MuxClient}, closeBoth, nil
	})
}

// MeasureGameMux runs inputs at inHz and snapshots at outHz for every pair
// on m, as MeasureGame does for endpoints. The sender paces in 1 ms quanta:
// at thousands of players that is hundreds of frames per sendmmsg.
func MeasureGameMux(ctx context.Context, m *Mux, pairs []MuxGamePair, payload int, inHz, outHz float64,
	d time.Duration, pid int,
) (Step, error) {
	flows := make([]MuxFlow, 0, 2*len(pairs))
	for _, p := range pairs {
		flows = append(flows, MuxFlow{From: p.Client, Rate: inHz}, MuxFlow{From: p.Host, Rate: outHz})
	}
	rate := float64(len(pairs)) * (inHz + outHz)

	return measureStep(rate, map[int]bool{m.Port(): true}, pid, func(window func(bool)) (RunResult, error) {
		return RunMux(ctx, m, flows, payload, d, time.Millisecond, 300*time.Millisecond, window)
	})
}
