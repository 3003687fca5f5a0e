package loadgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A Mux emulates many UDP clients on one socket, each with its own source
// address in 127.0.0.0/8 and so its own 5-tuple (a TURN server gives each its
// own allocation). The socket is bound to the wildcard address and to the
// loopback device, so nothing outside loopback reaches it; it sends from a
// client's address with IP_PKTINFO and learns which client a datagram is
// for from the same control message on receipt.
//
// It exists for the capacity run: thousands of per-client sockets cost the
// generator a sendmmsg per packet and a wake-up per packet received, which
// made the generator, not the server, the bound. Here one locked thread sends
// every due packet of a pacing quantum in a few sendmmsg calls, and one
// thread drains the socket in large recvmmsg batches at a fixed poll
// interval (kernel receive timestamps keep the latency figures exact however
// late the read).
//
// The socket is a bare file descriptor outside Go's netpoller: a socket
// registered with epoll has every sent datagram's release (on loopback, at
// once) wake the poller, which cost the sender a quarter of its time in a
// profile here.
type Mux struct {
	fd   int
	mu   sync.RWMutex // held to read while fd is in use, to write to close it
	shut bool
	port int
	poll time.Duration

	clients []atomic.Pointer[MuxClient] // by address index
	next    atomic.Int32                // addresses handed out

	run     atomic.Pointer[runStats]
	readErr atomic.Pointer[error] // why the reader stopped early, if it did
	done    chan struct{}
	stop    chan struct{}
	once    sync.Once
}

// MuxConfig shapes a Mux.
type MuxConfig struct {
	// Clients is how many addresses the mux may hand out.
	Clients int
	// Poll is how long the reader sleeps once the socket is empty
	// (default 1 ms). Longer means fewer wake-ups and bigger batches; the
	// receive buffer must hold what arrives meanwhile.
	Poll time.Duration
	// Buffer is asked for SO_RCVBUF and SO_SNDBUF (default 64 MiB; as root
	// past net.core.rmem_max with SO_RCVBUFFORCE).
	Buffer int
}

const (
	muxReadBatch = 256
	muxOOB       = 64 // a timespec and an in_pktinfo, with headers
	// Client addresses are 127.A.B.C with A from muxFirstA and C in 1..250,
	// clear of 127.0.0.1 and of any .0 and .255.
	muxFirstA   = 16
	muxPerB     = 250
	muxPerA     = muxPerB * 256
	muxMaxAddrs = (255 - muxFirstA) * muxPerA
)

// muxAddr is the address of client i.
func muxAddr(i int) [4]byte {
	return [4]byte{127, byte(muxFirstA + i/muxPerA), byte(i / muxPerB % 256), byte(1 + i%muxPerB)} //nolint:gosec // i < muxMaxAddrs
}

// muxIndex is the client index of address a, the inverse of muxAddr.
func muxIndex(a [4]byte) (int, bool) {
	if a[0] != 127 || a[1] < muxFirstA || a[1] == 255 || a[3] < 1 || a[3] > muxPerB {
		return 0, false
	}

	return int(a[1]-muxFirstA)*muxPerA + int(a[2])*muxPerB + int(a[3]-1), true
}

// NewMux opens the socket and starts its reader.
func NewMux(cfg MuxConfig) (*Mux, error) {
	if cfg.Clients < 1 || cfg.Clients > muxMaxAddrs {
		return nil, fmt.Errorf("loadgen: mux of %d clients (1..%d)", cfg.Clients, muxMaxAddrs)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Millisecond
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 64 << 20
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("loadgen: mux socket: %w", err)
	}
	// Bound to the loopback device before the bind: the wildcard address
	// then means every loopback address and nothing else.
	err = muxSockopts(fd, cfg.Buffer)
	if err == nil {
		err = unix.Bind(fd, &unix.SockaddrInet4{})
	}
	var sa unix.Sockaddr
	if err == nil {
		sa, err = unix.Getsockname(fd)
	}
	sa4, ok := sa.(*unix.SockaddrInet4)
	if err == nil && !ok {
		err = fmt.Errorf("local address %v", sa)
	}
	if err != nil {
		_ = unix.Close(fd)

		return nil, fmt.Errorf("loadgen: mux bind: %w", err)
	}
	m := &Mux{
		fd: fd, port: sa4.Port, poll: cfg.Poll, clients: make([]atomic.Pointer[MuxClient], cfg.Clients),
		done: make(chan struct{}), stop: make(chan struct{}),
	}
	go m.readLoop()

	return m, nil
}

