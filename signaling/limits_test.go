package signaling

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// Each configurable size limit, set below the protocol's, is tested at the
// limit (accepted) and one past it (refused, naming the field and limit).

// refusedWith requires an invalid_argument reply whose message is want.
func refusedWith(c *client, want, typ string, body any) {
	c.t.Helper()
	if e := c.refused(protocol.CodeInvalidArgument, typ, body); e.Message != want {
		c.t.Fatalf("%s refused with %q, want %q", typ, e.Message, want)
	}
}

func TestConfiguredFrameLimit(t *testing.T) {
	hub, url := testHub(t, func(c *Config) { c.MaxFrame = 4096; c.MaxSDP = 1024 })
	c := dial(t, url, nil)
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada"})
	var w protocol.Welcome
	c.expect(protocol.TypeWelcome, &w)
	if w.MaxFrame != 4096 {
		t.Fatalf("welcome.maxFrame = %d, want the configured 4096", w.MaxFrame)
	}

	// The read limit is the configured one, not the protocol's.
	c.frameLimitIs(4096)
	waitFor(t, "session gone", func() bool { return hub.Stats().Sessions == 0 })
}

func TestDefaultLimitsAreTheProtocols(t *testing.T) {
	_, url := testHub(t, nil)
	c := dial(t, url, nil)
	c.request(protocol.TypeHello, &protocol.Hello{Version: protocol.Version, Name: "Ada"})
	var w protocol.Welcome
	c.expect(protocol.TypeWelcome, &w)
	if w.MaxFrame != protocol.MaxFrame {
		t.Fatalf("welcome.maxFrame = %d, want %d", w.MaxFrame, protocol.MaxFrame)
	}
	// Every field at its protocol maximum passes a default hub.
	name := strings.Repeat("é", protocol.MaxRoomName)
	host := connect(t, url, "Host")
	rj := host.create(name, 2, "")
	host.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: name, MaxPlayers: 2})
	host.ok(protocol.TypeChat, &protocol.Chat{Text: strings.Repeat("é", protocol.MaxChatText)})
	host.expect(protocol.TypeRoomUpdated, &protocol.RoomUpdated{})
	host.expect(protocol.TypeChatMessage, &protocol.ChatMessage{})
	a := connect(t, url, "A")
	a.join(rj.Room.Code, "")
	a.ok(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: strings.Repeat("s", protocol.MaxSDP)})
	a.ok(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalCandidate, Candidate: strings.Repeat("c", protocol.MaxCandidate)})
}

func TestConfiguredRoomNameLimit(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.MaxRoomName = 5 })
	host := connect(t, url, "Ada")
	// Characters, not bytes, and trimmed as the protocol counts them.
	refusedWith(host, "name is longer than 5 characters",
		protocol.TypeCreateRoom, &protocol.CreateRoom{Name: "ééééé6", MaxPlayers: 2})
	host.create(" ééééé ", 2, "")
	host.ok(protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "abcde", MaxPlayers: 2})
	host.expect(protocol.TypeRoomUpdated, &protocol.RoomUpdated{})
	refusedWith(host, "name is longer than 5 characters",
		protocol.TypeUpdateRoom, &protocol.UpdateRoom{Name: "abcdef", MaxPlayers: 2})
}

func TestConfiguredChatLimit(t *testing.T) {
	_, url := testHub(t, func(c *Config) { c.MaxChatText = 10 })
	host := connect(t, url, "Ada")
	host.create("r", 2, "")
	line := strings.Repeat("é", 10)
	host.ok(protocol.TypeChat, &protocol.Chat{Text: line})
	var msg protocol.ChatMessage
	host.expect(protocol.TypeChatMessage, &msg)
	if msg.Text != line {
		t.Fatalf("chat %q, want %q", msg.Text, line)
	}
	refusedWith(host, "text is longer than 10 characters", protocol.TypeChat, &protocol.Chat{Text: line + "x"})
}

