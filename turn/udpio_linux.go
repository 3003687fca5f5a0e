//go:build linux

package turn

import (
	"encoding/binary"
	"net"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsgIO reads with recvmmsg and writes with sendmmsg. It is written on
// x/sys/unix rather than x/net's ipv4/ipv6 ReadBatch and WriteBatch because
// those allocate a net.UDPAddr and its IP for every datagram read; here the
// headers, iovecs and addresses are allocated once, with the listener, and
// decoded into netip.AddrPort values. The calls go through the socket's
// RawConn so a read waits in Go's netpoller like any other, and Close still
// ends it.
type mmsgIO struct {
	raw   rawConn
	v6    bool // an AF_INET6 socket: IPv4 peers are written v4-mapped
	count *ioCounters

	rhdrs  []mmsghdr
	riovs  []unix.Iovec
	rnames []sockaddrBuf
	whdrs  []mmsghdr
	wiovs  []unix.Iovec
	wnames []sockaddrBuf
	// wsegs[i] is how many datagrams whdrs[i] carries: more than one is a
	// GSO send, whose control message wctl[i] holds the segment size.
	wsegs []int
	wctl  [][]byte

	// gso is whether sends may carry several datagrams for one peer in
	// one UDP_SEGMENT message: the kernel has it and has not refused it
	// for good. refusedGSO counts the segmented sends refused with EINVAL
	// since the last one that went.
	gso        bool
	refusedGSO int

	// The call in progress, for recv and send, which are built once so a
	// call through RawConn allocates nothing.
	vlen   int
	done   int
	errno  unix.Errno
	recvFn func(fd uintptr) bool
	sendFn func(fd uintptr) bool
	// syscall makes the call: mmsgSyscall, or in tests a kernel that
	// refuses what a real one might.
	syscall func(nr, fd uintptr, hdrs *mmsghdr, vlen int) (uintptr, unix.Errno)
}

// mmsgSyscall is recvmmsg or sendmmsg (nr) on fd for the vlen headers at
// hdrs. It is a raw system call, which the Go scheduler does not see: the
// socket is non-blocking (Go's net package made it so), so the call never
// waits, and a batch of 64 takes well under a millisecond. Through
// Syscall6 the runtime marks the thread as in a system call around each
// one, and where no processor is idle (GOMAXPROCS 1, a server on one core
// as make bench runs it, or a busy server) its monitor hands this thread's
// processor to another thread after 20 us in the call: thread switches
// back and forth for each long batch. Raw calls cost 14-20 % less CPU per
// packet in BenchmarkListener (burst 16, GOMAXPROCS 1).
func mmsgSyscall(nr, fd uintptr, hdrs *mmsghdr, vlen int) (uintptr, unix.Errno) {
	// hdrs and everything they point to are heap memory mmsgIO keeps
	// alive, and Go's collector does not move it.
	//nolint:gosec // G103: the mmsghdr array for the call
	r, _, e := unix.RawSyscall6(nr, fd, uintptr(unsafe.Pointer(hdrs)), uintptr(vlen), 0, 0, 0)

	return r, e
}

// rawConn is the part of syscall.RawConn mmsgIO uses.
type rawConn interface {
	Read(f func(fd uintptr) bool) error
	Write(f func(fd uintptr) bool) error
}

// mmsghdr is struct mmsghdr: a msghdr and the length the kernel
// transferred. Go pads it as C does (64 bytes on 64-bit platforms).
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

func newMmsgIO(conn *net.UDPConn, batch int, gso bool, count *ioCounters) (*mmsgIO, bool) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, false
	}
	domain, probeErr := 0, error(nil)
	cerr := raw.Control(func(fd uintptr) {
		domain, probeErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
		if probeErr != nil {
			return
		}
		// A call for no message returns at once, or ENOSYS where a sandbox
		// (seccomp, gVisor) lacks the call: then one datagram per call.
		for _, nr := range []uintptr{unix.SYS_RECVMMSG, unix.SYS_SENDMMSG} {
			if _, _, e := unix.Syscall6(nr, fd, 0, 0, unix.MSG_DONTWAIT, 0, 0); e != 0 {
				probeErr = e

				return
			}
		}
		// UDP_SEGMENT came with Linux 4.18; reading it fails before.
		if gso {
			_, err := unix.GetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_SEGMENT)
			gso = err == nil
		}
	})
	if cerr != nil || probeErr != nil || (domain != unix.AF_INET && domain != unix.AF_INET6) {
		return nil, false
	}
	m := &mmsgIO{
		raw: raw, v6: domain == unix.AF_INET6, count: count,
		rhdrs: make([]mmsghdr, batch), riovs: make([]unix.Iovec, batch), rnames: make([]sockaddrBuf, batch),
		whdrs: make([]mmsghdr, batch), wiovs: make([]unix.Iovec, batch), wnames: make([]sockaddrBuf, batch),
		wsegs: make([]int, batch), wctl: make([][]byte, batch), gso: gso,
	}
	ctl := make([]byte, batch*gsoControlSpace)
	for i := range batch {
		m.rhdrs[i].hdr.Name, m.rhdrs[i].hdr.Iov = &m.rnames[i][0], &m.riovs[i]
		m.rhdrs[i].hdr.SetIovlen(1)
		m.whdrs[i].hdr.Name = &m.wnames[i][0]
		m.wctl[i] = ctl[i*gsoControlSpace : (i+1)*gsoControlSpace : (i+1)*gsoControlSpace]
		initGSOControl(m.wctl[i])
	}
	m.recvFn, m.sendFn, m.syscall = m.recv, m.send, mmsgSyscall

	return m, true
}

