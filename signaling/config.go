package signaling

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/bans"
	"github.com/hostrelay/hostrelay/protocol"
)

// ICEFunc issues TURN credentials for a session. host is the Host header the
// client used to reach us (with port), so the TURN URLs can point where the
// client already connects when no public host is configured.
type ICEFunc func(sessionID, host string) protocol.ICE

// Config configures a Hub. Start from DefaultConfig, which holds every
// default, and set ICE; NewHub fills in no zero field but the Logger and the
// clock, and refuses a limit of 0.
type Config struct {
	// OriginPatterns are extra allowed browser origins (host patterns as in
	// websocket.AcceptOptions). The page's own origin is always allowed.
	OriginPatterns []string
	// ICE issues TURN credentials; required.
	ICE ICEFunc
	// Cluster, when set, makes this hub one node of several (cluster.go).
	Cluster Cluster
	// Auth verifies Hello.Token (identity.go); nil is -auth off, when a
	// token is ignored and every player is unverified.
	Auth *auth.Verifier
	// Events, when set, hears of every room's life (hooks.go): under
	// Hub.mu, so it must return at once.
	Events RoomEvents
	// JoinCheck, when set, is asked outside Hub.mu before a room is joined
	// or made (hooks.go).
	JoinCheck JoinChecker
	// Bans, when set, is the operator's list of banned user ids and
	// networks, checked at hello (bans.go); nil: none.
	Bans *bans.Store

	QueueSize    int           // outgoing frames buffered per session
	PingInterval time.Duration // between pings to an idle client
	PongTimeout  time.Duration // for its pong, after which the connection is closed
	WriteTimeout time.Duration // for one frame to be written
	MaxRooms     int           // rooms on this hub; past it create is refused with server_full
	// HandshakeTimeout is how long a connection has, from the upgrade, to
	// complete hello; frames before it do not extend it. The protocol
	// promises clients protocol.HandshakeTimeout (the default), so the
	// server has no flag for it; tests shorten it.
	HandshakeTimeout time.Duration
	// MaxConnsPerIP bounds open lobby connections per client IP (IPv6: per
	// /64); past it the upgrade gets HTTP 429.
	MaxConnsPerIP int
	// JoinsPerMinute bounds join attempts per client IP, successful or not.
	JoinsPerMinute int
	// RoomsPerMinute bounds rooms one session may create (a bucket of that
	// many, refilled over a minute). A session is in at most one room at a
	// time; this stops create/leave churn from flooding every room browser
	// with list changes.
	RoomsPerMinute int

	// Grace is how long a dropped session's seat is held for a resume; 0
	// holds none.
	Grace time.Duration
	// ReplayFrames and ReplayBytes bound what a session keeps to re-send on
	// resume; a client that missed more must join again.
	ReplayFrames int
	ReplayBytes  int

	// Per-session message rate (token bucket) and how many refused messages
	// in a row close the connection.
	MessagesPerSecond float64
	MessageBurst      int
	MaxRefusedInARow  int

	// Failed joins by code (not found, wrong password) per client IP: a
	// bucket of JoinFailureBurst refilled at one per JoinFailureEvery. It is
	// what keeps room codes from being guessed.
	JoinFailureBurst int
	JoinFailureEvery time.Duration

	// Signals per session: bounds SDP/candidate relaying.
	SignalsPerSecond float64
	SignalBurst      int

	// Chat lines per session: a room's chat stays readable.
	ChatPerSecond float64
	ChatBurst     int

	// Sizes, each at most the protocol's own limit, which stays what every
	// client may rely on: a server may only be stricter (see limits.go).
	// The defaults are the protocol's values. Welcome.MaxFrame tells each
	// client the frame limit in force.
	MaxFrame     int // bytes of one incoming frame, at least MinFrame; past it: close 1009
	MaxSDP       int // bytes of an offer or answer; plus SignalFrameOverhead it must fit MaxFrame
	MaxCandidate int // bytes of one ICE candidate
	MaxChatText  int // characters of one chat line
	MaxRoomName  int // characters of a room name

	// The room list: at most MaxListedRooms public rooms per watcher (newest
	// first), and changes go out at most once per ListInterval, merged.
	MaxListedRooms int
	ListInterval   time.Duration

	// Spectators (spectate.go): how many may watch one room, how long each
	// spectator frame is held before they see it (so none can tell a player
	// what the other side does now), the largest frame data and the frame
	// rate a host may send (a bucket of SpectatorFrameBurst), the bytes a
	// room holds for the delay and for joiners (each), the bytes every
	// room's spectator frames may hold together (see spectatorBudget), and
	// the spectator frames queued per spectator before its backlog is
	// dropped.
	SpectatorsPerRoom        int
	SpectatorDelay           time.Duration
	SpectatorFrameBytes      int
	SpectatorFramesPerSecond float64
	SpectatorFrameBurst      int
	SpectatorBufferBytes     int
	SpectatorBudgetBytes     int
	SpectatorQueue           int

	// Frozen hosts (hostcheck.go): a member's reports of a silent host
	// come at most one per HostReportEvery (rate_limited past it) and count
	// for HostReportWindow; the host has HostCheckDeadline to answer
	// hostCheck before it is replaced.
	HostReportEvery   time.Duration
	HostReportWindow  time.Duration
	HostCheckDeadline time.Duration

	// Logger receives the hub's logs; nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil: time.Now. Tests replace it.
	Now func() time.Time
	// AfterFunc schedules f after d on the clock of Now (the spectator
	// delay); nil: time.AfterFunc. Tests replace it with Now.
	AfterFunc func(d time.Duration, f func()) interface{ Stop() bool }
}

