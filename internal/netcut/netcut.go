// Package netcut gives tests and load generators an HTTP client whose TCP
// connections can be cut as a network failure would: no close frame, just a
// dead socket. The lobby SDKs then resume their held seat on a new
// connection, which is what the callers want to exercise.
package netcut

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// Cuttable records the connections its Client dials until Cut closes them.
// The zero value is ready to use.
type Cuttable struct {
	mu    sync.Mutex
	conns []net.Conn
}

// Client returns an HTTP client whose connections Cut can close.
func (c *Cuttable) Client() *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err == nil {
			c.mu.Lock()
			c.conns = append(c.conns, conn)
			c.mu.Unlock()
		}
		return conn, err
	}}}
}

// Cut closes every connection dialed since the last Cut and says how many.
func (c *Cuttable) Cut() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	n := len(c.conns)
	c.conns = nil
	return n
}
