package protocol

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestCheckRefusesAllocationBombs(t *testing.T) {
	cases := map[string][]byte{
		"array32 of 4G":    {0xdd, 0xff, 0xff, 0xff, 0xff},
		"map32 of 4G":      {0xdf, 0xff, 0xff, 0xff, 0xff},
		"array16 of 64K":   {0xdc, 0xff, 0xff, 0x01},
		"str32 of 4G":      {0xdb, 0xff, 0xff, 0xff, 0xff, 'a'},
		"bin32 of 4G":      {0xc6, 0xff, 0xff, 0xff, 0xff},
		"map of bombs":     {0x81, 0xa1, 'b', 0xdd, 0xff, 0xff, 0xff, 0xff},
		"truncated u32":    {0xce, 0x01},
		"truncated len":    {0xdb, 0x00},
		"empty":            {},
		"reserved c1":      {0xc1},
		"ext8":             {0xc7, 0x01, 0x05, 0x00},
		"fixext timestamp": {0xd6, 0xff, 0, 0, 0, 0},
		"trailing bytes":   {0xc0, 0xc0},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if err := Check(b, MaxDepth); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Check = %v, want ErrMalformed", err)
			}
			if _, err := Decode(b); err == nil {
				t.Fatal("Decode accepted it")
			}
		})
	}
}

func TestCheckDepthAtAndPastLimit(t *testing.T) {
	nested := func(depth int) []byte {
		return append(bytes.Repeat([]byte{0x91}, depth), 0xc0)
	}
	if err := Check(nested(MaxDepth), MaxDepth); err != nil {
		t.Fatalf("depth %d (the limit): %v", MaxDepth, err)
	}
	if err := Check(nested(MaxDepth+1), MaxDepth); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("depth %d: %v, want ErrTooDeep", MaxDepth+1, err)
	}
	// 100,000 levels must fail fast without deep recursion.
	if err := Check(nested(100_000), MaxDepth); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("depth 100000: %v, want ErrTooDeep", err)
	}
}

func TestCheckAcceptsEveryFormat(t *testing.T) {
	vals := [][]byte{
		{0x00}, {0x7f}, {0xe0}, {0xff}, {0xc0}, {0xc2}, {0xc3},
		{0xcc, 1}, {0xcd, 1, 2}, {0xce, 1, 2, 3, 4}, {0xcf, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xd0, 1}, {0xd1, 1, 2}, {0xd2, 1, 2, 3, 4}, {0xd3, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xca, 1, 2, 3, 4}, {0xcb, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xa1, 'x'}, {0xd9, 1, 'x'}, {0xda, 0, 1, 'x'}, {0xdb, 0, 0, 0, 1, 'x'},
		{0xc4, 1, 9}, {0xc5, 0, 1, 9}, {0xc6, 0, 0, 0, 1, 9},
		{0x90}, {0x91, 0x01}, {0xdc, 0, 1, 0x01}, {0xdd, 0, 0, 0, 1, 0x01},
		{0x80}, {0x81, 0x01, 0x02}, {0xde, 0, 1, 0x01, 0x02}, {0xdf, 0, 0, 0, 1, 0x01, 0x02},
	}
	for _, v := range vals {
		if err := Check(v, MaxDepth); err != nil {
			t.Errorf("Check(%x) = %v", v, err)
		}
	}
}

func TestDecodeLimits(t *testing.T) {
	// At the limit: a frame of exactly MaxFrame bytes decodes.
	// {"t": "ab", "x": <str16 padding>}
	frame := []byte{}
	frame = append(frame, 0x82, 0xa1, 't', 0xa2, 'a', 'b', 0xa1, 'x', 0xda)
	pad := MaxFrame - len(frame) - 2
	frame = append(frame, byte(pad>>8), byte(pad))
	frame = append(frame, strings.Repeat("p", pad)...)
	if len(frame) != MaxFrame {
		t.Fatalf("test frame is %d bytes", len(frame))
	}
	if _, err := Decode(frame); err != nil {
		t.Fatalf("frame at MaxFrame: %v", err)
	}
	if _, err := Decode(append(frame, 0)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("frame past MaxFrame: %v, want ErrTooLarge", err)
	}
}

func TestDecodeWrongTypes(t *testing.T) {
	cases := map[string][]byte{
		"not a map":      {0x93, 1, 2, 3},
		"type is an int": {0x81, 0xa1, 't', 0x05},
		"no type":        {0x81, 0xa2, 'i', 'd', 0x05},
		"id is a string": {0x82, 0xa1, 't', 0xa1, 'x', 0xa2, 'i', 'd', 0xa1, 'y'},
	}
	for name, b := range cases {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: Decode accepted %x", name, b)
		}
	}
	// A body of the wrong shape fails in DecodeBody, not with a panic.
	frame, err := Encode(TypeCreateRoom, 1, map[string]any{"name": 5, "maxPlayers": "many"})
	if err != nil {
		t.Fatal(err)
	}
	env, err := Decode(frame)
	if err != nil {
		t.Fatal(err)
	}
	var m CreateRoom
	if err := DecodeBody(env, &m); !errors.Is(err, ErrMalformed) {
		t.Fatalf("DecodeBody = %v, want ErrMalformed", err)
	}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("é", MaxRoomName)
	ok := []interface{ Validate() error }{
		&CreateRoom{Name: long, MaxPlayers: MinPlayers},
		&CreateRoom{Name: "r", MaxPlayers: MaxPlayers, Password: strings.Repeat("p", MaxPassword)},
		&JoinRoom{Code: "abc-2345"},
		&Signal{To: "p1", Kind: SignalOffer, SDP: strings.Repeat("s", MaxSDP)},
		&Signal{To: "p1", Kind: SignalCandidate, Candidate: strings.Repeat("c", MaxCandidate)},
		&Signal{To: "p1", Kind: SignalCandidate},
	}
	for _, m := range ok {
		if err := m.Validate(); err != nil {
			t.Errorf("%+v: %v", m, err)
		}
	}
	bad := []interface{ Validate() error }{
		&CreateRoom{Name: long + "é", MaxPlayers: 4},
		&CreateRoom{Name: "  ", MaxPlayers: 4},
		&CreateRoom{Name: "a\x00b", MaxPlayers: 4},
		&CreateRoom{Name: "r", MaxPlayers: MinPlayers - 1},
		&CreateRoom{Name: "r", MaxPlayers: MaxPlayers + 1},
		&CreateRoom{Name: "r", MaxPlayers: 4, Password: strings.Repeat("p", MaxPassword+1)},
		&JoinRoom{Code: "ABC234"},
		&JoinRoom{Code: "ABC23450"},
		&JoinRoom{Code: "ABCO234"},
		&JoinRoom{Code: "ABC2345", Password: strings.Repeat("p", MaxPassword+1)},
		&Signal{Kind: SignalOffer, SDP: "x"},
		&Signal{To: "p1", Kind: SignalOffer, SDP: strings.Repeat("s", MaxSDP+1)},
		&Signal{To: "p1", Kind: SignalOffer},
		&Signal{To: "p1", Kind: SignalCandidate, Candidate: strings.Repeat("c", MaxCandidate+1)},
		&Signal{To: "p1", Kind: "bye"},
	}
	for _, m := range bad {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v: accepted", m)
		}
	}
	if err := ValidatePlayerName(strings.Repeat("n", MaxPlayerName)); err != nil {
		t.Error(err)
	}
	if err := ValidatePlayerName(strings.Repeat("n", MaxPlayerName+1)); err == nil {
		t.Error("overlong name accepted")
	}
}
