package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/pion/logging"
	pionturn "github.com/pion/turn/v4"
)

// Creds are TURN long-term credentials.
type Creds struct {
	Username string
	Password string
}

// Allocation is a TURN allocation made by pion's client, whatever carries
// its packets (a socket of its own, or a mux's address).
type Allocation struct {
	Client *pionturn.Client
	Relay  net.PacketConn // pion's view of the allocation
}

// RelayAddr is the allocation's relayed transport address.
func (a Allocation) RelayAddr() *net.UDPAddr { return a.Relay.LocalAddr().(*net.UDPAddr) } //nolint:forcetypeassert // UDP

// release frees the allocation (Refresh 0) and stops the client; what
// carries its packets is the caller's to close, after this.
func (a Allocation) release() error {
	err := a.Relay.Close()
	// Let the refresh leave before the carrier stops.
	time.Sleep(time.Millisecond)
	a.Client.Close()

	return err
}

// TURNEndpoint is an endpoint with a TURN allocation made by pion's client.
type TURNEndpoint struct {
	*Endpoint
	Allocation
}

// Close releases the allocation (Refresh 0) and closes the socket.
func (t *TURNEndpoint) Close() error {
	return errors.Join(t.release(), t.Endpoint.Close())
}

// silent drops pion's client logs.
type silent struct{}

func (silent) NewLogger(string) logging.LeveledLogger {
	return logging.NewDefaultLeveledLoggerForScope("", logging.LogLevelDisabled, nilWriter{})
}

type nilWriter struct{}

func (nilWriter) Write(p []byte) (int, error) { return len(p), nil }

// Allocate opens an endpoint and makes a TURN allocation on server with creds.
func Allocate(server *net.UDPAddr, creds Creds) (*TURNEndpoint, error) {
	e, err := NewEndpoint()
	if err != nil {
		return nil, err
	}
	c, err := pionturn.NewClient(&pionturn.ClientConfig{
		TURNServerAddr: server.String(),
		STUNServerAddr: server.String(),
		Conn:           e.Conn,
		Username:       creds.Username,
		Password:       creds.Password,
		LoggerFactory:  silent{},
	})
	if err != nil {
		_ = e.Close()

		return nil, fmt.Errorf("loadgen: turn client: %w", err)
	}
	// The endpoint's receive loop feeds pion instead of pion's Listen.
	e.OnControl = func(b []byte, from net.Addr) { _, _ = c.HandleInbound(b, from) }
	relay, err := c.Allocate()
	if err != nil {
		c.Close()
		_ = e.Close()

		return nil, fmt.Errorf("loadgen: allocate: %w", err)
	}
	e.Dst = server

	return &TURNEndpoint{Endpoint: e, Allocation: Allocation{Client: c, Relay: relay}}, nil
}

// Connect binds a channel from a to b's relay and from b to a's, then probes
// both ways until ChannelData frames pass.
func Connect(ctx context.Context, a, b *TURNEndpoint) error {
	if err := permitEachOther(a.Relay, b.Relay); err != nil {
		return err
	}

	return probeUntil(ctx, a.Endpoint, b.Endpoint)
}

// permitEachOther sends from each allocation to the other's relay address:
// pion's WriteTo creates the permission synchronously and binds the channel
// (0x4000, its first) in the background.
func permitEachOther(a, b net.PacketConn) error {
	if _, err := a.WriteTo([]byte("bind"), b.LocalAddr()); err != nil {
		return fmt.Errorf("loadgen: permission a->b: %w", err)
	}
	if _, err := b.WriteTo([]byte("bind"), a.LocalAddr()); err != nil {
		return fmt.Errorf("loadgen: permission b->a: %w", err)
	}

	return nil
}

// prober is a client that can send probe frames and count those it gets:
// an Endpoint or a MuxClient.
type prober interface {
	Probe() error
	Probes() uint32
	Addr() *net.UDPAddr
}

// probeUntil sends probes both ways every 10 ms until each side saw one.
func probeUntil(ctx context.Context, a, b prober) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pa, pb := a.Probes(), b.Probes()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if a.Probes() > pa && b.Probes() > pb {
			return nil
		}
		_ = a.Probe()
		_ = b.Probe()
		select {
		case <-ctx.Done():
			return fmt.Errorf("loadgen: probes %s <-> %s did not pass: %w", a.Addr(), b.Addr(), ctx.Err())
		case <-t.C:
		}
	}
}

// Pair is two endpoints that send to each other through some relay.
type Pair struct {
	A, B   *Endpoint
	closer func() error
}

// Close releases both ends.
func (p Pair) Close() error { return p.closer() }

// TURNPairs allocates n pairs on server; credsFor(i) gives the credentials of
// endpoint i (pair i/2). Allocation runs a few at a time.
func TURNPairs(ctx context.Context, server *net.UDPAddr, n int, credsFor func(i int) Creds) ([]Pair, error) {
	pairs := make([]Pair, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			a, err := Allocate(server, credsFor(2*i))
			if err != nil {
				errs <- err

				return
			}
			b, err := Allocate(server, credsFor(2*i+1))
			if err != nil {
				_ = a.Close()
				errs <- err

				return
			}
			if err := Connect(ctx, a, b); err != nil {
				_ = a.Close()
				_ = b.Close()
				errs <- err

				return
			}
			pairs[i] = Pair{A: a.Endpoint, B: b.Endpoint, closer: func() error { return errors.Join(a.Close(), b.Close()) }}
			errs <- nil
		}()
	}
	var err error
	for range n {
		err = errors.Join(err, <-errs)
	}
	if err != nil {
		ClosePairs(pairs)

		return nil, err
	}

	return pairs, nil
}

