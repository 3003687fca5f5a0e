package turn

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/pion/stun/v3"
	pionturn "github.com/pion/turn/v4"
)

const (
	arrives = 3 * time.Second        // generous bound for a packet that must arrive
	silence = 400 * time.Millisecond // how long a refused destination is probed
)

// permitFrom makes c's allocation accept packets from the relay IP (all our
// relays share it), so a packet that slipped past the policy would show up.
func permitFrom(t *testing.T, c *pionturn.Client, peer net.PacketConn) {
	t.Helper()
	if err := c.CreatePermission(peer.LocalAddr()); err != nil {
		t.Fatalf("CreatePermission: %v", err)
	}
}

func TestOpenRelayProbes(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("a", "r1")
	fs.join("b", "r1")
	fs.join("c", "r2")
	clientA := newClient(t, srv, srv.Credentials("a", time.Now()))
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	clientC := newClient(t, srv, srv.Credentials("c", time.Now()))
	a, b, c := allocate(t, clientA), allocate(t, clientB), allocate(t, clientC)
	permitFrom(t, clientB, a)
	permitFrom(t, clientC, a)

	sink, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	sinkPort := sink.LocalAddr().(*net.UDPAddr).Port //nolint:forcetypeassert // a UDP socket

	// The control makes every negative below meaningful: a's relay works.
	if !deliver(a, b.LocalAddr(), b, "control a->b", arrives) {
		t.Fatal("control packet to a same-room relay did not arrive")
	}

	t.Run("loopback other port", func(t *testing.T) {
		to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sinkPort}
		if !neverArrives(a, to, sink, "probe loopback", silence) {
			t.Fatal("relay reached a non-relay port on its own IP")
		}
	})
	t.Run("v4-mapped loopback via client", func(t *testing.T) {
		// pion's client encodes ::ffff:a.b.c.d as an IPv4 XOR-PEER-ADDRESS.
		to := &net.UDPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: sinkPort}
		if !neverArrives(a, to, sink, "probe mapped", silence) {
			t.Fatal("relay reached ::ffff:127.0.0.1")
		}
	})

	// Refused by the permission handler: the client's CreatePermission fails,
	// so nothing is sent.
	for _, ip := range []string{
		"10.0.0.1", "192.168.1.1", "172.16.0.1", "169.254.169.254", "127.0.0.2", "0.0.0.0",
		"::1", "64:ff9b::7f00:1", "2002:7f00:1::", "::127.0.0.1", "fe80::1",
	} {
		t.Run("refused "+ip, func(t *testing.T) {
			to := &net.UDPAddr{IP: net.ParseIP(ip), Port: 80}
			if _, err := a.WriteTo([]byte("probe"), to); err == nil {
				t.Fatalf("WriteTo %s succeeded; permission must be refused", to)
			}
		})
	}

	t.Run("raw IPv6-family mapped address", func(t *testing.T) {
		// pion checks Send indications against permissions by IP string, and
		// net.IP prints ::ffff:127.0.0.1 as 127.0.0.1, so this reaches WriteTo
		// with a 16-byte address a udp4 socket would happily send to.
		bPort := b.LocalAddr().(*net.UDPAddr).Port //nolint:forcetypeassert // a UDP socket
		mapped := net.ParseIP("::ffff:127.0.0.1")
		before := srv.Stats().DroppedWrites
		atB, atSink := collect(b, time.Second), collect(sink, time.Second)
		for _, port := range []int{bPort, sinkPort} {
			sendIndication(t, clientA, srv, peerAddrV6{ip: mapped, port: port}, "probe raw mapped")
		}
		// Control for the raw path: the same indication with family IPv4 arrives.
		sendIndication(t, clientA, srv, stunPeer(net.IPv4(127, 0, 0, 1), bPort), "raw v4 control")
		gotB, gotSink := <-atB, <-atSink
		if !gotB["raw v4 control"] {
			t.Fatal("raw IPv4 Send indication control did not arrive")
		}
		if gotB["probe raw mapped"] || gotSink["probe raw mapped"] {
			t.Fatal("raw IPv6-family mapped probe arrived")
		}
		if got := srv.Stats().DroppedWrites; got < before+2 {
			t.Fatalf("dropped writes %d -> %d, want +2", before, got)
		}
	})

	t.Run("other room", func(t *testing.T) {
		if !neverArrives(a, c.LocalAddr(), c, "probe other room", silence) {
			t.Fatal("relay reached a relay in another room")
		}
		if !neverArrives(c, a.LocalAddr(), a, "probe other room back", silence) {
			t.Fatal("relay reached a relay in another room")
		}
		fs.join("c", "r1")
		defer fs.join("c", "r2")
		if !deliver(a, c.LocalAddr(), c, "a->c same room now", arrives) {
			t.Fatal("c did not receive once in the same room: the negative above proves nothing")
		}
	})

	if srv.Stats().DroppedWrites == 0 {
		t.Fatal("no dropped writes counted")
	}
}

// collect returns the set of messages rx reads during d.
func collect(rx net.PacketConn, d time.Duration) <-chan map[string]bool {
	out := make(chan map[string]bool, 1)
	_ = rx.SetReadDeadline(time.Now().Add(d))
	go func() {
		got := make(map[string]bool)
		buf := make([]byte, 1500)
		for {
			n, _, err := rx.ReadFrom(buf)
			if err != nil {
				out <- got

				return
			}
			got[string(buf[:n])] = true
		}
	}()

	return out
}

