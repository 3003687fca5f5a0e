package turn

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/testcert"
	"github.com/hostrelay/hostrelay/internal/testwait"
)

// withTLS gives the server a TURN-over-TLS listener serving certs' leaf.
func withTLS(certs testcert.Certs) func(*Config) {
	return func(c *Config) {
		c.TLSAddr = "127.0.0.1:0"
		c.TLS = &tls.Config{Certificates: []tls.Certificate{certs.Leaf}}
	}
}

// dialTLS opens a TLS connection to the server's TURN-over-TLS port that
// trusts certs' CA, handshaken, closed at test end.
func dialTLS(t *testing.T, srv *Server, certs testcert.Certs) *tls.Conn {
	t.Helper()
	d := tls.Dialer{Config: certs.ClientConfig("localhost")}
	ctx, cancel := context.WithTimeout(t.Context(), testwait.Within)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", srv.TLSAddr().String())
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })

	return c.(*tls.Conn) //nolint:forcetypeassert // tls.Dialer returns *tls.Conn
}

// newTLSClient returns a real pion TURN client over TLS, closed at test end.
func newTLSClient(t *testing.T, srv *Server, certs testcert.Certs, creds Credentials) *pionturn.Client {
	t.Helper()

	return startClient(t, pionturn.NewSTUNConn(dialTLS(t, srv, certs)), srv.TLSAddr().String(), creds)
}

// A client that reaches the server only over TLS allocates, and its relay
// trades data both ways with a room mate's relay over UDP; its connection
// is counted as TLS.
func TestTLSAllocateAndRelay(t *testing.T) {
	certs := testcert.New(t)
	srv, fs := newServer(t, withTLS(certs))
	fs.join("a", "room")
	fs.join("b", "room")
	clientA := newTLSClient(t, srv, certs, srv.Credentials("a", time.Now()))
	a := allocate(t, clientA)
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	b := allocate(t, clientB)
	permitFrom(t, clientA, b)
	permitFrom(t, clientB, a)

	if !deliver(a, b.LocalAddr(), b, "over TLS, out", arrives) {
		t.Fatal("nothing relayed from the TLS client")
	}
	if !deliver(b, a.LocalAddr(), a, "over TLS, in", arrives) {
		t.Fatal("nothing relayed to the TLS client")
	}
	if st := srv.Stats(); st.TLSConns != 1 || st.TCPConns != 0 || st.Allocations != 2 {
		t.Fatalf("stats %+v, want 1 TLS connection and 2 allocations", st)
	}
}

