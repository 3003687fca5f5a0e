//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package signaling

import "net"

// haveReadiness says whether links here can wait for readiness.
const haveReadiness = false

// readiness is unavailable here: with no way to wait for a socket without
// reading it, links park their reader in coder/websocket's Read.
type readiness struct{}

func newReadiness(net.Conn) *readiness { return nil }

func (*readiness) wait() {}