func TestConfiguredSignalLimits(t *testing.T) {
	// The smallest frame with the largest SDP it holds: an offer at the
	// limit must arrive, or SignalFrameOverhead is wrong.
	_, url := testHub(t, func(c *Config) {
		c.MaxFrame = MinFrame
		c.MaxSDP = MinFrame - SignalFrameOverhead
		c.MaxCandidate = 100
	})
	host := connect(t, url, "Host")
	rj := host.create("r", 2, "")
	a := connect(t, url, "A")
	aj := a.join(rj.Room.Code, "")
	host.expect(protocol.TypePlayerJoined, &protocol.PlayerJoined{})

	sdp := strings.Repeat("s", MinFrame-SignalFrameOverhead)
	a.ok(protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: sdp})
	var sig protocol.Signal
	host.expect(protocol.TypeSignal, &sig)
	if sig.SDP != sdp || sig.From != aj.You {
		t.Fatalf("relayed offer of %d bytes from %q", len(sig.SDP), sig.From)
	}
	refusedWith(a, "sdp is longer than 1792 bytes",
		protocol.TypeSignal, &protocol.Signal{To: rj.You, Kind: protocol.SignalOffer, SDP: sdp + "s"})
	refusedWith(host, "sdp is longer than 1792 bytes",
		protocol.TypeSignal, &protocol.Signal{To: aj.You, Kind: protocol.SignalAnswer, SDP: sdp + "s"})

	cand := strings.Repeat("c", 100)
	host.ok(protocol.TypeSignal, &protocol.Signal{To: aj.You, Kind: protocol.SignalCandidate, Candidate: cand, Mid: "0"})
	a.expect(protocol.TypeSignal, &sig)
	if sig.Candidate != cand {
		t.Fatalf("relayed candidate of %d bytes", len(sig.Candidate))
	}
	refusedWith(host, "cand is longer than 100 bytes",
		protocol.TypeSignal, &protocol.Signal{To: aj.You, Kind: protocol.SignalCandidate, Candidate: cand + "c", Mid: "0"})
}

func TestLimitsValidated(t *testing.T) {
	ice := func(string, string) protocol.ICE { return protocol.ICE{} }
	for _, tc := range []struct {
		field string
		set   func(*Config)
	}{
		{"MaxFrame", func(c *Config) { c.MaxFrame = -1 }},
		{"MaxFrame", func(c *Config) { c.MaxFrame = protocol.MaxFrame + 1 }},
		{"MaxFrame", func(c *Config) { c.MaxFrame = MinFrame - 1; c.MaxSDP = 1 }},
		{"MaxSDP", func(c *Config) { c.MaxSDP = -1 }},
		{"MaxSDP", func(c *Config) { c.MaxSDP = protocol.MaxSDP + 1 }},
		// The default SDP does not fit a lowered frame: say so, not cut offers short.
		{"MaxSDP", func(c *Config) { c.MaxFrame = 4096 }},
		{"MaxSDP", func(c *Config) { c.MaxFrame = 4096; c.MaxSDP = 4096 - SignalFrameOverhead + 1 }},
		{"MaxCandidate", func(c *Config) { c.MaxCandidate = protocol.MaxCandidate + 1 }},
		{"MaxChatText", func(c *Config) { c.MaxChatText = protocol.MaxChatText + 1 }},
		{"MaxRoomName", func(c *Config) { c.MaxRoomName = protocol.MaxRoomName + 1 }},
		{"MaxRoomName", func(c *Config) { c.MaxRoomName = -1 }},
		// 0 is no longer "the protocol's value": DefaultConfig holds that.
		{"MaxFrame", func(c *Config) { c.MaxFrame = 0 }},
		{"MaxChatText", func(c *Config) { c.MaxChatText = 0 }},
	} {
		cfg := DefaultConfig()
		cfg.ICE = ice
		tc.set(&cfg)
		_, err := NewHub(cfg)
		if err == nil {
			t.Errorf("%+v accepted", cfg)
		} else if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("error does not name %s: %v", tc.field, err)
		}
	}
	for _, set := range []func(*Config){
		func(c *Config) {
			c.MaxFrame, c.MaxSDP, c.MaxCandidate, c.MaxChatText, c.MaxRoomName = protocol.MaxFrame, protocol.MaxSDP,
				protocol.MaxCandidate, protocol.MaxChatText, protocol.MaxRoomName
		},
		func(c *Config) {
			c.MaxFrame, c.MaxSDP, c.MaxCandidate, c.MaxChatText, c.MaxRoomName = MinFrame, 1, 1, 1, 1
		},
		func(c *Config) { c.MaxFrame = 4096; c.MaxSDP = 4096 - SignalFrameOverhead },
	} {
		cfg := DefaultConfig()
		cfg.ICE = ice
		set(&cfg)
		if _, err := NewHub(cfg); err != nil {
			t.Errorf("%+v refused: %v", cfg, err)
		}
	}
}

