package main

import (
	"bytes"
	"testing"
)

func TestPacketRoundTrip(t *testing.T) {
	p := pointerPacket(7, 0.25, 1.5, 1234.5)
	if len(p) != pointerSize || p[0] != kindPointer {
		t.Fatalf("pointer packet %x", p)
	}
	if _, ok := echoSentAt(p); ok {
		t.Fatal("a pointer packet read as an echo")
	}
	e, ok := echoOf(p)
	if !ok || e[0] != kindEcho || !bytes.Equal(e[1:], p[1:]) {
		t.Fatalf("echo %x", e)
	}
	if at, ok := echoSentAt(e); !ok || at != 1234.5 {
		t.Fatalf("sentAt %v %v", at, ok)
	}
	if !isTest(testPacket(3)) || isTest(p) {
		t.Fatal("isTest")
	}
	if _, ok := echoOf(testPacket(3)); ok {
		t.Fatal("a test packet was echoed")
	}
}

// FuzzPackets: whatever a peer sends, the decoders neither panic nor accept
// a packet of the wrong size or kind.
func FuzzPackets(f *testing.F) {
	f.Add(pointerPacket(1, 0.5, 0.5, 10))
	f.Add(testPacket(9))
	f.Add([]byte{})
	f.Add([]byte{kindEcho})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, ok := echoSentAt(b); ok && (len(b) != pointerSize || b[0] != kindEcho) {
			t.Fatalf("echoSentAt accepted %x", b)
		}
		if e, ok := echoOf(b); ok && (len(e) != pointerSize || b[0] != kindPointer) {
			t.Fatalf("echoOf accepted %x", b)
		}
		if isTest(b) && (len(b) != testSize || b[0] != kindTest) {
			t.Fatalf("isTest accepted %x", b)
		}
	})
}
