//go:build !linux

package turn

import "net"

// newMmsgIO: no recvmmsg and sendmmsg here, so one datagram per call.
func newMmsgIO(_ *net.UDPConn, _ int, _ bool, _ *ioCounters) (udpIO, bool) { return nil, false }
