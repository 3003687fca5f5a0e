package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/testwait"
)

// idleFlood is one address holding connections open without sending a byte,
// and opening another whenever the server closes one, until the test ends.
type idleFlood struct {
	connected atomic.Int64 // connections opened, reopened ones included
	closed    atomic.Int64 // of those, how many the server closed
}

// floodIdle starts n such connections to addr from the local address from,
// and waits until each has been open once.
func floodIdle(t *testing.T, addr, from string, n int) *idleFlood {
	t.Helper()
	f := &idleFlood{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					time.Sleep(10 * time.Millisecond) // out of ports for a moment, or ending
					continue
				}
				f.connected.Add(1)
				stop := context.AfterFunc(ctx, func() { _ = c.Close() })
				_, _ = io.Copy(io.Discard, c) // until the server closes it, or the test ends
				if stop() {
					f.closed.Add(1)
				}
				_ = c.Close()
			}
		})
	}
	testwait.For(t, "every flood connection to be open once", func() bool { return f.connected.Load() >= int64(n) })
	return f
}

// probe sends one request on a new connection from the local address from
// and returns its status (0 if there was no answer within within) and how
// long the answer took, dial included.
func probe(addr, from, host, path string, within time.Duration) (int, time.Duration) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, time.Since(start)
	}
	defer c.Close()
	_ = c.SetDeadline(start.Add(within))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); err != nil {
		return 0, time.Since(start)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, time.Since(start)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// probeAll sends n probes one after the other and fails t unless each got
// want within within, logging the slowest.
func probeAll(t *testing.T, n int, addr, from, host, path string, want int, within time.Duration) {
	t.Helper()
	var failed int
	var slowest time.Duration
	for range n {
		code, took := probe(addr, from, host, path, within)
		slowest = max(slowest, took)
		if code != want {
			failed++
		}
	}
	t.Logf("%s from %s: %d of %d without a %d within %v; slowest %v", path, from, failed, n, want, within, slowest.Round(time.Millisecond))
	if failed > 0 {
		t.Errorf("%s from %s: %d of %d requests not answered %d within %v", path, from, failed, n, want, within)
	}
}
