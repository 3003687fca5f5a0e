package server

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/logging"
	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

// BenchmarkTURNFastPath is one game packet (150 bytes of ChannelData)
// through the whole server's TURN fast path: client A's socket, the
// listener's read loop, client B's socket, with 64 packets in flight. It
// runs side by side with metrics off, on but never scraped, and on and
// scraped over HTTP every 100 ms (150 times as often as Prometheus' default
// 15 s), so the difference is what metrics cost the relay. ns/op includes
// the clients' send and receive, on the same machine.
//
//	go test -run '^$' -bench TURNFastPath -count 5 ./server/
//
// The server is started from flags alone and scraped by plain HTTP, so the
// file also builds on a tree without metrics (run it there with -bench
// 'TURNFastPath/metrics=off' for the figure before the counters).
func BenchmarkTURNFastPath(b *testing.B) {
	b.Run("metrics=off", func(b *testing.B) { benchFastPath(b, false, 0) })
	b.Run("metrics=on", func(b *testing.B) { benchFastPath(b, true, 0) })
	b.Run("metrics=scraped", func(b *testing.B) { benchFastPath(b, true, 100*time.Millisecond) })
}

const (
	benchPayload = 150
	benchWindow  = 64 // packets in flight
)

func benchFastPath(b *testing.B, metrics bool, scrapeEvery time.Duration) {
	args := []string{"-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-public-ip", "127.0.0.1", "-turn-secret", "0123456789abcdef0123456789abcdef", "-turn-max-bandwidth", "off"}
	var metricsAddr string
	if metrics {
		metricsAddr = freeLoopbackPort(b)
		args = append(args, "-metrics-addr", metricsAddr)
	}
	cfg, err := LoadConfig(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		b.Skipf("this tree cannot run the server so: %v", err)
	}
	s, err := New(b.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	httpAddr, turnAddr := s.Addrs().HTTP, s.Addrs().TURNUDP

	// Two players in a room, each with an allocation whose channel to the
	// other is bound: then their ChannelData takes the fast path.
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
	defer cancel()
	host, _, err := lobbytest.Connect(ctx, "ws://"+httpAddr+"/ws", "A", lobbytest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = host.CloseNow() })
	var rj protocol.RoomJoined
	if err := host.Call(ctx, protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "bench", MaxPlayers: 2}, &rj); err != nil {
		b.Fatal(err)
	}
	guest, _, err := lobbytest.Connect(ctx, "ws://"+httpAddr+"/ws", "B", lobbytest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = guest.CloseNow() })
	var gj protocol.RoomJoined
	if err := guest.Call(ctx, protocol.TypeJoinRoom, &protocol.JoinRoom{Code: rj.Room.Code}, &gj); err != nil {
		b.Fatal(err)
	}
	a, c := newBenchPeer(b, turnAddr, rj.ICE), newBenchPeer(b, turnAddr, gj.ICE)
	a.bindTo(b, c)

	var scrapes atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if scrapeEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(scrapeEvery)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if resp, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
						scrapes.Add(1)
					}
				}
			}
		}()
	}

	// A's socket sends; B's reader hands a token back per packet, so at
	// most benchWindow are in flight. A packet lost on the way is given up
	// after a second and counted.
	pkt := make([]byte, channelDataHeader+benchPayload)
	binary.BigEndian.PutUint16(pkt[0:2], a.channel)
	binary.BigEndian.PutUint16(pkt[2:4], benchPayload)
	tokens := c.take()
	var lost int
	b.SetBytes(benchPayload)
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	for i := range b.N {
		if i >= benchWindow {
			select {
			case <-tokens:
			case <-time.After(time.Second):
				lost++
			}
		}
		if _, err := a.conn.WriteTo(pkt, a.server); err != nil {
			b.Fatal(err)
		}
	}
	for range min(b.N, benchWindow) {
		select {
		case <-tokens:
		case <-time.After(time.Second):
			lost++
		}
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	close(stop)
	wg.Wait()
	if cpuOK {
		// The whole process's CPU per packet (server, both clients and the
		// scrapes): less at the mercy of other load on the machine than
		// ns/op, which counts waiting for a core too.
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
	b.ReportMetric(float64(lost), "lost")
	if scrapeEvery > 0 {
		b.ReportMetric(float64(scrapes.Load()), "scrapes")
	}
	if metrics {
		// The packets took the fast path, or this measured something else.
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		var fast float64
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, `hostrelay_turn_relayed_packets_total{path="fast"} `); ok {
				fast, _ = strconv.ParseFloat(v, 64)
			}
		}
		if fast < float64(b.N-lost) {
			b.Fatalf("%v packets on the fast path of %d sent", fast, b.N)
		}
	}
}

// channelDataHeader is the channel number and length before the payload.
const channelDataHeader = 4

