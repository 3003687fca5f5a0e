package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// rawConn is a lobby connection written frame by frame (RFC 6455), for the
// attackers: the SDK, like any WebSocket library, never sends an
// unsolicited pong flood or an endless fragmented message.
type rawConn struct {
	conn net.Conn
	br   *bufio.Reader
	mask [4]byte // one key for the connection: the server does not check
	// For a dropped burst reader's note: when the last ping came (and was
	// answered) and when the last frame of any kind came.
	lastPing, lastFrame time.Time
	pings               int
}

// WebSocket opcodes and first bytes (FIN bit and opcode) the attackers use.
const (
	opContinuation = 0x0
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa
	finBit         = 0x80
)

// dialRaw connects to the lobby at addr (host:port) from the local address
// from (nil: any), upgrades by hand and says hello as name; it returns once
// the Welcome has come.
func dialRaw(ctx context.Context, addr, name string, from net.Addr) (*rawConn, error) {
	d := net.Dialer{LocalAddr: from}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &rawConn{conn: conn, br: bufio.NewReaderSize(conn, 16<<10)}
	_, _ = rand.Read(c.mask[:])
	if err := c.handshake(addr, name); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return c, nil
}

func (c *rawConn) handshake(addr, name string) error {
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = c.conn.SetDeadline(time.Time{}) }()
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	req := "GET /ws HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key) + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c.conn, req); err != nil {
		return err
	}
	res, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return fmt.Errorf("upgrade: %w", err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("upgrade: %s", res.Status)
	}
	hello, err := protocol.Encode(protocol.TypeHello, 1, &protocol.Hello{Version: protocol.Version, Name: name})
	if err != nil {
		return err
	}
	if _, err := c.conn.Write(c.frame(nil, finBit|opBinary, hello)); err != nil {
		return err
	}
	for {
		env, err := c.readMessage()
		if err != nil {
			return fmt.Errorf("hello: %w", err)
		}
		switch {
		case env.Type == protocol.TypeWelcome && env.ID == 1:
			return nil
		case env.Type == protocol.TypeError:
			return fmt.Errorf("hello: %s", errorCode(env))
		}
	}
}

// frame appends to dst one masked client frame with first byte b0.
func (c *rawConn) frame(dst []byte, b0 byte, payload []byte) []byte {
	dst = append(dst, b0)
	switch n := len(payload); {
	case n < 126:
		dst = append(dst, 0x80|byte(n)) //nolint:gosec // n < 126
	case n < 1<<16:
		dst = append(dst, 0x80|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n)) //nolint:gosec // n < 1<<16
	default:
		dst = append(dst, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	dst = append(dst, c.mask[:]...)
	for i, b := range payload {
		dst = append(dst, b^c.mask[i%4])
	}
	return dst
}

// errClosed is a close frame from the server; status is its code.
type errClosed struct{ status int }

func (e errClosed) Error() string { return fmt.Sprintf("closed by the server with %d", e.status) }

// readFrame reads one server frame (unmasked): its first byte and payload.
func (c *rawConn) readFrame() (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(c.br, l[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(c.br, l[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(l[:])
	}
	if n > 1<<20 {
		return 0, nil, fmt.Errorf("a server frame of %d bytes", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(c.br, p); err != nil {
		return 0, nil, err
	}
	return h[0], p, nil
}

// readMessage reads frames until a whole binary message, answering pings;
// a close frame ends it with errClosed.
func (c *rawConn) readMessage() (protocol.Envelope, error) {
	for {
		b0, p, err := c.readFrame()
		if err != nil {
			return protocol.Envelope{}, err
		}
		c.lastFrame = time.Now()
		switch b0 & 0x0f {
		case opPing:
			c.lastPing = c.lastFrame
			c.pings++
			if _, err := c.conn.Write(c.frame(nil, finBit|opPong, p)); err != nil {
				return protocol.Envelope{}, err
			}
		case opClose:
			status := 0
			if len(p) >= 2 {
				status = int(binary.BigEndian.Uint16(p))
			}
			return protocol.Envelope{}, errClosed{status}
		case opBinary:
			return protocol.Decode(p)
		}
	}
}

// close ends the connection as a client that meant to go: a 1000 close
// frame, then the socket.
func (c *rawConn) close() {
	_ = c.conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.conn.Write(c.frame(nil, finBit|opClose, []byte{0x03, 0xe8}))
	_ = c.conn.Close()
}

// closeStatus is the server's close code in err, or 0 if the connection
// ended without a close frame.
func closeStatus(err error) int {
	var e errClosed
	if errors.As(err, &e) {
		return e.status
	}
	return 0
}

func errorCode(env protocol.Envelope) string {
	var e protocol.Error
	if err := protocol.DecodeBody(env, &e); err != nil {
		return "undecodable error"
	}
	return e.Code + ": " + e.Message
}
