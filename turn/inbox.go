package turn

import (
	"net"
	"sync"
)

// Relay to relay without the kernel: both ends of every relayed packet are
// allocations of this server, so a relay socket's WriteTo hands the bytes to
// the destination allocation's inbox instead of sending them through the
// kernel, which pion's read loop for that allocation then reads. That saves a
// sendto and a recvfrom per packet.

// packetCap holds any packet pion hands a relay socket: pion reads client
// packets into 1600-byte buffers.
const packetCap = 1600

// inboxMax bounds the packets waiting for one allocation's reader; more are
// dropped, as a full socket buffer would.
const inboxMax = 1024

// packet is one datagram waiting in an inbox. from is the sender's advertised
// relay address, shared and never modified.
type packet struct {
	buf  [packetCap]byte
	n    int
	from *net.UDPAddr
	next *packet
}

var packetPool = sync.Pool{New: func() any { return new(packet) }} //nolint:gochecknoglobals // a pool is safe for every server in the process

// inbox is a bounded FIFO of packets for one relay socket.
type inbox struct {
	mu         sync.Mutex
	head, tail *packet
	n          int
	closed     bool
}

// delivery is what became of a packet handed to an inbox.
type delivery uint8

const (
	delivered delivery = iota
	// dropFull: the reader is behind (inboxMax packets wait), as a full
	// socket buffer would drop it.
	dropFull
	// dropGone: the allocation closed after the sender looked it up. The
	// packet is addressed to a relay that no longer exists, which the policy
	// would refuse a moment later; it says nothing about the reader's pace.
	dropGone
)

// put queues a copy of p and says whether it did.
func (q *inbox) put(p []byte, from *net.UDPAddr) delivery {
	if len(p) > packetCap {
		return dropFull // pion reads into 1600-byte buffers: never seen
	}
	pk := packetPool.Get().(*packet) //nolint:forcetypeassert // the pool holds *packet
	pk.n = copy(pk.buf[:], p)
	pk.from = from
	pk.next = nil
	q.mu.Lock()
	if q.closed || q.n >= inboxMax {
		d := dropFull
		if q.closed {
			d = dropGone
		}
		q.mu.Unlock()
		pk.from = nil
		packetPool.Put(pk)

		return d
	}
	if q.tail == nil {
		q.head = pk
	} else {
		q.tail.next = pk
	}
	q.tail = pk
	q.n++
	q.mu.Unlock()

	return delivered
}

// take copies the oldest packet into p and returns its length and sender, or
// ok=false if the inbox is empty.
func (q *inbox) take(p []byte) (n int, from *net.UDPAddr, ok bool) {
	q.mu.Lock()
	pk := q.head
	if pk == nil {
		q.mu.Unlock()

		return 0, nil, false
	}
	q.head = pk.next
	if q.head == nil {
		q.tail = nil
	}
	q.n--
	q.mu.Unlock()
	n, from = copy(p, pk.buf[:pk.n]), pk.from
	pk.from, pk.next = nil, nil
	packetPool.Put(pk)

	return n, from, true
}

// empty reports whether nothing is queued.
func (q *inbox) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()

	return q.head == nil
}

// close refuses further packets and frees the queued ones.
func (q *inbox) close() {
	q.mu.Lock()
	pk := q.head
	q.head, q.tail, q.n, q.closed = nil, nil, 0, true
	q.mu.Unlock()
	for pk != nil {
		next := pk.next
		pk.from, pk.next = nil, nil
		packetPool.Put(pk)
		pk = next
	}
}