// freeLoopbackPort is a loopback address with a port free a moment ago.
func freeLoopbackPort(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// benchPeer is a client socket with an allocation. pion's client makes the
// allocation and binds the channel; it reads the socket through in (fed by
// our reader), so once set up the benchmark reads the socket itself.
type benchPeer struct {
	conn    *net.UDPConn
	server  *net.UDPAddr
	client  *pionturn.Client
	relay   net.PacketConn
	channel uint16 // the channel number this client sent ChannelData on; 0 until it did

	in       chan benchPacket
	takeover atomic.Bool
	tokens   chan struct{}
	sentCD   atomic.Uint32 // the channel number of the last ChannelData pion sent
}

type benchPacket struct {
	b    []byte
	from net.Addr
}

func newBenchPeer(b *testing.B, turnAddr string, ice protocol.ICE) *benchPeer {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	server, err := net.ResolveUDPAddr("udp4", turnAddr)
	if err != nil {
		b.Fatal(err)
	}
	p := &benchPeer{conn: conn, server: server, in: make(chan benchPacket, 256), tokens: make(chan struct{}, 4*benchWindow)}
	go p.read()
	c, err := pionturn.NewClient(&pionturn.ClientConfig{
		STUNServerAddr: turnAddr, TURNServerAddr: turnAddr, Conn: benchConn{p},
		Username: ice.Servers[0].Username, Password: ice.Servers[0].Credential,
		LoggerFactory: logging.NewDefaultLoggerFactory(),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Listen(); err != nil {
		b.Fatal(err)
	}
	relay, err := c.Allocate()
	if err != nil {
		b.Fatal(err)
	}
	p.client, p.relay = c, relay
	b.Cleanup(func() {
		_ = relay.Close()
		c.Close()
		_ = conn.Close() // ends read, which ends pion's loop
	})
	return p
}

// read is the socket's only reader: to pion until takeover, then a token
// per ChannelData for the benchmark.
func (p *benchPeer) read() {
	defer close(p.in)
	buf := make([]byte, 1500)
	for {
		n, from, err := p.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if p.takeover.Load() {
			if n >= channelDataHeader && buf[0]&0xC0 == 0x40 {
				p.tokens <- struct{}{}
			}
			continue
		}
		p.in <- benchPacket{append([]byte(nil), buf[:n]...), from}
	}
}

// take hands the socket to the benchmark and returns its tokens.
func (p *benchPeer) take() <-chan struct{} {
	p.takeover.Store(true)
	return p.tokens
}

// bindTo exchanges packets with q until both clients send ChannelData, so
// both channels are bound; then both sockets are the benchmark's.
func (p *benchPeer) bindTo(b *testing.B, q *benchPeer) {
	for _, x := range []struct{ c, peer *benchPeer }{{p, q}, {q, p}} {
		if err := x.c.client.CreatePermission(x.peer.relay.LocalAddr()); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.sentCD.Load() == 0 || q.sentCD.Load() == 0 {
		if time.Now().After(deadline) {
			b.Fatal("channels not bound")
		}
		_, _ = p.relay.WriteTo([]byte("bind"), q.relay.LocalAddr())
		_, _ = q.relay.WriteTo([]byte("bind"), p.relay.LocalAddr())
		time.Sleep(20 * time.Millisecond) // setup only, outside the timed loop
	}
	p.channel, q.channel = uint16(p.sentCD.Load()), uint16(q.sentCD.Load()) //nolint:gosec // a channel number
	// The last packets pion sent may still be on their way to the pion
	// reader; they land before the takeover's first token is counted or are
	// ChannelData counted as one (a token over is harmless: the window is
	// only a bound).
	q.take()
	p.take()
}

// benchConn is the PacketConn pion's client uses: writes go to the socket
// (and ChannelData is noted), reads come from the peer's reader.
type benchConn struct{ p *benchPeer }

func (c benchConn) ReadFrom(b []byte) (int, net.Addr, error) {
	pkt, ok := <-c.p.in
	if !ok {
		return 0, nil, net.ErrClosed
	}
	return copy(b, pkt.b), pkt.from, nil
}

func (c benchConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if len(b) >= channelDataHeader && b[0]&0xC0 == 0x40 {
		c.p.sentCD.Store(uint32(binary.BigEndian.Uint16(b[0:2])))
	}
	return c.p.conn.WriteTo(b, addr)
}

func (c benchConn) Close() error                       { return c.p.conn.Close() }
func (c benchConn) LocalAddr() net.Addr                { return c.p.conn.LocalAddr() }
func (c benchConn) SetDeadline(t time.Time) error      { return c.p.conn.SetWriteDeadline(t) }
func (c benchConn) SetReadDeadline(t time.Time) error  { return nil }
func (c benchConn) SetWriteDeadline(t time.Time) error { return c.p.conn.SetWriteDeadline(t) }
