package loadgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr: a msghdr and the byte count the kernel fills in.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
	_   [4]byte
}

// mmsgBatch is a reusable vector of messages, one buffer each, so the hot
// paths make no allocation per packet (x/net's ReadBatch allocates a
// net.UDPAddr per message received).
type mmsgBatch struct {
	hs   []mmsghdr
	iovs []unix.Iovec
	bufs [][]byte
	oobs [][]byte // receive: room for the control messages; send: set per message
	name []unix.RawSockaddrInet4
}

// newMmsgBatch makes n messages with buffers of size bytes and, for
// receiving, oob bytes of control room and a sender-address buffer each.
func newMmsgBatch(n, size, oob int) *mmsgBatch {
	b := &mmsgBatch{
		hs: make([]mmsghdr, n), iovs: make([]unix.Iovec, n), bufs: make([][]byte, n),
		oobs: make([][]byte, n), name: make([]unix.RawSockaddrInet4, n),
	}
	for i := range n {
		b.bufs[i] = make([]byte, size)
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(size)
		b.hs[i].hdr.Iov = &b.iovs[i]
		b.hs[i].hdr.SetIovlen(1)
		if oob > 0 {
			b.oobs[i] = make([]byte, oob)
		}
	}

	return b
}

// resetRecv readies the first n messages for recvmmsg (the kernel shrinks
// the name and control lengths to what it wrote).
func (b *mmsgBatch) resetRecv(n int) {
	for i := range n {
		h := &b.hs[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&b.name[i])) //nolint:gosec // G103: a sockaddr buffer the batch keeps
		h.Namelen = unix.SizeofSockaddrInet4
		h.Control = &b.oobs[i][0]
		h.SetControllen(len(b.oobs[i]))
		h.Flags = 0
		b.iovs[i].SetLen(len(b.bufs[i]))
	}
}

// setSend makes message i carry the first size bytes of its buffer to the
// sockaddr to (kept alive by the caller) with control bytes oob.
func (b *mmsgBatch) setSend(i, size int, to *unix.RawSockaddrInet4, oob []byte) {
	h := &b.hs[i].hdr
	h.Name = (*byte)(unsafe.Pointer(to)) //nolint:gosec // G103: a sockaddr the caller keeps alive
	h.Namelen = unix.SizeofSockaddrInet4
	h.Control = &oob[0]
	h.SetControllen(len(oob))
	b.iovs[i].SetLen(size)
}

// recv reads up to n messages from fd without waiting; 0 and nil when none
// is queued.
func (b *mmsgBatch) recv(fd, n int) (int, error) {
	b.resetRecv(n)
	for {
		// The headers and all they point to are heap memory the batch keeps
		// alive, and Go's collector does not move it. A raw syscall: it never
		// blocks, and one the runtime knew of would let sysmon hand the P
		// away during a long batch (sysmon then polls every 20 µs).
		//nolint:gosec // G103: the mmsghdr array for the call
		r, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.hs[0])), uintptr(n),
			unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
			return int(r), nil //nolint:gosec // a message count
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		default:
			return 0, fmt.Errorf("loadgen: recvmmsg: %w", errno)
		}
	}
}

// send sends messages [0, n) on fd and returns how many went out. A message
// the kernel refuses (ENOBUFS and the like: the generator's loss, not the
// server's) is skipped, and the first such error returned beside the count.
// It does not block (a raw syscall, as in recv): a full socket buffer, which
// loopback frees at once, is waited out with short sleeps.
func (b *mmsgBatch) send(fd, n int) (int, error) {
	sent, from := 0, 0
	var first error
	for from < n {
		//nolint:gosec // G103: the mmsghdr array for the call, as in recv
		r, _, errno := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.hs[from])), uintptr(n-from),
			unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
			sent += int(r) //nolint:gosec // a message count
			from += int(r) //nolint:gosec // a message count
		case unix.EINTR:
		case unix.EAGAIN:
			sleep(20 * time.Microsecond)
		default:
			// The message at from failed before any was sent: skip it.
			if first == nil {
				first = fmt.Errorf("loadgen: sendmmsg: %w", errno)
			}
			from++
		}
	}

	return sent, first
}

// sleep is nanosleep as a raw syscall, for the generator's locked threads:
// the runtime does not see it, so sysmon neither wakes for it nor hands the
// thread's P to another thread meanwhile (which would cost a reacquire on
// every wake-up).
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	//nolint:gosec // G103: a timespec on the stack for the call
	_, _, _ = unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// pktinfoCmsg is an IP_PKTINFO control message asking the kernel to send
// from src (ipi_spec_dst), so one wildcard socket speaks for many addresses.
func pktinfoCmsg(src [4]byte) []byte {
	b := make([]byte, unix.CmsgSpace(unix.SizeofInet4Pktinfo))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0])) //nolint:gosec // G103: a cmsghdr laid over an aligned buffer
	h.Level, h.Type = unix.IPPROTO_IP, unix.IP_PKTINFO
	h.SetLen(unix.CmsgLen(unix.SizeofInet4Pktinfo))
	info := (*unix.Inet4Pktinfo)(unsafe.Pointer(&b[unix.CmsgLen(0)])) //nolint:gosec // G103: its payload
	info.Spec_dst = src

	return b
}

// rxInfo is what the generator reads from a received message's control
// messages: the kernel receive time and the destination address.
type rxInfo struct {
	rx     int64 // unix ns, 0 if absent
	dst    [4]byte
	hasDst bool
}

var errCmsg = errors.New("loadgen: truncated control message")

// parseRx walks the control messages of one received datagram for
// SCM_TIMESTAMPNS and IP_PKTINFO. The header layout is linux's on 64-bit
// platforms (the generator runs on amd64 and arm64).
func parseRx(oob []byte) (rxInfo, error) {
	var info rxInfo
	hdr := unix.CmsgLen(0)
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0])) //nolint:gosec // G103: the kernel's cmsghdr, 8-aligned
		l := int(h.Len)                               //nolint:gosec // bounded by the check below
		if l < hdr || l > len(oob) {
			return info, errCmsg
		}
		data := oob[hdr:l]
		switch {
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= 16:
			sec := int64(binary.NativeEndian.Uint64(data[0:8]))   //nolint:gosec // timespec
			nsec := int64(binary.NativeEndian.Uint64(data[8:16])) //nolint:gosec // timespec
			info.rx = sec*1e9 + nsec
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			copy(info.dst[:], data[8:12]) // ipi_addr: the header's destination
			info.hasDst = true
		}
		next := unix.CmsgSpace(l - hdr)
		if next >= len(oob) {
			break
		}
		oob = oob[next:]
	}

	return info, nil
}

// sockaddrPort is a sockaddr_in's port (stored in network byte order).
func sockaddrPort(sa *unix.RawSockaddrInet4) int {
	p := (*[2]byte)(unsafe.Pointer(&sa.Port)) //nolint:gosec // G103: the port's bytes, big-endian

	return int(p[0])<<8 | int(p[1])
}

// rawSockaddr is a as a sockaddr_in for sendmmsg.
func rawSockaddr(a *net.UDPAddr) (*unix.RawSockaddrInet4, error) {
	ip4 := a.IP.To4()
	if ip4 == nil {
		return nil, fmt.Errorf("loadgen: %s is not IPv4", a)
	}
	sa := &unix.RawSockaddrInet4{Family: unix.AF_INET}
	copy(sa.Addr[:], ip4)
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))  //nolint:gosec // G103: the port's bytes, big-endian
	p[0], p[1] = byte(a.Port>>8), byte(a.Port) //nolint:gosec // a port

	return sa, nil
}
