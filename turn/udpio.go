package turn

import (
	"net"
	"net/netip"
	"sync/atomic"
)

// Batched datagram I/O for the TURN listeners. The fast path (fastpath.go)
// forwards each game packet with one receive and one send; with a socket
// call per packet those two syscalls are most of the server's cost per
// packet. Where the platform has recvmmsg and sendmmsg (udpio_linux.go) a
// listener reads every datagram waiting, up to Config.UDPBatch, in one call
// and sends what it forwarded from them in one more; elsewhere, or with
// UDPBatch 1, it reads and sends one datagram per call (singleIO).
//
// Neither waits for a batch to fill: a read returns what the socket holds
// (at least one datagram), and what it forwarded is sent before the next
// read can block, so batching adds no delay to a packet that arrives alone.

// DefaultUDPBatch is how many datagrams a UDP listener reads, and sends, per
// system call by default. 64 drains a socket in a few calls at the rates we
// measured while the read buffers stay at 100 KiB per listener.
const DefaultUDPBatch = 64

// maxUDPBatch bounds UDPBatch: Linux accepts at most 1024 messages per call
// (UIO_MAXIOV), and each slot holds an inboundMTU buffer.
const maxUDPBatch = 1024

// datagram is one UDP datagram read or to be sent: buf[:n] from or to addr.
// A listener's read slots own their buffers for the listener's lifetime; a
// datagram queued to send points into one of them.
type datagram struct {
	buf  []byte
	n    int
	addr netip.AddrPort
}

// udpIO reads and writes datagrams in batches on one UDP socket. Only the
// listener's read loop calls read and write; pion's other writers go
// through the socket itself.
type udpIO interface {
	// read fills ds[:n] with the datagrams the socket holds, n >= 1,
	// waiting for the first. Each datagram lands in its slot's buf (cut at
	// len(buf), as a single read would cut it).
	read(ds []datagram) (n int, err error)
	// write sends ds in order and returns how many it sent before an error
	// (err == nil: all of them). The datagram at ds[n] was refused when
	// err != nil, and the caller skips it, as a failed single send is
	// dropped.
	write(ds []datagram) (n int, err error)
}

// ioCounters counts the socket calls of one listener's read loop, for the
// benchmarks' syscalls per packet; only that loop adds to them.
type ioCounters struct {
	reads, writes      atomic.Uint64 // system calls
	readPkts, sentPkts atomic.Uint64 // datagrams they carried
	segmented          atomic.Uint64 // datagrams sent several to a message (GSO)
}

// singleIO is one datagram per system call: where there is no recvmmsg and
// sendmmsg, or with UDPBatch 1.
type singleIO struct {
	conn  *net.UDPConn
	count *ioCounters
}

func (s singleIO) read(ds []datagram) (int, error) {
	n, addr, err := s.conn.ReadFromUDPAddrPort(ds[0].buf)
	if err != nil {
		return 0, err
	}
	ds[0].n, ds[0].addr = n, addr
	s.count.reads.Add(1)
	s.count.readPkts.Add(1)

	return 1, nil
}

func (s singleIO) write(ds []datagram) (int, error) {
	for i := range ds {
		s.count.writes.Add(1)
		if _, err := s.conn.WriteToUDPAddrPort(ds[i].buf[:ds[i].n], ds[i].addr); err != nil {
			return i, err
		}
		s.count.sentPkts.Add(1)
	}

	return len(ds), nil
}

// segmenting reports whether io sends several datagrams for one peer per
// message (UDP GSO), for the server's log.
func segmenting(io udpIO) bool {
	s, ok := io.(interface{ segmenting() bool })

	return ok && s.segmenting()
}

// newUDPIO returns batched I/O on conn for up to batch datagrams per call,
// or single-datagram I/O if batch is 1 or the platform (or this socket)
// cannot batch. gso lets batched sends carry several datagrams for one
// peer in one message where the kernel can (UDP_SEGMENT).
func newUDPIO(conn *net.UDPConn, batch int, gso bool, count *ioCounters) udpIO {
	if batch > 1 {
		if m, ok := newMmsgIO(conn, batch, gso, count); ok {
			return m
		}
	}

	return singleIO{conn: conn, count: count}
}