// DefaultConfig is the hub's configuration with every limit at its
// default. It is the one place these are set: hostrelay's server takes the
// lobby's defaults from it (server.DefaultConfig), and NewHub fills in none.
func DefaultConfig() Config {
	return Config{
		QueueSize:        64,
		PingInterval:     15 * time.Second,
		PongTimeout:      10 * time.Second,
		WriteTimeout:     10 * time.Second,
		MaxRooms:         10000,
		HandshakeTimeout: protocol.HandshakeTimeout,
		MaxConnsPerIP:    32,
		JoinsPerMinute:   30,
		RoomsPerMinute:   10,
		Grace:            20 * time.Second,
		ReplayFrames:     256,
		ReplayBytes:      64 << 10,
		// Twice the rate: a client catches up after a stall (a resume
		// replays its queue) without tripping the limit.
		MessagesPerSecond: 50,
		MessageBurst:      100,
		MaxRefusedInARow:  200,
		// 10 failed joins a minute keeps room codes from being guessed.
		JoinFailureBurst: 10,
		JoinFailureEvery: 6 * time.Second,
		// A host answering many joiners sends a few signals per peer.
		SignalsPerSecond: 20,
		SignalBurst:      60,
		ChatPerSecond:    1,
		ChatBurst:        8,
		MaxFrame:         protocol.MaxFrame,
		MaxSDP:           protocol.MaxSDP,
		MaxCandidate:     protocol.MaxCandidate,
		MaxChatText:      protocol.MaxChatText,
		MaxRoomName:      protocol.MaxRoomName,
		MaxListedRooms:   100,
		ListInterval:     250 * time.Millisecond,
		// A crowd fits; a stadium is a job for a CDN, not the lobby.
		SpectatorsPerRoom: 100,
		// Long enough that a spectator relaying to a player is too late to
		// matter in a fast game.
		SpectatorDelay:      2 * time.Second,
		SpectatorFrameBytes: protocol.MaxSpectatorData,
		// 10 keyframes a second and as many deltas.
		SpectatorFramesPerSecond: 20,
		SpectatorFrameBurst:      20,
		// The delay's worth of frames at a sustained 256 KiB/s.
		SpectatorBufferBytes: 512 << 10,
		// 64 watched rooms at their whole buffer, or hundreds at a
		// usual few KiB a frame; rooms nobody watches keep a keyframe or
		// two each, in at most a quarter of it.
		SpectatorBudgetBytes: 64 << 20,
		SpectatorQueue:       64,
		// Clients report every 3 s of silence (the SDK's HOST_SILENCE_MS):
		// a report a second is room to spare, and three reports' worth of
		// window lets reports sent a few seconds apart add up.
		HostReportEvery:  time.Second,
		HostReportWindow: 10 * time.Second,
		// The answer comes from the page's WebSocket message handler: a
		// hidden tab (timers at 1 Hz) runs it at once, a 500 ms stall
		// delays it by that, plus a round trip; a frozen page never does.
		HostCheckDeadline: 2 * time.Second,
	}
}

