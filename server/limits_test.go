package server

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/hostrelay/hostrelay/internal/lobbytest"
	"github.com/hostrelay/hostrelay/protocol"
)

// refusedWith requires err to be invalid_argument with message want.
func refusedWith(t *testing.T, err error, want string) {
	t.Helper()
	var re lobbytest.ReplyError
	if !errors.As(err, &re) || re.Code != protocol.CodeInvalidArgument || re.Message != want {
		t.Fatalf("got %v, want invalid_argument %q", err, want)
	}
}

// TestSizeLimitFlags: each size flag reaches the live hub, at and past it.
func TestSizeLimitFlags(t *testing.T) {
	s := startServer(t, "-max-frame", "4KiB", "-max-sdp", "2048", "-max-candidate", "100",
		"-max-chat-length", "10", "-max-room-name", "5")
	addr := s.Addrs().HTTP

	host := dialLobby(t, addr, "Ada")
	if host.welcome.MaxFrame != 4096 {
		t.Fatalf("welcome.maxFrame = %d, want 4096 from -max-frame 4KiB", host.welcome.MaxFrame)
	}
	refusedWith(t, host.call(protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "abcdef", MaxPlayers: 2}, &protocol.RoomJoined{}),
		"name is longer than 5 characters")
	rj := host.create("abcde", 2, "")

	if err := host.call(protocol.TypeChat, &protocol.Chat{Text: strings.Repeat("é", 10)}, &protocol.OK{}); err != nil {
		t.Fatalf("chat at -max-chat-length: %v", err)
	}
	host.next(protocol.TypeChatMessage, &protocol.ChatMessage{})
	refusedWith(t, host.call(protocol.TypeChat, &protocol.Chat{Text: strings.Repeat("é", 11)}, &protocol.OK{}),
		"text is longer than 10 characters")

	bob := dialLobby(t, addr, "Bob")
	bj, err := bob.join(rj.Room.Code, "")
	if err != nil {
		t.Fatal(err)
	}
	host.next(protocol.TypePlayerJoined, &protocol.PlayerJoined{})
	sdp := strings.Repeat("s", 2048)
	if err := bob.call(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: sdp}, &protocol.OK{}); err != nil {
		t.Fatalf("offer at -max-sdp: %v", err)
	}
	var sig protocol.Signal
	host.next(protocol.TypeSignal, &sig)
	if sig.SDP != sdp {
		t.Fatalf("relayed SDP of %d bytes", len(sig.SDP))
	}
	refusedWith(t, bob.call(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: sdp + "s"}, &protocol.OK{}),
		"sdp is longer than 2048 bytes")
	cand := strings.Repeat("c", 100)
	if err := host.call(protocol.TypeSignal, &protocol.Signal{To: bj.You, Kind: protocol.SignalCandidate, Candidate: cand}, &protocol.OK{}); err != nil {
		t.Fatalf("candidate at -max-candidate: %v", err)
	}
	bob.next(protocol.TypeSignal, &sig)
	refusedWith(t, host.call(protocol.TypeSignal, &protocol.Signal{To: bj.You, Kind: protocol.SignalCandidate, Candidate: cand + "c"}, &protocol.OK{}),
		"cand is longer than 100 bytes")

	// A frame of exactly 4096 bytes is read (its made-up type answered),
	// one byte more closes the connection with 1009.
	probe := func(n int) []byte {
		frame, err := protocol.Encode(strings.Repeat("x", n), 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		return frame
	}
	typ := strings.Repeat("x", 4096-(len(probe(1000))-1000))
	if err := bob.call(typ, nil, nil); !isCode(err, protocol.CodeUnknownType) {
		t.Fatalf("frame at -max-frame: %v, want unknown_type", err)
	}
	if err := bob.Write(t.Context(), probe(len(typ)+1)); err != nil {
		t.Fatal(err)
	}
	if err := bob.closed(); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("closed with %v, want 1009", err)
	}
}