func muxSockopts(fd, buffer int) error {
	if err := unix.SetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE, "lo"); err != nil {
		return fmt.Errorf("loadgen: SO_BINDTODEVICE lo: %w", err)
	}
	for _, o := range [][2]int{{unix.SO_RCVBUFFORCE, unix.SO_RCVBUF}, {unix.SO_SNDBUFFORCE, unix.SO_SNDBUF}} {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, o[0], buffer) != nil {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, o[1], buffer) // not root: capped at the sysctl
		}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("loadgen: SO_TIMESTAMPNS: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO, 1); err != nil {
		return fmt.Errorf("loadgen: IP_PKTINFO: %w", err)
	}
	// Don't fragment: the kernel then leaves the IP ID of an unconnected
	// socket's datagrams 0 instead of hashing one per packet.
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO); err != nil {
		return fmt.Errorf("loadgen: IP_MTU_DISCOVER: %w", err)
	}

	return nil
}

// Port is the socket's port, shared by every client.
func (m *Mux) Port() int { return m.port }

// Close closes the socket and waits for the reader; clients stop working.
func (m *Mux) Close() error {
	var err error
	m.once.Do(func() {
		close(m.stop)
		<-m.done
		m.mu.Lock()
		m.shut = true
		err = unix.Close(m.fd)
		m.mu.Unlock()
		for i := range m.clients {
			if c := m.clients[i].Load(); c != nil {
				c.closeOnce.Do(func() { close(c.closed) })
			}
		}
	})

	return err
}

// withFD runs f on the open socket, or reports it closed.
func (m *Mux) withFD(f func(fd int) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.shut {
		return net.ErrClosed
	}

	return f(m.fd)
}

var errMuxFull = errors.New("loadgen: mux has no address left")

// NewClient hands out the next address.
func (m *Mux) NewClient() (*MuxClient, error) {
	i := int(m.next.Add(1) - 1)
	if i >= len(m.clients) {
		return nil, errMuxFull
	}
	a := muxAddr(i)
	c := &MuxClient{
		mux: m, ip: a, addr: &net.UDPAddr{IP: net.IP(a[:]), Port: m.port}, Channel: DefaultChannel,
		oob: pktinfoCmsg(a), closed: make(chan struct{}),
	}
	m.clients[i].Store(c)

	return c, nil
}

// client returns the client addressed a, or nil.
func (m *Mux) client(a [4]byte) *MuxClient {
	i, ok := muxIndex(a)
	if !ok || i >= len(m.clients) {
		return nil
	}

	return m.clients[i].Load()
}

// readLoop drains the socket in batches on a locked thread that sleeps with
// nanosleep between polls, so a busy socket costs one wake-up per poll
// interval rather than one per datagram.
func (m *Mux) readLoop() {
	defer close(m.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	b := newMmsgBatch(muxReadBatch, 2048, muxOOB)
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		n, err := b.recv(m.fd, muxReadBatch) // the fd outlives the loop: Close waits for it
		if err != nil {
			m.readErr.Store(&err)

			return
		}

		for i := range n {
			m.deliver(b, i)
		}
		if n < muxReadBatch {
			sleep(m.poll)
		}
	}
}

