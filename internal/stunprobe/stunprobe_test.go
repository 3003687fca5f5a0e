package stunprobe

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/pion/stun/v3"
)

// responder answers every Binding request on a loopback UDP socket with
// the given type, after a stray datagram that must be ignored.
func responder(t *testing.T, typ stun.MessageType) string {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			req := &stun.Message{Raw: append([]byte(nil), buf[:n]...)}
			if req.Decode() != nil {
				continue
			}
			_, _ = pc.WriteTo([]byte("not stun"), from)
			res := stun.MustBuild(stun.NewTransactionIDSetter(req.TransactionID), typ)
			_, _ = pc.WriteTo(res.Raw, from)
		}
	}()
	return pc.LocalAddr().String()
}

func TestBinding(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Binding(ctx, responder(t, stun.BindingSuccess)); err != nil {
		t.Fatalf("answered with success: %v", err)
	}
	if err := Binding(ctx, responder(t, stun.BindingError)); err == nil {
		t.Fatal("answered with an error response: want an error")
	}

	// Silence: a bound socket that never answers; the deadline ends the wait.
	quiet, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	if err := Binding(short, quiet.LocalAddr().String()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("silent server: %v, want the deadline", err)
	}
	short2, cancelShort2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort2()
	if err := WaitUp(short2, quiet.LocalAddr().String(), 50*time.Millisecond); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("WaitUp on a silent server: %v, want ErrNoAnswer", err)
	}
	if err := WaitUp(ctx, responder(t, stun.BindingSuccess), 50*time.Millisecond); err != nil {
		t.Fatalf("WaitUp: %v", err)
	}
}
