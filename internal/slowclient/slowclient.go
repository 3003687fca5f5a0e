// Package slowclient gives tests a client that holds an HTTP request open by
// trickling its body, as a slow or hostile client would: what a server's
// shutdown and connection limits must not wait on for ever.
package slowclient

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Trickle dials addr and sends a POST of a 200 KB body one byte every
// 50 ms. The returned channel is closed once the server has closed the
// connection (a write failed); the connection is closed when the test ends.
func Trickle(t testing.TB, addr string) <-chan struct{} {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "POST /api/v1/ice HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"+
		"Content-Length: 204800\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(closed)
		for {
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Cleanup(func() { _ = c.Close(); wg.Wait() })
	return closed
}
