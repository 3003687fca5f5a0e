//go:build unix

package turn

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// reusePortSupported: several UDP listeners can share the TURN port, the
// kernel spreading clients across them by address hash.
const reusePortSupported = true

// reusePort sets SO_REUSEPORT before bind.
func reusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	if err != nil {
		return err
	}

	return serr
}