// TestSignalRateFlags: -signal-burst signals pass at once, the next is
// refused with rate_limited.
func TestSignalRateFlags(t *testing.T) {
	s := startServer(t, "-signals-per-second", "0.01", "-signal-burst", "3")
	addr := s.Addrs().HTTP
	host := dialLobby(t, addr, "Ada")
	rj := host.create("r", 2, "")
	bob := dialLobby(t, addr, "Bob")
	if _, err := bob.join(rj.Room.Code, ""); err != nil {
		t.Fatal(err)
	}
	signal := &protocol.Signal{To: rj.You, Kind: protocol.SignalCandidate, Candidate: "c"}
	for i := 0; i < 3; i++ {
		if err := bob.call(protocol.TypeSignal, signal, &protocol.OK{}); err != nil {
			t.Fatalf("signal %d of a burst of 3: %v", i+1, err)
		}
	}
	if err := bob.call(protocol.TypeSignal, signal, &protocol.OK{}); !isCode(err, protocol.CodeRateLimited) {
		t.Fatalf("signal past -signal-burst: %v, want rate_limited", err)
	}
}

func TestLimitFlagsValidated(t *testing.T) {
	cfg, err := LoadConfig(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.Lobby; l.MaxFrame != protocol.MaxFrame || l.MaxSDP != protocol.MaxSDP || l.MaxCandidate != protocol.MaxCandidate ||
		l.MaxChatText != protocol.MaxChatText || l.MaxRoomName != protocol.MaxRoomName ||
		l.SignalsPerSecond != 20 || l.SignalBurst != 60 {
		t.Fatalf("defaults are not the protocol's limits: %+v", cfg)
	}

	for _, ok := range [][]string{
		{"-max-frame", "16KiB", "-max-sdp", "8KiB", "-max-candidate", "512", "-max-chat-length", "200", "-max-room-name", "48"},
		{"-max-frame", "2048", "-max-sdp", "1792", "-max-candidate", "1", "-max-chat-length", "1", "-max-room-name", "1"},
		{"-signals-per-second", "0.5", "-signal-burst", "1"},
	} {
		if _, err := LoadConfig(ok, noEnv, io.Discard); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
	cfg, err = LoadConfig(nil, func(k string) string {
		return map[string]string{"HOSTRELAY_MAX_FRAME": "8KiB", "HOSTRELAY_MAX_SDP": "4096",
			"HOSTRELAY_MAX_ROOM_NAME": "20", "HOSTRELAY_SIGNAL_BURST": "9"}[k]
	}, io.Discard)
	if l := cfg.Lobby; err != nil || l.MaxFrame != 8192 || l.MaxSDP != 4096 || l.MaxRoomName != 20 || l.SignalBurst != 9 {
		t.Fatalf("environment: %v %+v", err, cfg)
	}

	for _, bad := range [][]string{
		{"-max-frame", "0"},
		{"-max-frame", "2047"}, // under signaling.MinFrame
		{"-max-frame", "16385"},
		{"-max-frame", "1MiB"},
		{"-max-frame", "big"},
		{"-max-sdp", "0"},
		{"-max-sdp", "8193"},
		{"-max-sdp", "4000", "-max-frame", "4KiB"}, // leaves under 256 bytes for the rest
		{"-max-candidate", "0"},
		{"-max-candidate", "513"},
		{"-max-chat-length", "0"},
		{"-max-chat-length", "201"},
		{"-max-room-name", "0"},
		{"-max-room-name", "49"},
		{"-signals-per-second", "0"},
		{"-signal-burst", "0"},
	} {
		_, err := LoadConfig(bad, noEnv, io.Discard)
		if err == nil {
			t.Errorf("%v accepted", bad)
		} else if !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: error does not name the flag: %v", bad, err)
		}
	}
	// Lowering the frame under the default SDP is refused, naming both.
	if _, err := LoadConfig([]string{"-max-frame", "4KiB"}, noEnv, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "-max-sdp") || !strings.Contains(err.Error(), "-max-frame") {
		t.Errorf("-max-frame 4KiB with the default -max-sdp: %v", err)
	}
}
