// Package loadgen drives UDP relays for the benchmarks: TURN servers (ours
// and coturn) through pion/turn's client, a bare relay, and the direct path.
// Control traffic (Allocate, CreatePermission, ChannelBind) goes through
// pion's client; the data path writes ChannelData frames itself with
// sendmmsg and reads them with recvmmsg and kernel receive timestamps, so
// the generator stays cheap and measures the relay, not its own scheduling.
// An Endpoint is one socket per client; a Mux emulates thousands of clients,
// each with its own loopback address, on one socket (the capacity run).
package loadgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// Frame layout: a 4-byte ChannelData header (channel number, length), then
// the payload: send time (unix ns, 8 bytes), run id (4), sequence (4), filler.
const (
	headerLen  = 4
	stampLen   = 16
	MinPayload = stampLen
	// bufferBytes is asked for SO_RCVBUF and SO_SNDBUF on every generator socket.
	bufferBytes = 4 << 20
	readBatch   = 64
)

// DefaultChannel is the first channel number pion's client binds.
const DefaultChannel = 0x4000

// Endpoint is one client socket of the generator. Data frames it sends go to
// Dst framed for Channel; frames it receives are counted against the current
// run, and anything else (STUN) goes to OnControl.
type Endpoint struct {
	Conn    *net.UDPConn
	Dst     *net.UDPAddr
	Channel uint16
	// OnControl receives non-data packets (STUN responses during setup). It
	// runs on the receive goroutine and must copy data it keeps.
	OnControl func(b []byte, from net.Addr)

	pc     *ipv4.PacketConn
	run    atomic.Pointer[runStats]
	probes atomic.Uint32 // probe frames seen (run id 0)
	done   chan struct{}
	closer sync.Once
}

// NewEndpoint opens a loopback UDP socket with large buffers and kernel
// receive timestamps and starts its receive loop.
func NewEndpoint() (*Endpoint, error) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("loadgen: listen: %w", err)
	}
	_ = conn.SetReadBuffer(bufferBytes)
	_ = conn.SetWriteBuffer(bufferBytes)
	raw, err := conn.SyscallConn()
	if err == nil {
		err2 := raw.Control(func(fd uintptr) {
			err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		})
		err = errors.Join(err, err2)
	}
	if err != nil {
		_ = conn.Close()

		return nil, fmt.Errorf("loadgen: SO_TIMESTAMPNS: %w", err)
	}
	e := &Endpoint{Conn: conn, Channel: DefaultChannel, pc: ipv4.NewPacketConn(conn), done: make(chan struct{})}
	go e.readLoop()

	return e, nil
}

// Addr is the socket's local address.
func (e *Endpoint) Addr() *net.UDPAddr { return e.Conn.LocalAddr().(*net.UDPAddr) } //nolint:forcetypeassert // UDP

// Close closes the socket and waits for the receive loop to end.
func (e *Endpoint) Close() error {
	var err error
	e.closer.Do(func() {
		err = e.Conn.Close()
		<-e.done
	})

	return err
}

// Probe sends one probe frame (run id 0) to Dst.
func (e *Endpoint) Probe() error {
	b := make([]byte, headerLen+stampLen)
	putFrame(b, e.Channel, time.Now().UnixNano(), 0, 0)
	_, err := e.Conn.WriteToUDP(b, e.Dst)

	return err
}

// Probes reports how many probe frames arrived.
func (e *Endpoint) Probes() uint32 { return e.probes.Load() }

func putFrame(b []byte, channel uint16, now int64, run, seq uint32) {
	binary.BigEndian.PutUint16(b[0:2], channel)
	binary.BigEndian.PutUint16(b[2:4], uint16(len(b)-headerLen)) //nolint:gosec // frames are < 64 KiB
	binary.BigEndian.PutUint64(b[4:12], uint64(now))             //nolint:gosec // a unix time
	binary.BigEndian.PutUint32(b[12:16], run)
	binary.BigEndian.PutUint32(b[16:20], seq)
}

// isData reports whether b is a ChannelData frame (first two bits 01).
func isData(b []byte) bool { return len(b) >= headerLen+stampLen && b[0]&0xC0 == 0x40 }

func (e *Endpoint) readLoop() {
	defer close(e.done)
	msgs := make([]ipv4.Message, readBatch)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, 2048)}
		msgs[i].OOB = make([]byte, unix.CmsgSpace(16))
	}
	for {
		n, err := e.pc.ReadBatch(msgs, 0)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var errno syscall.Errno
			if errors.As(err, &errno) && errno.Temporary() {
				continue
			}

			return
		}
		for i := range msgs[:n] {
			m := &msgs[i]
			b := m.Buffers[0][:m.N]
			if !isData(b) {
				if e.OnControl != nil {
					e.OnControl(b, m.Addr)
				}

				continue
			}
			run := binary.BigEndian.Uint32(b[12:16])
			if run == 0 {
				e.probes.Add(1)

				continue
			}
			rs := e.run.Load()
			if rs == nil || rs.id != run {
				continue
			}
			rs.received.Add(1)
			if rx, ok := rxTime(m.OOB[:m.NN]); ok {
				sent := int64(binary.BigEndian.Uint64(b[4:12])) //nolint:gosec // a unix time
				rs.hist.Add(time.Duration(rx - sent))
			}
		}
	}
}

// rxTime extracts the SCM_TIMESTAMPNS kernel receive time (unix ns). The
// generator asks for no other control message, so it is the first one; the
// header is a 64-bit length and two 32-bit ints on linux/amd64 and arm64.
func rxTime(oob []byte) (int64, bool) {
	const hdr = 16
	if len(oob) < hdr+16 {
		return 0, false
	}
	level := int32(binary.NativeEndian.Uint32(oob[8:12])) //nolint:gosec // cmsg level
	typ := int32(binary.NativeEndian.Uint32(oob[12:16]))  //nolint:gosec // cmsg type
	if level != unix.SOL_SOCKET || typ != unix.SCM_TIMESTAMPNS {
		return 0, false
	}
	sec := int64(binary.NativeEndian.Uint64(oob[hdr : hdr+8]))     //nolint:gosec // timespec
	nsec := int64(binary.NativeEndian.Uint64(oob[hdr+8 : hdr+16])) //nolint:gosec // timespec

	return sec*1e9 + nsec, true
}
