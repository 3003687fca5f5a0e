package loadgen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/stun/v3"
)

// TURN attributes pion keeps in an internal package.
const (
	attrChannelNumber      = stun.AttrType(0x000C)
	attrLifetime           = stun.AttrType(0x000D)
	attrRequestedTransport = stun.AttrType(0x0019)
	protoUDP               = 17
)

// Constants pion offers only as values.
var (
	methodAllocate         = stun.NewType(stun.MethodAllocate, stun.ClassRequest)         //nolint:gochecknoglobals // a constant
	methodRefresh          = stun.NewType(stun.MethodRefresh, stun.ClassRequest)          //nolint:gochecknoglobals // a constant
	methodCreatePermission = stun.NewType(stun.MethodCreatePermission, stun.ClassRequest) //nolint:gochecknoglobals // a constant
	methodChannelBind      = stun.NewType(stun.MethodChannelBind, stun.ClassRequest)      //nolint:gochecknoglobals // a constant
)

type rawAttr struct {
	t stun.AttrType
	v []byte
}

func (a rawAttr) AddTo(m *stun.Message) error { m.Add(a.t, a.v); return nil } //nolint:nlreturn // one-liner

func lifetime(d time.Duration) rawAttr {
	v := make([]byte, 4)
	binary.BigEndian.PutUint32(v, uint32(d/time.Second)) //nolint:gosec // small

	return rawAttr{attrLifetime, v}
}

func channelNumber(n uint16) rawAttr {
	return rawAttr{attrChannelNumber, append(binary.BigEndian.AppendUint16(make([]byte, 0, 4), n), 0, 0)} // number, RFFU
}

type peerAttr stun.XORMappedAddress

func (p peerAttr) AddTo(m *stun.Message) error {
	return stun.XORMappedAddress(p).AddToAs(m, stun.AttrXORPeerAddress)
}

// stunClient runs one STUN transaction at a time on its own socket. It is
// deliberately bare (no retransmission, no goroutines) so the generator's
// cost per request stays small next to the server's.
type stunClient struct {
	conn      *net.UDPConn
	server    *net.UDPAddr
	creds     Creds
	realm     stun.Realm
	nonce     stun.Nonce
	integrity stun.MessageIntegrity
	buf       []byte
}

func newSTUNClient(server *net.UDPAddr, creds Creds) (*stunClient, error) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}

	return &stunClient{conn: conn, server: server, creds: creds, buf: make([]byte, 1500)}, nil
}

func (c *stunClient) Close() error { return c.conn.Close() }

var errTimeout = errors.New("loadgen: no STUN response")

// do sends a request and returns the response with the same transaction id.
func (c *stunClient) do(setters ...stun.Setter) (*stun.Message, error) {
	req, err := stun.Build(setters...)
	if err != nil {
		return nil, fmt.Errorf("loadgen: build: %w", err)
	}
	if _, err := c.conn.WriteToUDP(req.Raw, c.server); err != nil {
		return nil, fmt.Errorf("loadgen: send: %w", err)
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		n, _, err := c.conn.ReadFromUDP(c.buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, errTimeout
			}

			return nil, fmt.Errorf("loadgen: read: %w", err)
		}
		res := &stun.Message{Raw: append([]byte(nil), c.buf[:n]...)}
		if res.Decode() != nil || res.TransactionID != req.TransactionID {
			continue // a late answer to an earlier request
		}

		return res, nil
	}
}

func errorCode(m *stun.Message) int {
	var code stun.ErrorCodeAttribute
	if code.GetFrom(m) != nil {
		return 0
	}

	return int(code.Code)
}

// authed sends an authenticated request, retrying once on a stale nonce.
func (c *stunClient) authed(t stun.MessageType, attrs ...stun.Setter) (*stun.Message, error) {
	for range 2 {
		setters := append([]stun.Setter{stun.TransactionID, t}, attrs...)
		setters = append(setters, stun.NewUsername(c.creds.Username), c.realm, c.nonce, c.integrity, stun.Fingerprint)
		res, err := c.do(setters...)
		if err != nil {
			return nil, err
		}
		if res.Type.Class == stun.ClassSuccessResponse {
			return res, nil
		}
		if errorCode(res) == int(stun.CodeStaleNonce) {
			_ = c.nonce.GetFrom(res)

			continue
		}

		return nil, fmt.Errorf("loadgen: %s: error %d", t.Method, errorCode(res))
	}

	return nil, fmt.Errorf("loadgen: %s: stale nonce twice", t.Method)
}

