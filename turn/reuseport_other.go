//go:build !unix

package turn

import "syscall"

// reusePortSupported is false: one UDP listener.
const reusePortSupported = false

func reusePort(_, _ string, _ syscall.RawConn) error { return nil }