// ClosePairs closes every set-up pair.
func ClosePairs(pairs []Pair) {
	for _, p := range pairs {
		if p.closer != nil {
			_ = p.Close()
		}
	}
}

// DirectPairs opens n pairs of sockets that send straight to each other.
func DirectPairs(ctx context.Context, n int) ([]Pair, error) {
	pairs := make([]Pair, 0, n)
	for range n {
		a, err := NewEndpoint()
		if err != nil {
			ClosePairs(pairs)

			return nil, err
		}
		b, err := NewEndpoint()
		if err != nil {
			_ = a.Close()
			ClosePairs(pairs)

			return nil, err
		}
		a.Dst, b.Dst = b.Addr(), a.Addr()
		pairs = append(pairs, Pair{A: a, B: b, closer: func() error { return errors.Join(a.Close(), b.Close()) }})
		if err := probeUntil(ctx, a, b); err != nil {
			ClosePairs(pairs)

			return nil, err
		}
	}

	return pairs, nil
}

// BarePairs registers n pairs with a bare relay (bench/cmd/bareudp): each
// socket sends "pair <id>" until the relay has paired it, after which the
// relay forwards everything verbatim to the other socket of the pair.
func BarePairs(ctx context.Context, relay *net.UDPAddr, n int) ([]Pair, error) {
	pairs := make([]Pair, 0, n)
	base := time.Now().UnixNano()
	for i := range n {
		a, err := NewEndpoint()
		if err != nil {
			ClosePairs(pairs)

			return nil, err
		}
		b, err := NewEndpoint()
		if err != nil {
			_ = a.Close()
			ClosePairs(pairs)

			return nil, err
		}
		a.Dst, b.Dst = relay, relay
		pairs = append(pairs, Pair{A: a, B: b, closer: func() error { return errors.Join(a.Close(), b.Close()) }})
		reg := []byte(fmt.Sprintf("pair %d-%d", base, i))
		for _, e := range []*Endpoint{a, b} {
			if _, err := e.Conn.WriteToUDP(reg, relay); err != nil {
				ClosePairs(pairs)

				return nil, fmt.Errorf("loadgen: register: %w", err)
			}
		}
		if err := probeUntil(ctx, a, b); err != nil {
			ClosePairs(pairs)

			return nil, err
		}
	}

	return pairs, nil
}

// RESTCreds computes TURN REST credentials (username "<expiry>:<user>",
// password base64 HMAC-SHA1) as a server sharing secret would issue them.
func RESTCreds(secret, user string, ttl time.Duration) Creds {
	u, p, _ := pionturn.GenerateLongTermTURNRESTCredentials(secret, user, ttl)

	return Creds{Username: u, Password: p}
}

// GamePairs allocates one client-host link per player, players filling rooms
// of roomSize (a host and roomSize-1 players); credsFor(room, 0) is the
// host's, credsFor(room, k) player k's.
func GamePairs(ctx context.Context, server *net.UDPAddr, players, roomSize int,
	credsFor func(room, member int) Creds,
) ([]GamePair, func(), error) {
	alloc := func(cr Creds) (*TURNEndpoint, error) { return Allocate(server, cr) }

	return linkPlayers(players, roomSize, 16, credsFor, func(cc, hc Creds) (GamePair, func() error, error) {
		c, h, closeBoth, err := allocatePair(ctx, cc, hc, alloc, Connect)
		if err != nil {
			return GamePair{}, nil, err
		}

		return GamePair{Client: c.Endpoint, Host: h.Endpoint}, closeBoth, nil
	})
}

// allocatePair makes a player's allocation and its host's with alloc and
// connects them, closing both if any step fails; closeBoth closes both.
func allocatePair[T interface{ Close() error }](ctx context.Context, client, host Creds,
	alloc func(Creds) (T, error), connect func(context.Context, T, T) error,
) (c, h T, closeBoth func() error, err error) {
	if c, err = alloc(client); err != nil {
		return c, h, nil, err
	}
	if h, err = alloc(host); err != nil {
		_ = c.Close()

		return c, h, nil, err
	}
	if err = connect(ctx, c, h); err != nil {
		_ = c.Close()
		_ = h.Close()

		return c, h, nil, err
	}

	return c, h, func() error { return errors.Join(c.Close(), h.Close()) }, nil
}

// linkPlayers makes one client-host link per player, par at a time, players
// filling rooms of roomSize (a host and roomSize-1 players): link gets
// player k's credentials (credsFor(room, k)) and its room's host's
// (credsFor(room, 0)), and returns the link and how to close it. If any
// link fails, every one made is closed and the errors are returned.
func linkPlayers[P any](players, roomSize, par int, credsFor func(room, member int) Creds,
	link func(client, host Creds) (P, func() error, error),
) ([]P, func(), error) {
	pairs := make([]P, players)
	closers := make([]func() error, players)
	errs := make(chan error, players)
	sem := make(chan struct{}, par)
	for k := range players {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			room, member := k/(roomSize-1), k%(roomSize-1)+1
			p, closer, err := link(credsFor(room, member), credsFor(room, 0))
			if err == nil {
				pairs[k], closers[k] = p, closer
			}
			errs <- err
		}()
	}
	var err error
	for range players {
		err = errors.Join(err, <-errs)
	}
	closeAll := func() {
		for _, c := range closers {
			if c != nil {
				_ = c()
			}
		}
	}
	if err != nil {
		closeAll()

		return nil, nil, err
	}

	return pairs, closeAll, nil
}