// The TCP and TLS listeners share one per-IP cap: at it a connection on
// either is served, past it a TLS connection is closed before its handshake.
func TestTLSSharesTCPCaps(t *testing.T) {
	certs := testcert.New(t)
	srv, _ := newServer(t, withTLS(certs), func(c *Config) { c.MaxTCPConnsPerIP, c.MaxTCPConns = 2, 3 })
	tcp := dialFrom(t, srv, "127.0.0.1")
	if !answersBinding(t, tcp) {
		t.Fatal("the TCP connection within the cap was not served")
	}
	if !answersBinding(t, dialTLS(t, srv, certs)) {
		t.Fatal("the TLS connection at the cap was not served")
	}

	raw, err := net.Dial("tcp", srv.TLSAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	over := tls.Client(raw, certs.ClientConfig("localhost"))
	if err := over.HandshakeContext(t.Context()); err == nil {
		t.Fatal("a TLS connection past the per-IP cap completed its handshake")
	}
	if got := srv.Stats().TLSRefused; got != 1 {
		t.Fatalf("TLSRefused %d, want 1", got)
	}

	// The total cap counts both listeners too.
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	c, err := d.Dial("tcp", srv.TLSAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !answersBinding(t, tls.Client(c, certs.ClientConfig("localhost"))) {
		t.Fatal("a TLS connection from another IP at the total cap was not served")
	}
	if !closedByServer(t, dialFrom(t, srv, "127.0.0.3")) {
		t.Fatal("a TCP connection past the total cap was left open")
	}

	_ = tcp.Close()
	testwait.For(t, "the closed TCP connection to free its place", func() bool { return srv.Stats().TCPConns == 0 })
	if !answersBinding(t, dialTLS(t, srv, certs)) {
		t.Fatal("a TLS connection did not get the place the TCP one freed")
	}
}

// A TLS connection that never sends its ClientHello is closed at the
// allocate timeout, as a silent TCP one is; one that speaks plain STUN to
// the TLS port fails its handshake and is closed at once.
func TestTLSHandshakeBounded(t *testing.T) {
	certs := testcert.New(t)
	srv, _ := newServer(t, withTLS(certs), func(c *Config) { c.TCPAllocateTimeout = 300 * time.Millisecond })

	silent, err := net.Dial("tcp", srv.TLSAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	plain, err := net.Dial("tcp", srv.TLSAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if answersBinding(t, plain) {
		t.Fatal("plain STUN was answered on the TLS port")
	}
	if !closedByServer(t, silent) || !closedByServer(t, plain) {
		t.Fatal("a connection that did not complete a handshake was left open")
	}
	testwait.For(t, "both connections to be forgotten", func() bool { return srv.Stats().TLSConns == 0 })
	if st := srv.Stats(); st.TLSAllocateTimeouts != 1 || st.TLSHandshakeErrors != 1 {
		t.Fatalf("TLSAllocateTimeouts %d, TLSHandshakeErrors %d; want 1 and 1", st.TLSAllocateTimeouts, st.TLSHandshakeErrors)
	}

	// Handshaken in time but no allocation: closed at the same timeout.
	idle := dialTLS(t, srv, certs)
	if !closedByServer(t, idle) {
		t.Fatal("a TLS connection without an allocation was left open")
	}
	testwait.For(t, "the idle TLS connection to be counted", func() bool { return srv.Stats().TLSAllocateTimeouts == 2 })
}

// Our TURN-over-TCP framing applies inside TLS: each frame whose size
// wraps in pion v4.1.4's framer closes its connection, and the server keeps
// serving TLS clients.
func TestTLSFramed(t *testing.T) {
	certs := testcert.New(t)
	srv, fs := newServer(t, withTLS(certs))
	for name, frame := range wrappingFrames() {
		c := dialTLS(t, srv, certs)
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		if !closedByServer(t, c) {
			t.Fatalf("%s: the server kept the connection open", name)
		}
	}
	testwait.For(t, "the server to forget the connections", func() bool { return srv.Stats().TLSConns == 0 })
	if got := srv.Stats().TLSBadFrames; got != 2 {
		t.Fatalf("TLSBadFrames %d, want 2", got)
	}
	fs.join("honest", "room")
	allocate(t, newTLSClient(t, srv, certs, srv.Credentials("honest", time.Now())))
}

// A TLS client that stops reading while data is relayed to it is cut off at
// the write timeout, as a TCP one is, and its allocation deleted.
func TestTLSWriteTimeout(t *testing.T) {
	certs := testcert.New(t)
	srv, fs := newServer(t, withTLS(certs), func(c *Config) {
		c.tcpWriteTimeout = 300 * time.Millisecond
		c.MaxBandwidth = NoBandwidthLimit
	})
	fs.join("a", "room")
	fs.join("b", "room")
	sender := allocated(t, srv, "a")

	raw, err := net.Dial("tcp", srv.TLSAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.(*net.TCPConn).SetReadBuffer(4096); err != nil { //nolint:forcetypeassert // "tcp"
		t.Fatal(err)
	}
	sc := &stallConn{Conn: tls.Client(raw, certs.ClientConfig("localhost")), stalled: make(chan struct{}), closed: make(chan struct{})}
	clientB := startClient(t, pionturn.NewSTUNConn(sc), srv.TLSAddr().String(), srv.Credentials("b", time.Now()))
	b := allocate(t, clientB)
	t.Cleanup(func() { _ = sc.Close() })
	permitFrom(t, clientB, sender)
	if !deliver(sender, b.LocalAddr(), b, "before the stall", arrives) {
		t.Fatal("nothing relayed to the TLS client")
	}

	sc.stall()
	payload := make([]byte, 1000)
	testwait.For(t, "the connection that stopped reading to be closed", func() bool {
		for range 64 {
			_, _ = sender.WriteTo(payload, b.LocalAddr())
		}

		return srv.Stats().TLSConns == 0
	})
	testwait.For(t, "its allocation to be deleted", func() bool {
		return srv.Stats().Allocations == 1 && srv.pion.AllocationCount() == 1
	})
	if n := srv.Stats().TLSWriteTimeouts; n != 1 {
		t.Fatalf("TLSWriteTimeouts %d, want 1", n)
	}
}

// Close ends TLS connections too, even one whose client is not reading.
func TestTLSClose(t *testing.T) {
	certs := testcert.New(t)
	srv, fs := newServer(t, withTLS(certs))
	fs.join("a", "room")
	allocate(t, newTLSClient(t, srv, certs, srv.Credentials("a", time.Now())))
	idle := dialTLS(t, srv, certs)
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !closedByServer(t, idle) {
		t.Fatal("a TLS connection outlived the server")
	}
	if n := srv.Stats().TLSConns; n != 0 {
		t.Fatalf("%d TLS connections open after Close", n)
	}
}

// TLSAddr needs a certificate; TLS alone may serve (UDP and TCP off).
func TestTLSConfig(t *testing.T) {
	certs := testcert.New(t)
	for name, tc := range map[string]*tls.Config{"no TLS config": nil, "no certificate": {}} {
		cfg := testConfig(newFakeSessions())
		cfg.TLSAddr, cfg.TLS = "127.0.0.1:0", tc
		if _, err := New(t.Context(), cfg); !errors.Is(err, ErrTLS) {
			t.Errorf("%s: err %v, want ErrTLS", name, err)
		}
	}
	srv, fs := newServer(t, withTLS(certs), func(c *Config) { c.UDPAddr, c.TCPAddr = "", "" })
	if srv.UDPAddr() != nil || srv.TCPAddr() != nil {
		t.Fatal("UDP or TCP listening though disabled")
	}
	fs.join("a", "room")
	allocate(t, newTLSClient(t, srv, certs, srv.Credentials("a", time.Now())))
}