func (m *mmsgIO) segmenting() bool { return m.gso }

func (m *mmsgIO) read(ds []datagram) (int, error) {
	vlen := min(len(ds), len(m.rhdrs))
	for i := range vlen {
		h := &m.rhdrs[i]
		m.riovs[i].Base = &ds[i].buf[0]
		m.riovs[i].SetLen(len(ds[i].buf))
		h.hdr.Namelen, h.hdr.Flags, h.n = sockaddrSize, 0, 0
	}
	m.vlen = vlen
	if err := m.raw.Read(m.recvFn); err != nil {
		return 0, err
	}
	if m.errno != 0 {
		return 0, os.NewSyscallError("recvmmsg", m.errno)
	}
	for i := range m.done {
		h := &m.rhdrs[i]
		ds[i].n = int(h.n)
		ds[i].addr, _ = parseSockaddr(m.rnames[i][:min(int(h.hdr.Namelen), sockaddrSize)])
	}
	m.count.readPkts.Add(uint64(m.done)) //nolint:gosec // a count of messages

	return m.done, nil
}

// write sends ds and returns how many it sent before an error, as udpIO
// asks. With GSO it first moves the datagrams for one peer next to each
// other, each peer's in their order (ds is reordered in place: the caller
// only needs what was sent to be ds[:n]), and sends a run of them as one
// message the kernel cuts into datagrams. One message then pays one route
// lookup and one trip through the stack where each datagram paid its own:
// measured on loopback, 4 datagrams to one peer cost about half as
// much kernel time per datagram. A message the kernel refuses because of
// GSO is sent again one datagram per message, so a refusal drops exactly
// the datagram it always did.
func (m *mmsgIO) write(ds []datagram) (int, error) {
	ds = ds[:min(len(ds), len(m.whdrs))]
	gso := m.gso && len(ds) > 1
	if gso {
		groupByPeer(ds)
	}
	for {
		m.vlen = m.buildWrites(ds, gso)
		if err := m.raw.Write(m.sendFn); err != nil {
			return 0, err
		}
		if m.errno != 0 {
			if m.wsegs[0] > 1 {
				// The first message, a segmented one, was refused: it goes
				// again one datagram per message, which says which datagram
				// (if any) the kernel refuses on its own.
				m.gsoRefused(m.errno)
				gso = false

				continue
			}

			return 0, os.NewSyscallError("sendmmsg", m.errno)
		}
		sent := 0
		for i := range m.done {
			sent += m.wsegs[i]
			if m.wsegs[i] > 1 {
				m.refusedGSO = 0
				m.count.segmented.Add(uint64(m.wsegs[i])) //nolint:gosec // a count of datagrams
			}
		}
		m.count.sentPkts.Add(uint64(sent)) //nolint:gosec // a count of datagrams

		return sent, nil
	}
}

