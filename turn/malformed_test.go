package turn

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// malformedDatagrams are the shapes of broken STUN and ChannelData a
// scanner or a buggy client sends, plus seeded random bytes.
func malformedDatagrams() [][]byte {
	stunHeader := func(typ uint16, length uint16, cookie uint32) []byte {
		b := make([]byte, 20)
		binary.BigEndian.PutUint16(b[0:], typ)
		binary.BigEndian.PutUint16(b[2:], length)
		binary.BigEndian.PutUint32(b[4:], cookie)
		return b
	}
	channelData := func(number, length uint16, payload int) []byte {
		b := make([]byte, 4+payload)
		binary.BigEndian.PutUint16(b[0:], number)
		binary.BigEndian.PutUint16(b[2:], length)
		return b
	}
	out := [][]byte{
		{},
		{0x00},
		{0x00, 0x01, 0x00},
		stunHeader(0x0001, 0, 0x2112A442)[:19], // truncated header
		stunHeader(0x0001, 0xFFFC, 0x2112A442), // length past the datagram
		stunHeader(0x0001, 3, 0x2112A442),      // length not a multiple of 4
		stunHeader(0x0003, 0, 0xDEADBEEF),      // Allocate, wrong cookie
		append(stunHeader(0x0003, 8, 0x2112A442), 0x00, 0x0D, 0xFF, 0xFF, 0, 0, 0, 0), // attribute past the end
		append(stunHeader(0x0016, 8, 0x2112A442), 0x00, 0x12, 0x00, 0x04, 0, 1, 0, 0), // Send indication, short XOR-PEER-ADDRESS
		channelData(0x4000, 100, 10),      // ChannelData length past the datagram
		channelData(0x7FFF, 0, 0),         // empty ChannelData, unbound channel
		channelData(0x4001, 4, 4),         // unbound channel
		channelData(0x4000, 0xFFFF, 1400), // huge declared length
		make([]byte, 65507),               // the largest UDP payload
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		b := make([]byte, rng.IntN(600))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		out = append(out, b)
	}
	return out
}

// TestMalformedInputKeepsServing: garbage over UDP and TCP, then a real
// client allocates and two clients of one room still exchange packets. A
// parser panic would crash the test binary.
func TestMalformedInputKeepsServing(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("a", "room")
	fs.join("b", "room")
	clientA := newClient(t, srv, srv.Credentials("a", time.Now()))
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	a, b := allocate(t, clientA), allocate(t, clientB)
	permitFrom(t, clientA, b)
	permitFrom(t, clientB, a)
	if !deliver(a, b.LocalAddr(), b, "before", 3*time.Second) || !deliver(b, a.LocalAddr(), a, "open", 3*time.Second) {
		t.Fatal("no traffic before the garbage")
	}

	raw, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, d := range malformedDatagrams() {
		if _, err := raw.WriteTo(d, srv.UDPAddr()); err != nil {
			t.Fatalf("send %d bytes: %v", len(d), err)
		}
	}
	// Over TCP: random bytes, then a ChannelData frame claiming more than follows.
	for _, junk := range [][]byte{
		{0x16, 0x03, 0x01, 0x00, 0x05}, // a TLS hello on the plain port
		{0x40, 0x00, 0xFF, 0xFF, 1, 2, 3},
		{0x00, 0x01, 0x10, 0x00, 0x21, 0x12, 0xA4, 0x42},
	} {
		c, err := net.Dial("tcp", srv.TCPAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(junk)
		_ = c.Close()
	}

	// Still serving: existing relays, new allocations, over both transports.
	if !deliver(a, b.LocalAddr(), b, "after", 3*time.Second) {
		t.Fatal("relaying stopped after malformed input")
	}
	fs.join("c", "room")
	clientC := newClient(t, srv, srv.Credentials("c", time.Now()))
	c := allocate(t, clientC)
	permitFrom(t, clientC, a)
	permitFrom(t, clientA, c)
	if !deliver(c, a.LocalAddr(), a, "new", 3*time.Second) {
		t.Fatal("a new allocation cannot reach its room")
	}
	fs.join("d", "room")
	allocate(t, newTCPClient(t, srv, srv.Credentials("d", time.Now())))
}
