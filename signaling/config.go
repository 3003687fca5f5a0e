package signaling

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
)

// ICEFunc issues TURN credentials for a session. host is the Host header the
// client used to reach us (with port), so the TURN URLs can point where the
// client already connects when no public host is configured.
type ICEFunc func(sessionID, host string) protocol.ICE

// Config configures a Hub. Zero values take the defaults in withDefaults.
type Config struct {
	// OriginPatterns are extra allowed browser origins (host patterns as in
	// websocket.AcceptOptions). The page's own origin is always allowed.
	OriginPatterns []string
	// ICE issues TURN credentials; required.
	ICE ICEFunc

	QueueSize    int           // outgoing frames buffered per session; default 64
	PingInterval time.Duration // default 15s; must be < PongTimeout + PingInterval
	PongTimeout  time.Duration // default 10s
	WriteTimeout time.Duration // default 10s
	MaxRooms     int           // default 10000
	// HandshakeTimeout is how long a connection has, from the upgrade, to
	// complete hello; frames before it do not extend it. The protocol
	// promises clients protocol.HandshakeTimeout (the default), so there is
	// no flag; tests shorten it.
	HandshakeTimeout time.Duration
	// MaxConnsPerIP bounds open lobby connections per client IP (IPv6: per
	// /64); past it the upgrade gets HTTP 429. Default 32.
	MaxConnsPerIP int
	// JoinsPerMinute bounds join attempts per client IP, successful or not.
	// Default 30.
	JoinsPerMinute int
	// RoomsPerMinute bounds rooms one session may create (a bucket of that
	// many, refilled over a minute). A session is in at most one room at a
	// time; this stops create/leave churn from flooding every room browser
	// with list changes. Default 10.
	RoomsPerMinute int

	// Grace is how long a dropped session's seat is held for a resume.
	// Default 20s; negative disables holding.
	Grace time.Duration
	// ReplayFrames and ReplayBytes bound what a session keeps to re-send on
	// resume; a client that missed more must join again. Defaults 256 and
	// 64 KiB.
	ReplayFrames int
	ReplayBytes  int

	// Per-session message rate (token bucket) and how many refused messages
	// in a row close the connection.
	MessagesPerSecond float64 // default 50
	MessageBurst      int     // default 100
	MaxRefusedInARow  int     // default 200

	// Failed joins by code (not found, wrong password) per client IP: a
	// bucket of JoinFailureBurst refilled at one per JoinFailureEvery. It is
	// what keeps room codes from being guessed.
	JoinFailureBurst int           // default 10
	JoinFailureEvery time.Duration // default 6s (10 per minute)

	// Signals per session: bounds SDP/candidate relaying.
	SignalsPerSecond float64 // default 20
	SignalBurst      int     // default 60

	// Chat lines per session: a room's chat stays readable.
	ChatPerSecond float64 // default 1
	ChatBurst     int     // default 8

	// Sizes, each at most the protocol's own limit, which stays what every
	// client may rely on: a server may only be stricter (see limits.go).
	// Zero takes the protocol's value. Welcome.MaxFrame tells each client
	// the frame limit in force.
	MaxFrame     int // bytes of one incoming frame, at least MinFrame; past it: close 1009
	MaxSDP       int // bytes of an offer or answer; plus SignalFrameOverhead it must fit MaxFrame
	MaxCandidate int // bytes of one ICE candidate
	MaxChatText  int // characters of one chat line
	MaxRoomName  int // characters of a room name

	// The room list: at most MaxListedRooms public rooms per watcher (newest
	// first), and changes go out at most once per ListInterval, merged.
	MaxListedRooms int           // default 100
	ListInterval   time.Duration // default 250ms

	Logger *slog.Logger
	// Now is the clock; tests replace it.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.QueueSize, 64)
	def(&c.MaxRooms, 10000)
	def(&c.MessageBurst, 100)
	def(&c.MaxRefusedInARow, 200)
	def(&c.JoinFailureBurst, 10)
	def(&c.SignalBurst, 60)
	def(&c.ChatBurst, 8)
	def(&c.MaxListedRooms, 100)
	def(&c.MaxConnsPerIP, 32)
	def(&c.JoinsPerMinute, 30)
	def(&c.RoomsPerMinute, 10)
	def(&c.ReplayFrames, 256)
	def(&c.ReplayBytes, 64<<10)
	def(&c.MaxFrame, protocol.MaxFrame)
	def(&c.MaxSDP, protocol.MaxSDP)
	def(&c.MaxCandidate, protocol.MaxCandidate)
	def(&c.MaxChatText, protocol.MaxChatText)
	def(&c.MaxRoomName, protocol.MaxRoomName)
	defDur(&c.Grace, 20*time.Second)
	defDur(&c.ListInterval, 250*time.Millisecond)
	defDur(&c.HandshakeTimeout, protocol.HandshakeTimeout)
	defDur(&c.PingInterval, 15*time.Second)
	defDur(&c.PongTimeout, 10*time.Second)
	defDur(&c.WriteTimeout, 10*time.Second)
	defDur(&c.JoinFailureEvery, 6*time.Second)
	if c.MessagesPerSecond == 0 {
		c.MessagesPerSecond = 50
	}
	if c.SignalsPerSecond == 0 {
		c.SignalsPerSecond = 20
	}
	if c.ChatPerSecond == 0 {
		c.ChatPerSecond = 1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if c.ICE == nil {
		errs = append(errs, errors.New("ICE is required"))
	}
	for name, v := range map[string]int{"QueueSize": c.QueueSize, "MaxRooms": c.MaxRooms,
		"MessageBurst": c.MessageBurst, "MaxRefusedInARow": c.MaxRefusedInARow,
		"JoinFailureBurst": c.JoinFailureBurst, "SignalBurst": c.SignalBurst, "ChatBurst": c.ChatBurst,
		"MaxListedRooms": c.MaxListedRooms, "MaxConnsPerIP": c.MaxConnsPerIP, "JoinsPerMinute": c.JoinsPerMinute,
		"RoomsPerMinute": c.RoomsPerMinute,
		"ReplayFrames":   c.ReplayFrames, "ReplayBytes": c.ReplayBytes} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
		}
	}
	if c.MessagesPerSecond < 0 || c.SignalsPerSecond < 0 || c.ChatPerSecond < 0 || c.ListInterval < 0 {
		errs = append(errs, errors.New("rates must be positive"))
	}
	if c.HandshakeTimeout < 0 {
		errs = append(errs, fmt.Errorf("HandshakeTimeout must be positive, got %v", c.HandshakeTimeout))
	}
	errs = append(errs, c.validateLimits()...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("signaling: config: %w", err)
	}
	return nil
}