// allocate runs Allocate the way browsers do: first without credentials,
// which the server answers 401 with realm and nonce, then with them.
func (c *stunClient) allocate() (*net.UDPAddr, error) {
	transport := rawAttr{attrRequestedTransport, []byte{protoUDP, 0, 0, 0}}
	res, err := c.do(stun.TransactionID, methodAllocate, transport, stun.Fingerprint)
	if err != nil {
		return nil, err
	}
	if errorCode(res) != int(stun.CodeUnauthorized) {
		return nil, fmt.Errorf("loadgen: allocate: want 401, got %s %d", res.Type, errorCode(res))
	}
	if err := c.realm.GetFrom(res); err != nil {
		return nil, fmt.Errorf("loadgen: 401 without realm: %w", err)
	}
	if err := c.nonce.GetFrom(res); err != nil {
		return nil, fmt.Errorf("loadgen: 401 without nonce: %w", err)
	}
	c.integrity = stun.NewLongTermIntegrity(c.creds.Username, c.realm.String(), c.creds.Password)
	res, err = c.authed(methodAllocate, transport)
	if err != nil {
		return nil, err
	}
	var relayed stun.XORMappedAddress
	if err := relayed.GetFromAs(res, stun.AttrXORRelayedAddress); err != nil {
		return nil, fmt.Errorf("loadgen: allocate: %w", err)
	}

	return &net.UDPAddr{IP: relayed.IP, Port: relayed.Port}, nil
}

// bind adds a permission and a channel (0x4000) for peer.
func (c *stunClient) bind(peer *net.UDPAddr) error {
	p := peerAttr{IP: peer.IP, Port: peer.Port}
	if _, err := c.authed(methodCreatePermission, p); err != nil {
		return err
	}
	_, err := c.authed(methodChannelBind, channelNumber(DefaultChannel), p)

	return err
}

// release deletes the allocation (Refresh with lifetime 0).
func (c *stunClient) release() error {
	_, err := c.authed(methodRefresh, lifetime(0))

	return err
}

// CycleResult counts allocation cycles.
type CycleResult struct {
	Cycles   uint64
	Failures uint64
	Elapsed  time.Duration
	FirstErr error
}

// Cycles runs workers that each repeat, on a fresh socket each time: Allocate
// (401 challenge, then authenticated), CreatePermission, ChannelBind, and
// Refresh with lifetime 0 to release it, for d. The permission and channel name
// peer (a relay address of the same server, e.g. the worker's own).
func Cycles(ctx context.Context, server *net.UDPAddr, workers int, d time.Duration, credsFor func(i int) Creds,
	window func(start bool),
) CycleResult {
	var cycles, failures atomic.Uint64
	var firstErr error
	var errOnce sync.Once
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	if window != nil {
		window(true)
	}
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A fresh socket (5-tuple) per cycle: coturn keeps a released
			// 5-tuple reserved for a while and answers 437 to a new Allocate.
			for ctx.Err() == nil {
				c, err := newSTUNClient(server, credsFor(w))
				if err != nil {
					errOnce.Do(func() { firstErr = err })

					return
				}
				err = c.cycle()
				_ = c.Close()
				if err != nil {
					failures.Add(1)
					errOnce.Do(func() { firstErr = err })

					continue
				}
				cycles.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if window != nil {
		window(false)
	}

	return CycleResult{Cycles: cycles.Load(), Failures: failures.Load(), Elapsed: elapsed, FirstErr: firstErr}
}

func (c *stunClient) cycle() error {
	relay, err := c.allocate()
	if err != nil {
		return err
	}
	if err := c.bind(relay); err != nil {
		return err
	}

	return c.release()
}

// HeldAllocations are allocations kept alive for a memory measurement.
type HeldAllocations struct{ clients []*stunClient }

// Release deletes them all.
func (h *HeldAllocations) Release() {
	for _, c := range h.clients {
		_ = c.release()
		_ = c.Close()
	}
	h.clients = nil
}

// Hold makes n allocations, each with a permission and a channel to its own
// relay address, and keeps them until Release.
func Hold(ctx context.Context, server *net.UDPAddr, n int, credsFor func(i int) Creds) (*HeldAllocations, error) {
	h := &HeldAllocations{clients: make([]*stunClient, 0, n)}
	for i := range n {
		if err := ctx.Err(); err != nil {
			h.Release()

			return nil, err
		}
		c, err := newSTUNClient(server, credsFor(i))
		if err != nil {
			h.Release()

			return nil, err
		}
		relay, err := c.allocate()
		if err == nil {
			err = c.bind(relay)
		}
		if err != nil {
			_ = c.Close()
			h.Release()

			return nil, fmt.Errorf("loadgen: allocation %d: %w", i, err)
		}
		h.clients = append(h.clients, c)
	}

	return h, nil
}