// TestMinFrameHoldsEveryRequest backs MinFrame's promise: every request a
// client sends, with each field at its protocol maximum (4-byte runes for
// text), fits in MinFrame; only SDP needs more.
func TestMinFrameHoldsEveryRequest(t *testing.T) {
	runes := func(n int) string { return strings.Repeat("😀", n) }
	bytes := func(n int) string { return strings.Repeat("b", n) }
	for typ, body := range map[string]any{
		protocol.TypeHello: &protocol.Hello{Version: protocol.Version, Name: runes(protocol.MaxPlayerName),
			Resume: bytes(protocol.MaxResumeToken), Received: math.MaxUint64, Device: bytes(protocol.MaxDevice), Pings: true},
		protocol.TypeCreateRoom: &protocol.CreateRoom{Name: runes(protocol.MaxRoomName), MaxPlayers: protocol.MaxPlayers,
			Public: true, Password: bytes(protocol.MaxPassword), Mode: runes(protocol.MaxMode), Migrate: true},
		protocol.TypeUpdateRoom: &protocol.UpdateRoom{Name: runes(protocol.MaxRoomName), MaxPlayers: protocol.MaxPlayers,
			Public: true, Password: bytes(protocol.MaxPassword), SetPassword: true, Mode: runes(protocol.MaxMode)},
		protocol.TypeJoinRoom: &protocol.JoinRoom{Code: "ABC2345", Password: bytes(protocol.MaxPassword)},
		protocol.TypeSetName:  &protocol.SetName{Name: runes(protocol.MaxPlayerName)},
		protocol.TypeChat:     &protocol.Chat{Text: runes(protocol.MaxChatText)},
		protocol.TypeSignal: &protocol.Signal{To: "p4294967295", From: "p4294967295", Kind: protocol.SignalCandidate,
			Candidate: bytes(protocol.MaxCandidate), Mid: bytes(protocol.MaxMid)},
	} {
		frame, err := protocol.Encode(typ, math.MaxUint32, body)
		if err != nil {
			t.Fatal(err)
		}
		if len(frame) > MinFrame {
			t.Errorf("%s at its maximum is %d bytes, over MinFrame %d", typ, len(frame), MinFrame)
		}
	}
	// An answer at MaxSDP fits MaxSDP + SignalFrameOverhead, even with a
	// client's (ignored) from and the longest player ids.
	sdp := bytes(protocol.MaxSDP)
	frame, err := protocol.Encode(protocol.TypeSignal, math.MaxUint32, &protocol.Signal{
		To: "p4294967295", From: "p4294967295", Kind: protocol.SignalAnswer, SDP: sdp})
	if err != nil {
		t.Fatal(err)
	}
	if len(frame) > len(sdp)+SignalFrameOverhead {
		t.Errorf("answer frame is %d bytes, over SDP + SignalFrameOverhead = %d", len(frame), len(sdp)+SignalFrameOverhead)
	}
}

// TestZeroConfigRefused: NewHub fills in no limit, so a Config not started
// from DefaultConfig is refused with every zero limit named, and a 0 left in
// one field of DefaultConfig is refused by name; a Grace of 0 (seats not
// held) is a setting, not a mistake.
func TestZeroConfigRefused(t *testing.T) {
	ice := func(string, string) protocol.ICE { return protocol.ICE{} }
	_, err := NewHub(Config{ICE: ice})
	if err == nil {
		t.Fatal("a zero Config was accepted")
	}
	for _, field := range []string{"QueueSize", "MaxRooms", "MaxConnsPerIP", "MessagesPerSecond", "PingInterval",
		"HandshakeTimeout", "ListInterval", "MaxFrame", "MaxRoomName"} {
		if !strings.Contains(err.Error(), field+" ") {
			t.Errorf("error does not name %s: %v", field, err)
		}
	}
	for field, set := range map[string]func(*Config){
		"QueueSize":         func(c *Config) { c.QueueSize = 0 },
		"JoinsPerMinute":    func(c *Config) { c.JoinsPerMinute = 0 },
		"SignalsPerSecond":  func(c *Config) { c.SignalsPerSecond = 0 },
		"WriteTimeout":      func(c *Config) { c.WriteTimeout = 0 },
		"Grace":             func(c *Config) { c.Grace = -time.Second },
		"ICE is required":   func(c *Config) { c.ICE = nil },
		"MaxRefusedInARow":  func(c *Config) { c.MaxRefusedInARow = -1 },
		"ChatPerSecond":     func(c *Config) { c.ChatPerSecond = -1 },
		"JoinFailureEvery":  func(c *Config) { c.JoinFailureEvery = 0 },
		"MaxListedRooms":    func(c *Config) { c.MaxListedRooms = 0 },
		"ReplayBytes":       func(c *Config) { c.ReplayBytes = 0 },
		"MessageBurst":      func(c *Config) { c.MessageBurst = 0 },
		"MessagesPerSecond": func(c *Config) { c.MessagesPerSecond = 0 },
	} {
		cfg := DefaultConfig()
		cfg.ICE = ice
		set(&cfg)
		if _, err := NewHub(cfg); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	cfg := DefaultConfig()
	cfg.ICE = ice
	cfg.Grace = 0
	if _, err := NewHub(cfg); err != nil {
		t.Errorf("Grace 0 refused: %v", err)
	}
}
