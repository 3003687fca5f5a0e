package turn

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// dialFrom opens a TCP connection to the server's TURN port from the local
// address from (all of 127.0.0.0/8 reaches a loopback server), closed at test end.
func dialFrom(t *testing.T, srv *Server, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", srv.TCPAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	return c
}

// A TURN-over-TCP connection that makes no allocation in time is closed,
// silent or not; one that allocated outlives that timeout.
func TestTCPAllocateTimeout(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) { c.TCPAllocateTimeout = 300 * time.Millisecond })
	fs.join("a", "room")
	fs.join("b", "room")
	honest := newTCPClient(t, srv, srv.Credentials("a", time.Now()))
	relay := allocate(t, honest)
	refused := srv.Credentials("a", time.Now())
	refused.Password = srv.Credentials("b", time.Now()).Password
	if r, err := newTCPClient(t, srv, refused).Allocate(); err == nil {
		_ = r.Close()
		t.Fatal("wrong password allocated")
	}

	silent := dialFrom(t, srv, "127.0.0.1")
	talker := dialFrom(t, srv, "127.0.0.1")
	if !answersBinding(t, talker) {
		t.Fatal("no answer before the timeout")
	}
	if !closedByServer(t, silent) || !closedByServer(t, talker) {
		t.Fatal("a connection without an allocation was left open")
	}

	// Accepted before the two just closed, so past its timeout too.
	testwait.For(t, "the refused client's connection to close", func() bool { return srv.Stats().TCPConns == 1 })
	if got := srv.Stats().TCPAllocateTimeouts; got != 3 {
		t.Fatalf("TCPAllocateTimeouts %d, want 3", got)
	}
	udpClient := newClient(t, srv, srv.Credentials("b", time.Now()))
	udpPeer := allocate(t, udpClient)
	permitFrom(t, udpClient, relay)
	if err := honest.CreatePermission(udpPeer.LocalAddr()); err != nil {
		t.Fatalf("the allocated connection stopped serving: %v", err)
	}
	if !deliver(relay, udpPeer.LocalAddr(), udpPeer, "still here", arrives) {
		t.Fatal("the allocated connection stopped relaying")
	}
}

// Connections past the per-IP cap and past the total cap are closed at
// accept; at the caps they are served, and a closed one frees its place.
func TestTCPConnCaps(t *testing.T) {
	var logs logBuffer
	srv, _ := newServer(t, recordLogs(&logs), func(c *Config) { c.MaxTCPConnsPerIP, c.MaxTCPConns = 3, 5 })
	served := func(from string) net.Conn {
		t.Helper()
		c := dialFrom(t, srv, from)
		if !answersBinding(t, c) {
			t.Fatalf("a connection from %s within the caps was not served", from)
		}

		return c
	}
	refused := func(from string) {
		t.Helper()
		if !closedByServer(t, dialFrom(t, srv, from)) {
			t.Fatalf("a connection from %s past a cap was left open", from)
		}
	}

	first := served("127.0.0.1")
	served("127.0.0.1")
	served("127.0.0.1") // at the per-IP cap
	refused("127.0.0.1")
	served("127.0.0.2")
	served("127.0.0.2") // at the total cap
	refused("127.0.0.3")
	refused("127.0.0.2")

	_ = first.Close()
	testwait.For(t, "the closed connection to free its place", func() bool { return srv.Stats().TCPConns == 4 })
	served("127.0.0.1")
	refused("127.0.0.3")

	if got := srv.Stats().TCPRefused; got != 4 {
		t.Fatalf("TCPRefused %d, want 4", got)
	}
	// One line for the burst, with the count so far, not one per connection.
	if n := strings.Count(logs.String(), "TURN TCP connection refused"); n != 1 {
		t.Fatalf("%d refusal log lines, want 1:\n%s", n, logs.String())
	}
}
