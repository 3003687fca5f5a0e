//go:build !unix

package turn

import "net"

// socketBufferBytes is the SO_RCVBUF/SO_SNDBUF target.
const socketBufferBytes = 4 << 20

// raiseBuffers asks for socketBufferBytes; this platform gives no portable
// way to read the result back, so it is reported as granted.
func raiseBuffers(c *net.UDPConn) (rcv, snd int, ok bool) {
	errR := c.SetReadBuffer(socketBufferBytes)
	errW := c.SetWriteBuffer(socketBufferBytes)

	return socketBufferBytes, socketBufferBytes, errR == nil && errW == nil
}
