package turn

import (
	"net"
	"sync"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v4"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// stallConn is a client's TCP connection that can stop reading, as a client
// that never reads what it is sent: its receive buffer, then the server's
// send buffer, fill up and the server's writes block.
type stallConn struct {
	net.Conn
	stalled   chan struct{} // closed: reads wait for Close
	closed    chan struct{}
	stallOnce sync.Once
	closeOnce sync.Once
}

func (c *stallConn) Read(p []byte) (int, error) {
	select {
	case <-c.stalled:
		<-c.closed

		return 0, net.ErrClosed
	default:
		return c.Conn.Read(p)
	}
}

func (c *stallConn) stall() { c.stallOnce.Do(func() { close(c.stalled) }) }

func (c *stallConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })

	return c.Conn.Close()
}

// TestTCPWriteTimeout: a TURN-over-TCP client that stops reading while data
// is relayed to it is cut off once a write to it has made no progress for
// the write timeout, and its allocation is deleted; the sender's is not.
// Without the timeout pion's writes to it block forever.
func TestTCPWriteTimeout(t *testing.T) {
	srv, fs := newServer(t, func(c *Config) {
		c.tcpWriteTimeout = 300 * time.Millisecond
		c.MaxBandwidth = NoBandwidthLimit
	})
	fs.join("a", "room")
	fs.join("b", "room")
	sender := allocated(t, srv, "a")

	tcp, err := net.Dial("tcp", srv.TCPAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	// A small receive window fills sooner.
	if err := tcp.(*net.TCPConn).SetReadBuffer(4096); err != nil { //nolint:forcetypeassert // "tcp"
		t.Fatal(err)
	}
	sc := &stallConn{Conn: tcp, stalled: make(chan struct{}), closed: make(chan struct{})}
	clientB := startClient(t, pionturn.NewSTUNConn(sc), srv.TCPAddr().String(), srv.Credentials("b", time.Now()))
	b := allocate(t, clientB)
	// Runs before the relay's Close, whose Refresh then fails at once.
	t.Cleanup(func() { _ = sc.Close() })
	permitFrom(t, clientB, sender)
	if !deliver(sender, b.LocalAddr(), b, "before the stall", arrives) {
		t.Fatal("nothing relayed to the TCP client")
	}

	sc.stall()
	payload := make([]byte, 1000)
	testwait.For(t, "the connection that stopped reading to be closed", func() bool {
		for range 64 {
			_, _ = sender.WriteTo(payload, b.LocalAddr())
		}

		return srv.Stats().TCPConns == 0
	})
	testwait.For(t, "its allocation to be deleted", func() bool {
		return srv.Stats().Allocations == 1 && srv.pion.AllocationCount() == 1
	})
	if n := srv.Stats().TCPWriteTimeouts; n != 1 {
		t.Fatalf("TCPWriteTimeouts %d, want 1", n)
	}
}
