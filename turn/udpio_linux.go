//go:build linux

package turn

import (
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

	// The call in progress, for recv and send, which are built once so a
	// call through RawConn allocates nothing.
	vlen   int
	done   int
	errno  unix.Errno
	recvFn func(fd uintptr) bool
	sendFn func(fd uintptr) bool
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

func newMmsgIO(conn *net.UDPConn, batch int, count *ioCounters) (*mmsgIO, bool) {
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
	})
	if cerr != nil || probeErr != nil || (domain != unix.AF_INET && domain != unix.AF_INET6) {
		return nil, false
	}
	m := &mmsgIO{
		raw: raw, v6: domain == unix.AF_INET6, count: count,
		rhdrs: make([]mmsghdr, batch), riovs: make([]unix.Iovec, batch), rnames: make([]sockaddrBuf, batch),
		whdrs: make([]mmsghdr, batch), wiovs: make([]unix.Iovec, batch), wnames: make([]sockaddrBuf, batch),
	}
	for i := range batch {
		m.rhdrs[i].hdr.Name, m.rhdrs[i].hdr.Iov = &m.rnames[i][0], &m.riovs[i]
		m.rhdrs[i].hdr.SetIovlen(1)
		m.whdrs[i].hdr.Name, m.whdrs[i].hdr.Iov = &m.wnames[i][0], &m.wiovs[i]
		m.whdrs[i].hdr.SetIovlen(1)
	}
	m.recvFn, m.sendFn = m.recv, m.send

	return m, true
}

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

func (m *mmsgIO) write(ds []datagram) (int, error) {
	vlen := min(len(ds), len(m.whdrs))
	for i := range vlen {
		d := &ds[i]
		m.wiovs[i].Base = nil
		if d.n > 0 {
			m.wiovs[i].Base = &d.buf[0]
		}
		m.wiovs[i].SetLen(d.n)
		m.whdrs[i].hdr.Namelen = putSockaddr(&m.wnames[i], d.addr, m.v6)
		m.whdrs[i].n = 0
	}
	m.vlen = vlen
	if err := m.raw.Write(m.sendFn); err != nil {
		return 0, err
	}
	if m.errno != 0 {
		return 0, os.NewSyscallError("sendmmsg", m.errno)
	}
	m.count.sentPkts.Add(uint64(m.done)) //nolint:gosec // a count of messages

	return m.done, nil
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
		// hdrs and everything they point to are heap memory mmsgIO keeps
		// alive, and Go's collector does not move it.
		//nolint:gosec // G103: the mmsghdr array for the call
		r, _, e := unix.Syscall6(nr, fd, uintptr(unsafe.Pointer(hdrs)), uintptr(m.vlen), 0, 0, 0)
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
