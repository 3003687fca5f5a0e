// Package bare holds the bare servers the benchmarks compare hostrelay with:
// a UDP relay that is the practical ceiling for relaying in Go, and a
// coder/websocket room fan-out.
package bare

import (
	"bytes"
	"net"
	"net/netip"
)

// ServeUDP relays datagrams on conn until it is closed: one read, one map
// lookup and one send per packet, nothing else. Senders pair up by sending
// the same "pair <id>" datagram; from then on every datagram from one of a
// pair goes to the other unchanged.
func ServeUDP(conn *net.UDPConn) error {
	peers := make(map[netip.AddrPort]netip.AddrPort)
	waiting := make(map[string]netip.AddrPort)
	buf := make([]byte, 2048)
	prefix := []byte("pair ")
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return err
		}
		if to, ok := peers[from]; ok {
			_, _ = conn.WriteToUDPAddrPort(buf[:n], to)

			continue
		}
		if !bytes.HasPrefix(buf[:n], prefix) {
			continue
		}
		id := string(buf[len(prefix):n])
		other, ok := waiting[id]
		if !ok {
			waiting[id] = from

			continue
		}
		delete(waiting, id)
		peers[from], peers[other] = other, from
	}
}