// stunPeer is an XOR-PEER-ADDRESS as pion's client would encode it.
func stunPeer(ip net.IP, port int) stun.Setter { return peerAddr{IP: ip, Port: port} }

type peerAddr stun.XORMappedAddress

func (p peerAddr) AddTo(m *stun.Message) error {
	return stun.XORMappedAddress(p).AddToAs(m, stun.AttrXORPeerAddress)
}

// peerAddrV6 encodes an XOR-PEER-ADDRESS with family IPv6 even for an
// IPv4-mapped address, which pion's encoder never does.
type peerAddrV6 struct {
	ip   net.IP
	port int
}

func (p peerAddrV6) AddTo(m *stun.Message) error {
	const magicCookie = 0x2112A442
	v := make([]byte, 20)
	binary.BigEndian.PutUint16(v[0:2], 0x02)
	binary.BigEndian.PutUint16(v[2:4], uint16(p.port)^uint16(magicCookie>>16)) //nolint:gosec // test port
	var key [16]byte
	binary.BigEndian.PutUint32(key[0:4], magicCookie)
	copy(key[4:], m.TransactionID[:])
	for i := range 16 {
		v[4+i] = p.ip.To16()[i] ^ key[i]
	}
	m.Add(stun.AttrXORPeerAddress, v)

	return nil
}

type dataAttr []byte

func (d dataAttr) AddTo(m *stun.Message) error {
	m.Add(stun.AttrData, d)

	return nil
}

// sendIndication sends a hand-built Send indication on c's allocation.
func sendIndication(t *testing.T, c *pionturn.Client, srv *Server, peer stun.Setter, payload string) {
	t.Helper()
	msg, err := stun.Build(stun.TransactionID, stun.NewType(stun.MethodSend, stun.ClassIndication),
		dataAttr(payload), peer, stun.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteTo(msg.Raw, srv.UDPAddr()); err != nil {
		t.Fatal(err)
	}
}

func TestRelaySameRoomAndRoomChange(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("a", "r1")
	fs.join("b", "r1")
	clientA := newClient(t, srv, srv.Credentials("a", time.Now()))
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	a, b := allocate(t, clientA), allocate(t, clientB)
	permitFrom(t, clientA, b)
	permitFrom(t, clientB, a)

	if !deliver(a, b.LocalAddr(), b, "a->b 1", arrives) || !deliver(b, a.LocalAddr(), a, "b->a 1", arrives) {
		t.Fatal("same-room relays did not exchange packets")
	}

	fs.join("b", "r2")
	if !neverArrives(a, b.LocalAddr(), b, "a->b 2", silence) || !neverArrives(b, a.LocalAddr(), a, "b->a 2", silence) {
		t.Fatal("packets still flow after b changed room")
	}

	fs.join("b", "r1")
	if !deliver(a, b.LocalAddr(), b, "a->b 3", arrives) || !deliver(b, a.LocalAddr(), a, "b->a 3", arrives) {
		t.Fatal("packets did not resume when b came back")
	}

	fs.join("b", "") // live but in no room
	if !neverArrives(a, b.LocalAddr(), b, "a->b 4", silence) {
		t.Fatal("packets flow to a session in no room")
	}
}

func TestPermit(t *testing.T) {
	srv, _ := newServer(t)
	client := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
	// XOR-PEER-ADDRESS decodes family IPv4 to 4 bytes and IPv6 to 16.
	if !srv.allocs.permit(client, net.IPv4(127, 0, 0, 1).To4()) {
		t.Fatal("relay IP refused")
	}
	for _, ip := range []string{"::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::", "10.0.0.1", "::1"} {
		if srv.allocs.permit(client, net.ParseIP(ip)) {
			t.Errorf("%s permitted", ip)
		}
	}
}

func TestRelayFilterDoesNotAllocate(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("a", "r1")
	fs.join("b", "r1")
	fs.join("c", "r2")
	a, b, c := allocated(t, srv, "a"), allocated(t, srv, "b"), allocated(t, srv, "c")
	rc := func(p net.PacketConn) *relayConn {
		srv.allocs.mu.RLock()
		defer srv.allocs.mu.RUnlock()

		return srv.allocs.relays[uint16(p.LocalAddr().(*net.UDPAddr).Port)] //nolint:gosec,forcetypeassert // a UDP test port
	}
	ra, rb := rc(a), rc(b)
	if ra == nil || rb == nil || rc(c) == nil {
		t.Fatal("relays not registered")
	}
	toB, toC := b.LocalAddr(), c.LocalAddr()
	if _, ok := srv.allocs.outbound(ra, toB); !ok {
		t.Fatal("a->b refused")
	}
	if _, ok := srv.allocs.outbound(ra, toC); ok {
		t.Fatal("a->c allowed")
	}
	for name, f := range map[string]func(){
		"outbound allowed": func() { srv.allocs.outbound(ra, toB) },
		"outbound refused": func() { srv.allocs.outbound(ra, toC) },
		"inbound":          func() { srv.allocs.inbound(rb.local) },
		"dropped write":    func() { srv.allocs.noteDroppedWrite(ra, toC) },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %.1f allocations per packet", name, n)
		}
	}
}
