//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package signaling

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// haveReadiness says whether links here can wait for readiness.
const haveReadiness = true

// readiness waits for a link's socket to have bytes to read without reading
// them, parked in Go's poller a few frames deep: the waiting goroutine's
// stack stays at its first 2 KiB, where a read parked inside
// coder/websocket needs 4 KiB (see frameWatch).
type readiness struct{ rc syscall.RawConn }

// newReadiness returns nil, and the link parks its reader in
// coder/websocket as before, unless c is a socket whose bytes nothing above
// buffers: a *net.TCPConn, or a wrapper that hands out its SyscallConn only
// on that condition. A *tls.Conn keeps decrypted bytes of its own, which a
// socket that is not readable would leave waiting forever.
func newReadiness(c net.Conn) *readiness {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return &readiness{rc: rc}
}

// wait returns once the socket has a byte to read, has ended, or failed, or
// the connection was closed. Errors are left for the read that follows to
// report.
func (r *readiness) wait() {
	_ = r.rc.Read(func(fd uintptr) bool {
		var b [1]byte
		for {
			_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			// Not EAGAIN: a byte, the end of the stream or an error, all of
			// which the read will see.
			return !errors.Is(err, unix.EAGAIN)
		}
	})
}
