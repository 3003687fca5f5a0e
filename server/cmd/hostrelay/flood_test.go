package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/pion/stun/v3"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// floodFileLimit is the child's open-file limit: low, so the flood below
// (twice as many connections) would exhaust it without the caps.
const floodFileLimit = 600

// dialFrom connects to addr from the local address from (any of 127.0.0.0/8).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, from, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedByServer reports whether the server closes c within 5s (reading
// ends in EOF or a reset rather than the deadline).
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// tcpBinding sends a STUN Binding request over a new TURN TCP connection and
// waits for the success answer.
func tcpBinding(t *testing.T, addr string) error {
	t.Helper()
	c := dialFrom(t, "127.0.0.1", addr)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(stun.MustBuild(stun.TransactionID, stun.BindingRequest).Raw); err != nil {
		return err
	}
	hdr := make([]byte, 20)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return err
	}
	m := &stun.Message{Raw: append(hdr, make([]byte, binary.BigEndian.Uint16(hdr[2:4]))...)}
	if _, err := io.ReadFull(c, m.Raw[20:]); err != nil {
		return err
	}
	if err := m.Decode(); err != nil || m.Type != stun.BindingSuccess {
		return fmt.Errorf("answer %v: %w", m.Type, err)
	}
	return nil
}

// TestFloodKeepsServing: the real binary under a 600-file limit, flooded
// with 600 idle TURN-over-TCP and 600 idle HTTP connections (more than the
// caps, and together twice the limit), still answers /healthz and a lobby
// hello; it closes every idle TURN-over-TCP connection that made no
// allocation within -turn-tcp-allocate-timeout and still accepts new ones;
// it closes the two frames that pinned pion's read loop; and SIGTERM exits 0.
func TestFloodKeepsServing(t *testing.T) {
	c := startChildWithFileLimit(t, floodFileLimit, "-turn-tcp-allocate-timeout", "1s")
	budget := c.waitLog("file limit")
	if soft, _ := budget["soft"].(float64); soft != floodFileLimit {
		t.Fatalf("file limit %v, want %d", budget["soft"], floodFileLimit)
	}
	listening := c.waitLog("listening")
	httpAddr, _ := listening["http"].(string)
	turnTCP, _ := listening["turn_tcp"].(string)
	go func() {
		for range c.logs { // keep the pipe drained
		}
	}()

	// From twelve addresses, under the per-IP cap, so the total cap is what
	// holds them.
	var turnFlood []net.Conn
	for i := range floodFileLimit {
		from := fmt.Sprintf("127.0.0.%d", 2+i%12)
		turnFlood = append(turnFlood, dialFrom(t, from, turnTCP))
		dialFrom(t, from, httpAddr)
	}

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + httpAddr + "/healthz")
	if err != nil {
		t.Fatalf("/healthz under the flood: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz under the flood: %s", resp.Status)
	}
	lobby(t, httpAddr).CloseNow() // fails the test without a welcome

	for i, tc := range turnFlood {
		if !closedByServer(tc) {
			t.Fatalf("idle TURN TCP connection %d of %d still open", i+1, len(turnFlood))
		}
	}
	if err := tcpBinding(t, turnTCP); err != nil {
		t.Fatalf("TURN TCP after the flood: %v", err)
	}

	for name, frame := range map[string][]byte{
		"STUN length 0xFFEC":        {0x00, 0x01, 0xFF, 0xEC, 0x21, 0x12, 0xA4, 0x42, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		"ChannelData length 0xFFFC": {0x40, 0x00, 0xFF, 0xFC, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	} {
		tc := dialFrom(t, "127.0.0.1", turnTCP)
		if _, err := tc.Write(frame); err != nil {
			t.Fatal(err)
		}
		if !closedByServer(tc) {
			t.Fatalf("%s: connection left open", name)
		}
	}

	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.exitCode(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}

// TestTURNTCPAcceptSurvivesFileExhaustion: with the TURN-over-TCP caps set
// above the file limit (an operator's mistake), a flood runs the process out
// of files and accepting fails with EMFILE. pion/turn v4.1.4's accept loop
// ends on the first such error; ours waits and retries, so once the idle
// connections are closed TURN over TCP answers again.
func TestTURNTCPAcceptSurvivesFileExhaustion(t *testing.T) {
	c := startChildWithFileLimit(t, floodFileLimit, "-turn-tcp-allocate-timeout", "1s",
		"-turn-tcp-max-conns", "5000", "-turn-tcp-conns-per-ip", "5000")
	turnTCP, _ := c.waitLog("listening")["turn_tcp"].(string)
	go func() {
		for range c.logs { // keep the pipe drained
		}
	}()
	fds := fmt.Sprintf("/proc/%d/fd", c.cmd.Process.Pid)
	if _, err := os.Stat(fds); err != nil {
		t.Skipf("cannot count the child's files: %v", err)
	}

	flood := make([]net.Conn, 0, floodFileLimit+100)
	for range floodFileLimit + 100 {
		flood = append(flood, dialFrom(t, "127.0.0.1", turnTCP))
	}
	testwait.For(t, "the child to run out of files", func() bool {
		open, err := os.ReadDir(fds)
		return err == nil && len(open) >= floodFileLimit
	})
	for i, tc := range flood {
		if !closedByServer(tc) {
			t.Fatalf("idle TURN TCP connection %d of %d still open", i+1, len(flood))
		}
	}
	if err := tcpBinding(t, turnTCP); err != nil {
		t.Fatalf("TURN TCP after running out of files: %v", err)
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.exitCode(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}
