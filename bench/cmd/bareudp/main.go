// Command bareudp is the practical ceiling for a UDP relay in Go (see
// bare.ServeUDP): one socket, one read loop, one map lookup and one send per
// packet.
//
//	bareudp -listen 127.0.0.1:0   # prints "listening <addr>" on stdout
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/hostrelay/hostrelay/bench/internal/bare"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "UDP listen address")
	flag.Parse()
	conn, err := net.ListenPacket("udp4", *listen)
	if err != nil {
		log.Fatal(err)
	}
	udp := conn.(*net.UDPConn) //nolint:forcetypeassert // udp4
	_ = udp.SetReadBuffer(4 << 20)
	_ = udp.SetWriteBuffer(4 << 20)
	fmt.Printf("listening %s\n", udp.LocalAddr()) //nolint:forbidigo // the driver reads it
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		<-sig
		_ = udp.Close()
	}()
	if err := bare.ServeUDP(udp); err != nil && !errors.Is(err, net.ErrClosed) {
		log.Fatal(err)
	}
}
