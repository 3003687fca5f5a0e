package main

import (
	"encoding/binary"
	"math"
)

// The lobby page's demo packets (web/games/pointer/src/packets.ts), little-endian:
//
//	pointer / echo: kind u8 | seq u32 | x u16 | y u16 | sentAt f64   (17 bytes)
//	test:           kind u8 | seq u32                                 (5 bytes)
//
// Speaking them lets the bot play against a browser tab: a browser host
// echoes the bot's pointer, and both sides count test packets.
const (
	kindPointer = 1
	kindEcho    = 2
	kindTest    = 3

	pointerSize = 17
	testSize    = 5
)

func pointerPacket(seq uint32, x, y float64, sentAtMs float64) []byte {
	b := make([]byte, pointerSize)
	b[0] = kindPointer
	binary.LittleEndian.PutUint32(b[1:], seq)
	binary.LittleEndian.PutUint16(b[5:], uint16(math.Round(clamp01(x)*0xffff)))
	binary.LittleEndian.PutUint16(b[7:], uint16(math.Round(clamp01(y)*0xffff)))
	binary.LittleEndian.PutUint64(b[9:], math.Float64bits(sentAtMs))
	return b
}

func testPacket(seq uint32) []byte {
	b := make([]byte, testSize)
	b[0] = kindTest
	binary.LittleEndian.PutUint32(b[1:], seq)
	return b
}

// echoSentAt returns the send time carried by an echo, or false.
func echoSentAt(b []byte) (float64, bool) {
	if len(b) != pointerSize || b[0] != kindEcho {
		return 0, false
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[9:])), true
}

// echoOf is what a host sends back for a pointer packet: the same bytes
// with the kind flipped. Anything else gets no echo.
func echoOf(b []byte) ([]byte, bool) {
	if len(b) != pointerSize || b[0] != kindPointer {
		return nil, false
	}
	e := append([]byte(nil), b...)
	e[0] = kindEcho
	return e, true
}

func isTest(b []byte) bool { return len(b) == testSize && b[0] == kindTest }

func clamp01(f float64) float64 { return math.Min(1, math.Max(0, f)) }