// deliver handles message i of a received batch: data frames count toward
// the current run, probes and control go to the addressed client.
func (m *Mux) deliver(b *mmsgBatch, i int) {
	h := &b.hs[i]
	p := b.bufs[i][:h.n]
	info, err := parseRx(b.oobs[i][:h.hdr.Controllen])
	if err != nil {
		return
	}
	if isData(p) {
		run := binary.BigEndian.Uint32(p[12:16])
		if run != 0 {
			if rs := m.run.Load(); rs != nil && rs.id == run {
				rs.received.Add(1)
				if info.rx != 0 {
					rs.hist.Add(time.Duration(info.rx - int64(binary.BigEndian.Uint64(p[4:12])))) //nolint:gosec // a unix time
				}
			}

			return
		}
	}
	if !info.hasDst {
		return
	}
	c := m.client(info.dst)
	if c == nil {
		return
	}
	if isData(p) {
		c.probes.Add(1)

		return
	}
	if f := c.onControl.Load(); f != nil {
		sa := &b.name[i]
		from := &net.UDPAddr{IP: net.IPv4(sa.Addr[0], sa.Addr[1], sa.Addr[2], sa.Addr[3]), Port: sockaddrPort(sa)}
		(*f)(p, from)
	}
}

// MuxClient is one emulated client of a Mux. It is a net.PacketConn (for
// pion's TURN client, which writes through it and is fed by HandleInbound);
// ReadFrom only waits for Close, since the mux's reader gets every datagram.
type MuxClient struct {
	mux  *Mux
	ip   [4]byte
	addr *net.UDPAddr
	oob  []byte // IP_PKTINFO naming ip as the source
	// Dst is where data frames go; Channel frames them.
	Dst     *net.UDPAddr
	Channel uint16

	onControl atomic.Pointer[func(b []byte, from net.Addr)]
	probes    atomic.Uint32
	closed    chan struct{}
	closeOnce sync.Once
}

// OnControl sets the receiver of the client's non-data datagrams (STUN). It
// runs on the mux's reader and must copy what it keeps.
func (c *MuxClient) OnControl(f func(b []byte, from net.Addr)) { c.onControl.Store(&f) }

// Addr is the client's address (its own IP, the mux's port).
func (c *MuxClient) Addr() *net.UDPAddr { return c.addr }

// LocalAddr is Addr, for net.PacketConn.
func (c *MuxClient) LocalAddr() net.Addr { return c.addr }

// WriteTo sends b to addr from the client's address.
func (c *MuxClient) WriteTo(b []byte, addr net.Addr) (int, error) {
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	ua, ok := addr.(*net.UDPAddr)
	if !ok || ua.IP.To4() == nil {
		return 0, fmt.Errorf("loadgen: mux write to %v: not a UDP IPv4 address", addr)
	}
	to := &unix.SockaddrInet4{Port: ua.Port}
	copy(to.Addr[:], ua.IP.To4())
	err := c.mux.withFD(func(fd int) error {
		for {
			err := unix.Sendmsg(fd, b, c.oob, to, 0)
			if !errors.Is(err, unix.EINTR) {
				return err // wrapped below
			}
		}
	})
	if err != nil {
		return 0, fmt.Errorf("loadgen: mux write: %w", err)
	}

	return len(b), nil
}

// ReadFrom waits until the client is closed.
func (c *MuxClient) ReadFrom([]byte) (int, net.Addr, error) {
	<-c.closed

	return 0, nil, net.ErrClosed
}

// Close stops the client's writes; its address is not reused.
func (c *MuxClient) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })

	return nil
}

// SetDeadline and its kin are no-ops: writes never block for long.
func (c *MuxClient) SetDeadline(time.Time) error      { return nil }
func (c *MuxClient) SetReadDeadline(time.Time) error  { return nil }
func (c *MuxClient) SetWriteDeadline(time.Time) error { return nil }

// Probe sends one probe frame (run id 0) to Dst.
func (c *MuxClient) Probe() error {
	b := make([]byte, headerLen+stampLen)
	putFrame(b, c.Channel, time.Now().UnixNano(), 0, 0)
	_, err := c.WriteTo(b, c.Dst)

	return err
}

// Probes reports how many probe frames arrived for the client.
func (c *MuxClient) Probes() uint32 { return c.probes.Load() }