// buildWrites fills the send headers for ds and returns how many messages
// they make: one per datagram, or with gso one per run of datagrams for one
// peer that the kernel can cut at one segment size (all as long as the
// first, the last possibly shorter).
func (m *mmsgIO) buildWrites(ds []datagram, gso bool) int {
	msgs := 0
	for i := 0; i < len(ds); msgs++ {
		d := &ds[i]
		segs, total := 1, d.n
		if gso && d.n > 0 {
			for j := i + 1; j < len(ds) && segs < maxGSOSegments; j++ {
				e := &ds[j]
				if e.addr != d.addr || e.n == 0 || e.n > d.n || total+e.n > maxGSOBytes {
					break
				}
				segs++
				total += e.n
				if e.n < d.n {
					break // only the last segment may be short
				}
			}
		}
		h := &m.whdrs[msgs]
		for k := range segs {
			iov := &m.wiovs[i+k]
			iov.Base = nil
			if ds[i+k].n > 0 {
				iov.Base = &ds[i+k].buf[0]
			}
			iov.SetLen(ds[i+k].n)
		}
		h.hdr.Iov = &m.wiovs[i]
		h.hdr.SetIovlen(segs)
		h.hdr.Namelen = putSockaddr(&m.wnames[msgs], d.addr, m.v6)
		h.hdr.Control = nil
		h.hdr.SetControllen(0)
		if segs > 1 {
			binary.NativeEndian.PutUint16(m.wctl[msgs][unix.CmsgLen(0):], uint16(d.n)) //nolint:gosec // d.n <= inboundMTU
			h.hdr.Control = &m.wctl[msgs][0]
			h.hdr.SetControllen(len(m.wctl[msgs]))
		}
		h.n = 0
		m.wsegs[msgs] = segs
		i += segs
	}

	return msgs
}

// groupByPeer reorders ds so the datagrams for each peer are next to each
// other, where that peer's first one was, each peer's in their order. ds is
// a send group (16 at most from the read loop), so the quadratic scan costs
// less than a map would.
func groupByPeer(ds []datagram) {
	for i := 0; i < len(ds); {
		addr := ds[i].addr
		i++
		for j := i; j < len(ds); j++ {
			if ds[j].addr != addr {
				continue
			}
			if j != i {
				// Keep the order of what is skipped: rotate ds[i:j+1] right.
				d := ds[j]
				copy(ds[i+1:j+1], ds[i:j])
				ds[i] = d
			}
			i++
		}
	}
}

// maxGSOSegments is the kernel's UDP_MAX_SEGMENTS before Linux 6.9 raised
// it to 128, and maxGSOBytes keeps a message under the largest UDP payload
// with room for the headers.
const (
	maxGSOSegments = 64
	maxGSOBytes    = 65000
)

// gsoControlSpace is the room for a control message carrying UDP_SEGMENT
// and its uint16 segment size, which buildWrites sets per message.
var gsoControlSpace = unix.CmsgSpace(2) //nolint:gochecknoglobals // a constant the platform computes

func initGSOControl(b []byte) {
	//nolint:gosec // G103: a cmsghdr laid over the buffer, as the kernel reads it
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
}

// maxRefusedGSO is how many segmented sends in a row EINVAL may refuse
// before the socket stops trying: one refusal can be a single datagram the
// path's MTU cannot carry whole (a segment must fit), many in a row a kernel
// that will not segment at all.
const maxRefusedGSO = 8

// gsoRefused turns GSO off for the socket if errno, the refusal of a
// segmented send, says it will never work: EIO where the device cannot
// checksum a segmented send, EOPNOTSUPP and ENOPROTOOPT where the kernel
// does not do it after all, or EINVAL maxRefusedGSO times in a row. Any
// other refusal is about the peer or the moment, not GSO.
func (m *mmsgIO) gsoRefused(errno unix.Errno) {
	switch errno { //nolint:exhaustive // the rest leave GSO on
	case unix.EIO, unix.EOPNOTSUPP, unix.ENOPROTOOPT:
		m.gso = false
	case unix.EINVAL:
		m.refusedGSO++
		if m.refusedGSO >= maxRefusedGSO {
			m.gso = false
		}
	}
}

// recv and send run one call on the socket; false asks the netpoller to
// wait until the socket is ready.
func (m *mmsgIO) recv(fd uintptr) bool {
	return m.call(fd, unix.SYS_RECVMMSG, &m.rhdrs[0], &m.count.reads)
}

func (m *mmsgIO) send(fd uintptr) bool {
	return m.call(fd, unix.SYS_SENDMMSG, &m.whdrs[0], &m.count.writes)
}

func (m *mmsgIO) call(fd, nr uintptr, hdrs *mmsghdr, calls *atomic.Uint64) bool {
	for {
		calls.Add(1)
		r, e := m.syscall(nr, fd, hdrs, m.vlen)
		//nolint:exhaustive // the rest are errors
		switch e {
		case 0:
			m.done, m.errno = int(r), 0

			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		default:
			m.done, m.errno = 0, e

			return true
		}
	}
}
