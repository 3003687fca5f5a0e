package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/pion/logging"
	"github.com/pion/transport/v4/vnet"
	pionturn "github.com/pion/turn/v4"
	"github.com/pion/webrtc/v4"

	"github.com/hostrelay/hostrelay/client"
	"github.com/hostrelay/hostrelay/protocol"
)

const vnetTURN = "10.9.0.1"

// lossyNet is a pion virtual network, a TURN server on it, and a seeded
// filter that drops a share of every packet crossing the router: a
// deterministic bad network with no real packets involved.
type lossyNet struct {
	router *vnet.Router
	turn   *pionturn.Server
	peers  []*vnet.Net
	mu     sync.Mutex
	rng    *rand.Rand
	drops  int
	chunks int
}

func newLossyNet(t *testing.T, seed uint64, loss float64, delay, jitter time.Duration, secret string) *lossyNet {
	t.Helper()
	lf := logging.NewDefaultLoggerFactory()
	lf.DefaultLogLevel = logging.LogLevelWarn
	router, err := vnet.NewRouter(&vnet.RouterConfig{CIDR: "10.9.0.0/24", MinDelay: delay, MaxJitter: jitter, LoggerFactory: lf})
	if err != nil {
		t.Fatal(err)
	}
	ln := &lossyNet{router: router, rng: rand.New(rand.NewPCG(seed, seed))}
	router.AddChunkFilter(func(vnet.Chunk) bool {
		ln.mu.Lock()
		defer ln.mu.Unlock()
		ln.chunks++
		if ln.rng.Float64() < loss {
			ln.drops++
			return false
		}
		return true
	})
	turnNet, err := vnet.NewNet(&vnet.NetConfig{StaticIPs: []string{vnetTURN}})
	if err != nil {
		t.Fatal(err)
	}
	if err := router.AddNet(turnNet); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		n, err := vnet.NewNet(&vnet.NetConfig{StaticIPs: []string{fmt.Sprintf("10.9.0.%d", 10+i)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := router.AddNet(n); err != nil {
			t.Fatal(err)
		}
		ln.peers = append(ln.peers, n)
	}
	if err := router.Start(); err != nil {
		t.Fatal(err)
	}
	pc, err := turnNet.ListenPacket("udp4", vnetTURN+":3478")
	if err != nil {
		t.Fatal(err)
	}
	// The same TURN REST scheme and secret as the lobby, so the credentials
	// the real lobby issues work here too.
	ln.turn, err = pionturn.NewServer(pionturn.ServerConfig{
		Realm:       "hostrelay",
		AuthHandler: pionturn.LongTermTURNRESTAuthHandler(secret, nil),
		PacketConnConfigs: []pionturn.PacketConnConfig{{
			PacketConn: pc,
			RelayAddressGenerator: &pionturn.RelayAddressGeneratorStatic{
				RelayAddress: net.ParseIP(vnetTURN), Address: vnetTURN, Net: turnNet,
			},
		}},
		LoggerFactory: lf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ln.turn.Close()
		_ = router.Stop()
	})
	return ln
}

func (ln *lossyNet) stats() (drops, chunks int) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	return ln.drops, ln.chunks
}

// options puts a client's WebRTC on vnet peer i, talking to the vnet TURN
// with the credentials the lobby issued.
func (ln *lossyNet) options(t *testing.T, name string, i int) client.Options {
	return client.Options{
		Name:   name,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ConfigureWebRTC: func(se *webrtc.SettingEngine) {
			se.SetNet(ln.peers[i])
		},
		RewriteICE: func(ice protocol.ICE) protocol.ICE {
			for i := range ice.Servers {
				ice.Servers[i].URLs = []string{"turn:" + vnetTURN + ":3478?transport=udp"}
			}
			return ice
		},
	}
}

// TestOnLossyVirtualNetwork: with 5% seeded loss each way and 20–30 ms of
// delay, host and client still connect relay/relay, every reliable message
// arrives in order, and game packets keep flowing.
func TestOnLossyVirtualNetwork(t *testing.T) {
	const secret = "client-tests-secret-0123456789"
	url := startServerWithSecret(t, secret)
	ln := newLossyNet(t, 42, 0.05, 20*time.Millisecond, 10*time.Millisecond, secret)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	hostL, err := client.Dial(ctx, url, ln.options(t, "Host", 0))
	if err != nil {
		t.Fatal(err)
	}
	defer hostL.Close()
	host, err := hostL.CreateRoom(ctx, protocol.CreateRoom{Name: "vnet", MaxPlayers: 2})
	if err != nil {
		t.Fatal(err)
	}
	clientL, err := client.Dial(ctx, url, ln.options(t, "Client", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer clientL.Close()
	room, err := clientL.JoinRoom(ctx, host.Code(), "")
	if err != nil {
		t.Fatal(err)
	}
	next[client.PeerOpen](t, room)
	next[client.PeerOpen](t, host)
	if l, r, err := room.SelectedPair(host.You()); err != nil || l != "relay" || r != "relay" {
		t.Fatalf("pair %s/%s %v", l, r, err)
	}

	const n = 100
	for i := 0; i < n; i++ {
		if err := room.Send(host.You(), client.Events, []byte(fmt.Sprintf("e%03d", i))); err != nil {
			t.Fatal(err)
		}
		_ = room.Send(host.You(), client.Game, []byte(fmt.Sprintf("g%03d", i)))
		time.Sleep(5 * time.Millisecond)
	}
	want, games := 0, 0
	deadline := time.After(30 * time.Second)
	for want < n {
		select {
		case m := <-host.Messages():
			switch m.Channel {
			case client.Events:
				if got := string(m.Data); got != fmt.Sprintf("e%03d", want) {
					t.Fatalf("reliable message %q, want e%03d", got, want)
				}
				want++
			case client.Game:
				games++
			}
		case <-deadline:
			t.Fatalf("%d of %d reliable messages arrived", want, n)
		}
	}
	drops, chunks := ln.stats()
	t.Logf("vnet dropped %d of %d packets; %d of %d game packets arrived", drops, chunks, games, n)
	if drops == 0 {
		t.Fatal("the network dropped nothing: the loss filter is not in the path")
	}
	if games == 0 {
		t.Fatal("no game packet arrived")
	}
}
