// Package stunprobe asks a STUN or TURN server over UDP whether it is there:
// one Binding request, answered by a Binding success. Tests use it to see a
// server start and stop; the benchmark, to wait for coturn.
package stunprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/pion/stun/v3"
)

// Binding sends one Binding request to addr and waits, until ctx is done,
// for the success response with the same transaction ID. Any other answer
// is an error; so is silence.
func Binding(ctx context.Context, addr string) error {
	conn, err := net.Dial("udp4", addr)
	if err != nil {
		return fmt.Errorf("stunprobe: %w", err)
	}
	defer conn.Close()
	// Unblocks the read when ctx ends, whether by deadline or cancel.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()

	req := stun.MustBuild(stun.TransactionID, stun.BindingRequest)
	if _, err := conn.Write(req.Raw); err != nil {
		return fmt.Errorf("stunprobe: %w", err)
	}
	buf := make([]byte, 1500)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("stunprobe: no answer from %s: %w", addr, ctx.Err())
			}
			return fmt.Errorf("stunprobe: %w", err)
		}
		res := &stun.Message{Raw: append([]byte(nil), buf[:n]...)}
		if res.Decode() != nil || res.TransactionID != req.TransactionID {
			continue // not ours: keep listening
		}
		if res.Type != stun.BindingSuccess {
			return fmt.Errorf("stunprobe: %s answered %v", addr, res.Type)
		}
		return nil
	}
}

// ErrNoAnswer is returned by WaitUp when the server never answered.
var ErrNoAnswer = errors.New("stunprobe: no answer")

// WaitUp probes addr every interval until it answers or ctx ends: for a
// server that is still starting.
func WaitUp(ctx context.Context, addr string, interval time.Duration) error {
	for ctx.Err() == nil {
		try, cancel := context.WithTimeout(ctx, interval)
		err := Binding(try, addr)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			time.Sleep(interval) // refused at once (port not open yet): do not spin
		}
	}
	return fmt.Errorf("%w from %s: %w", ErrNoAnswer, addr, ctx.Err())
}