// withDeps fills in the dependencies a caller may leave out; limits are the
// caller's (DefaultConfig), so a 0 left by mistake is refused, not replaced.
func (c Config) withDeps() Config {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	// A lowered MaxFrame lowers the spectator frame limit with it, so the
	// frame limit alone says what a host's frame may weigh.
	c.SpectatorFrameBytes = min(c.SpectatorFrameBytes, c.MaxFrame-(protocol.MaxFrame-protocol.MaxSpectatorData))
	if c.AfterFunc == nil {
		c.AfterFunc = func(d time.Duration, f func()) interface{ Stop() bool } { return time.AfterFunc(d, f) }
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
		"RoomsPerMinute": c.RoomsPerMinute, "SpectatorsPerRoom": c.SpectatorsPerRoom,
		"SpectatorFrameBurst": c.SpectatorFrameBurst, "SpectatorBufferBytes": c.SpectatorBufferBytes,
		"SpectatorBudgetBytes": c.SpectatorBudgetBytes,
		"SpectatorQueue":       c.SpectatorQueue,
		"ReplayFrames":         c.ReplayFrames, "ReplayBytes": c.ReplayBytes} {
		if v < 1 {
			errs = append(errs, fmt.Errorf("%s %d: must be at least 1 (start from DefaultConfig)", name, v))
		}
	}
	for name, v := range map[string]float64{"MessagesPerSecond": c.MessagesPerSecond,
		"SignalsPerSecond": c.SignalsPerSecond, "ChatPerSecond": c.ChatPerSecond,
		"SpectatorFramesPerSecond": c.SpectatorFramesPerSecond} {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s %v: must be positive", name, v))
		}
	}
	for name, v := range map[string]time.Duration{"PingInterval": c.PingInterval, "PongTimeout": c.PongTimeout,
		"WriteTimeout": c.WriteTimeout, "HandshakeTimeout": c.HandshakeTimeout,
		"JoinFailureEvery": c.JoinFailureEvery, "ListInterval": c.ListInterval,
		"HostReportEvery": c.HostReportEvery, "HostReportWindow": c.HostReportWindow, "HostCheckDeadline": c.HostCheckDeadline} {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s %v: must be positive", name, v))
		}
	}
	if c.SpectatorDelay < 0 {
		errs = append(errs, fmt.Errorf("SpectatorDelay %v: must be 0 (no delay) or more", c.SpectatorDelay))
	}
	if c.SpectatorFrameBytes < 1 || c.SpectatorFrameBytes > protocol.MaxSpectatorData {
		errs = append(errs, fmt.Errorf("SpectatorFrameBytes %d: must be between 1 and the protocol's %d",
			c.SpectatorFrameBytes, protocol.MaxSpectatorData))
	}
	if c.Grace < 0 {
		errs = append(errs, fmt.Errorf("%s %v: must be 0 (seats not held) or more", "Grace", c.Grace))
	}
	errs = append(errs, c.validateLimits()...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("signaling: config: %w", err)
	}
	return nil
}
