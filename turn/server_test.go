package turn

import (
	"context"
	"encoding/base64"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/leakcheck"
)

func TestTCP(t *testing.T) {
	srv, fs := newServer(t)
	fs.join("t", "room")
	fs.join("u", "room")
	fs.join("gone", "room")
	fs.end("gone")

	tcpClient := newTCPClient(t, srv, srv.Credentials("t", time.Now()))
	overTCP := allocate(t, tcpClient)
	udpClient := newClient(t, srv, srv.Credentials("u", time.Now()))
	overUDP := allocate(t, udpClient)
	permitFrom(t, tcpClient, overUDP)
	permitFrom(t, udpClient, overTCP)

	// Same policy as UDP: same-room relays talk, anything else is refused.
	if !deliver(overTCP, overUDP.LocalAddr(), overUDP, "tcp->udp", arrives) ||
		!deliver(overUDP, overTCP.LocalAddr(), overTCP, "udp->tcp", arrives) {
		t.Fatal("TCP and UDP allocations in one room did not exchange packets")
	}
	if _, err := overTCP.WriteTo([]byte("probe"), &net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 9}); err == nil {
		t.Fatal("TCP allocation got a permission for 10.0.0.1")
	}
	if relay, err := newTCPClient(t, srv, srv.Credentials("gone", time.Now())).Allocate(); err == nil {
		_ = relay.Close()
		t.Fatal("closed session allocated over TCP")
	}
}

// pion's Server.Close leaves accepted TCP connections, and a goroutine each,
// running; Close must end them and every allocation while clients are still
// connected.
func TestCloseLeavesNoServerGoroutines(t *testing.T) {
	fs := newFakeSessions()
	fs.join("a", "room")
	fs.join("b", "room")
	srv, err := New(context.Background(), testConfig(fs))
	if err != nil {
		t.Fatal(err)
	}
	tcpClient := newTCPClient(t, srv, srv.Credentials("a", time.Now()))
	overTCP := allocate(t, tcpClient)
	udpClient := newClient(t, srv, srv.Credentials("b", time.Now()))
	overUDP := allocate(t, udpClient)
	permitFrom(t, udpClient, overTCP)
	if !deliver(overTCP, overUDP.LocalAddr(), overUDP, "before close", arrives) {
		t.Fatal("no traffic before close")
	}
	newTCPClient(t, srv, srv.Credentials("a", time.Now())) // connected, never allocates

	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := srv.Stats().Allocations; n != 0 {
		t.Fatalf("%d allocations after Close", n)
	}
	if left := leakcheck.Wait(2*time.Second, serverGoroutine); len(left) > 0 {
		t.Fatalf("server goroutines after Close:\n\n%s", strings.Join(left, "\n\n"))
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// The ports are free again.
	pc, err := net.ListenPacket("udp4", srv.UDPAddr().String())
	if err != nil {
		t.Fatalf("UDP port still taken: %v", err)
	}
	_ = pc.Close()
}

func TestContextCancelCloses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, testConfig(newFakeSessions()))
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.UDPAddr().String()
	cancel()
	if !eventually(3*time.Second, func() bool {
		pc, err := net.ListenPacket("udp4", addr)
		if err != nil {
			return false
		}
		_ = pc.Close()

		return true
	}) {
		t.Fatal("server still listening after its context was cancelled")
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close after cancel: %v", err)
	}

	if _, err := New(ctx, testConfig(newFakeSessions())); err == nil || !strings.HasPrefix(err.Error(), "turn:") {
		t.Fatalf("New with a cancelled context: %v", err)
	}
}

// The secret and the passwords derived from it never reach the logs, even at
// pion's trace level.
func TestLogsHoldNoSecrets(t *testing.T) {
	var logs logBuffer
	srv, fs := newServer(t, recordLogs(&logs))
	fs.join("a", "room")
	fs.join("b", "room")
	credsA := srv.Credentials("a", time.Now())
	clientA := newClient(t, srv, credsA)
	a := allocate(t, clientA)
	clientB := newClient(t, srv, srv.Credentials("b", time.Now()))
	b := allocate(t, clientB)
	permitFrom(t, clientB, a)
	deliver(a, b.LocalAddr(), b, "hello", arrives)
	tampered := credsA
	tampered.Password = srv.Credentials("b", time.Now()).Password
	if _, err := newClient(t, srv, tampered).Allocate(); err == nil {
		t.Fatal("tampered credentials allocated")
	}
	_, _ = a.WriteTo([]byte("probe"), &net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 9})

	out := logs.String()
	if !strings.Contains(out, "component=turn") {
		t.Fatalf("logs lack component=turn:\n%s", out)
	}
	for _, secret := range []string{
		string(testSecret),
		base64.StdEncoding.EncodeToString(testSecret),
		credsA.Password,
		tampered.Password,
	} {
		if strings.Contains(out, secret) {
			t.Fatalf("logs contain a secret %q", secret)
		}
	}
}
