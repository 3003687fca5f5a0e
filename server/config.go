// Package server wires hostrelay together: configuration, the HTTP app (lobby
// page, share links, health, the lobby WebSocket), the signaling hub and the
// embedded TURN server. Run is the whole graph in one function.
package server

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/turn"
)

// Config is everything an operator can set. Defaults work on localhost.
type Config struct {
	HTTPAddr       string        // lobby page, REST and /ws
	TURNUDPAddr    string        // TURN over UDP
	TURNTCPAddr    string        // TURN over TCP, for networks that block UDP
	PublicIP       netip.Addr    // relay address handed to clients
	PublicHost     string        // host name in TURN URLs; empty: the host the client used
	TURNSecret     string        // HMAC secret for TURN credentials; empty: random per start
	TURNTTL        time.Duration // lifetime of issued TURN credentials
	TURNMaxAllocs  int           // live TURN allocations per lobby session
	AllowedOrigins []string      // extra browser origins allowed on /ws (host patterns)
	APIKeys        []string      // operator keys for /api/v1 (trusted backends); never logged
	TrustedProxies []netip.Prefix
	LogLevel       slog.Level
	LogFormat      string // text or json
	DebugAddr      string // loopback address for net/http/pprof; empty: off
	ShutdownGrace  time.Duration
	SeatGrace      time.Duration // how long a dropped player's seat is held
	MaxConnsPerIP  int
	JoinsPerMinute int
	// Lobby limits per session and per server; see docs/protocol.md#limits.
	RoomsPerMinute    int     // rooms one session may create per minute
	MessagesPerSecond float64 // lobby messages per session (bursts of twice that)
	MaxRooms          int     // rooms on this server
	SignalsPerSecond  float64 // SDP/candidate relays per session
	SignalBurst       int

	// Sizes, each at most the protocol's limit (the default): a server may
	// be stricter than the protocol, never looser. See signaling.Config.
	MaxFrame      byteSize // one incoming lobby frame
	MaxSDP        byteSize // one offer or answer
	MaxCandidate  byteSize // one ICE candidate
	MaxChatLength int      // characters of a chat line
	MaxRoomName   int      // characters of a room name

	// TURNMaxBandwidth is the relayed bytes per second one TURN allocation
	// may send (0: unlimited); TURNBandwidthBurst the bytes it may send at
	// once above that (0: a quarter second at TURNMaxBandwidth).
	TURNMaxBandwidth   byteSize
	TURNBandwidthBurst byteSize

	// TURN caps against one client exhausting the server: allocations per
	// client IP (/64 for IPv6) and in total, the lifetime an allocation is
	// granted, and channels bound per allocation. See turn.Config.
	TURNAllocsPerIP    int
	TURNMaxAllocsTotal int
	TURNMaxLifetime    time.Duration
	TURNMaxChannels    int
	// Connection caps and timeouts, so idle or slow clients cannot hold the
	// process's file descriptors; see docs/operations.md. A cap of 0 is
	// derived from the open-file limit at start (fileBudget).
	MaxHTTPConns           int           // open HTTP connections, lobby WebSockets included
	HTTPReadTimeout        time.Duration // to read a whole request; its header within at most 10s
	HTTPWriteTimeout       time.Duration // to write a response
	HTTPIdleTimeout        time.Duration // a keep-alive connection waiting for its next request
	TURNTCPMaxConns        int           // open TURN-over-TCP connections
	TURNTCPConnsPerIP      int           // open TURN-over-TCP connections per client IP (IPv6: per /64)
	TURNTCPAllocateTimeout time.Duration // a TURN-over-TCP connection without an allocation is closed after it

	// TLS is HTTPS and WSS on HTTPAddr, the HTTP→HTTPS redirect and TURN
	// over TLS (tls.go); off unless a certificate is configured.
	TLS TLSConfig
	// TURNOffer lists the TURN transports handed to clients (udp, tcp,
	// tls), those listening, always in that order.
	TURNOffer []string

	// secretGenerated records that TURNSecret was made up at start, so Run
	// can say so (without printing it).
	secretGenerated bool
}

// envPrefix + upper-cased flag name with '-' as '_' is each flag's variable.
const envPrefix = "HOSTRELAY_"

// LoadConfig layers defaults, then HOSTRELAY_* environment variables, then
// command-line flags, and validates the result before anything listens.
func LoadConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	cfg := Config{
		HTTPAddr:       ":8080",
		TURNUDPAddr:    ":3478",
		TURNTCPAddr:    ":3478",
		PublicIP:       netip.MustParseAddr("127.0.0.1"),
		TURNTTL:        6 * time.Hour,
		TURNMaxAllocs:  turn.DefaultMaxAllocationsPerSession,
		LogLevel:       slog.LevelInfo,
		LogFormat:      "text",
		ShutdownGrace:  10 * time.Second,
		SeatGrace:      20 * time.Second,
		MaxConnsPerIP:  32,
		JoinsPerMinute: 30,

		RoomsPerMinute:    10,
		MessagesPerSecond: 50,
		MaxRooms:          10000,
		SignalsPerSecond:  20,
		SignalBurst:       60,

		MaxFrame:      protocol.MaxFrame,
		MaxSDP:        protocol.MaxSDP,
		MaxCandidate:  protocol.MaxCandidate,
		MaxChatLength: protocol.MaxChatText,
		MaxRoomName:   protocol.MaxRoomName,

		TURNMaxBandwidth: turn.DefaultMaxBandwidth, // 1 MiB/s: see turn.DefaultMaxBandwidth for why

		TURNAllocsPerIP:        turn.DefaultMaxAllocationsPerIP,
		TURNMaxLifetime:        turn.DefaultMaxAllocationLifetime,
		TURNMaxChannels:        turn.DefaultMaxChannelsPerAllocation,
		HTTPReadTimeout:        30 * time.Second,
		HTTPWriteTimeout:       60 * time.Second,
		HTTPIdleTimeout:        60 * time.Second,
		TURNTCPConnsPerIP:      turn.DefaultMaxTCPConnsPerIP,
		TURNTCPAllocateTimeout: turn.DefaultTCPAllocateTimeout,

		TLS:       TLSConfig{RedirectAddr: defaultRedirectAddr, TURNAddr: defaultTURNTLSAddr, ACMECache: "acme-cache"},
		TURNOffer: slices.Clone(turnTransports),
	}
	fs := flag.NewFlagSet("hostrelay", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&cfg.HTTPAddr, "http", cfg.HTTPAddr, "HTTP and WebSocket listen address")
	fs.StringVar(&cfg.TURNUDPAddr, "turn-udp", cfg.TURNUDPAddr, "TURN UDP listen address")
	fs.StringVar(&cfg.TURNTCPAddr, "turn-tcp", cfg.TURNTCPAddr, "TURN TCP listen address (port 0: the UDP port)")
	fs.Func("public-ip", "public IP of this host, used as the TURN relay address (default 127.0.0.1: this machine only)", func(s string) error {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return err
		}
		cfg.PublicIP = ip.Unmap()
		return nil
	})
	fs.StringVar(&cfg.PublicHost, "public-host", "", "host name for TURN URLs (default: the host the browser used)")
	fs.StringVar(&cfg.TURNSecret, "turn-secret", "", "secret for TURN credentials, at least 16 bytes (default: random at each start)")
	fs.DurationVar(&cfg.TURNTTL, "turn-ttl", cfg.TURNTTL, "lifetime of issued TURN credentials")
	fs.IntVar(&cfg.TURNMaxAllocs, "turn-max-allocations", cfg.TURNMaxAllocs,
		"live TURN allocations per lobby session (a browser uses one per peer connection and TURN URL: 2, or 3 with TURN over TLS)")
	fs.IntVar(&cfg.TURNAllocsPerIP, "turn-allocations-per-ip", cfg.TURNAllocsPerIP,
		"live TURN allocations per client IP (IPv6: per /64), any sessions; past it Allocate gets 486")
	fs.IntVar(&cfg.TURNMaxAllocsTotal, "turn-max-allocations-total", cfg.TURNMaxAllocsTotal,
		"live TURN allocations on this server (one socket each); past it Allocate gets 508 (0: half of the open-file limit after a reserve)")
	fs.DurationVar(&cfg.TURNMaxLifetime, "turn-max-lifetime", cfg.TURNMaxLifetime,
		"longest lifetime a TURN allocation is granted; one not refreshed within it is closed (1m to 1h)")
	fs.IntVar(&cfg.TURNMaxChannels, "turn-max-channels", cfg.TURNMaxChannels,
		"channels one TURN allocation may bind (a browser binds one per remote relay candidate)")
	fs.Var(&cfg.TURNMaxBandwidth, "turn-max-bandwidth",
		"relayed bytes per second per TURN allocation, e.g. 1048576 or 1MiB; packets over it are dropped (0: unlimited)")
	fs.Var(&cfg.TURNBandwidthBurst, "turn-bandwidth-burst",
		"bytes a TURN allocation may send at once above -turn-max-bandwidth (default: a quarter second at that rate)")
	fs.IntVar(&cfg.TURNTCPMaxConns, "turn-tcp-max-conns", cfg.TURNTCPMaxConns,
		"open TURN-over-TCP connections; past it new ones are closed at once (0: a quarter of the open-file limit after a reserve)")
	fs.IntVar(&cfg.TURNTCPConnsPerIP, "turn-tcp-conns-per-ip", cfg.TURNTCPConnsPerIP,
		"open TURN-over-TCP connections per client IP (IPv6: per /64); a browser uses one per peer connection")
	fs.DurationVar(&cfg.TURNTCPAllocateTimeout, "turn-tcp-allocate-timeout", cfg.TURNTCPAllocateTimeout,
		"how long a TURN-over-TCP connection may stay open without an allocation")
	fs.IntVar(&cfg.MaxHTTPConns, "max-http-conns", cfg.MaxHTTPConns,
		"open HTTP connections, lobby WebSockets included; at the cap the longest-idle one makes room (0: a quarter of the open-file limit after a reserve)")
	fs.DurationVar(&cfg.HTTPReadTimeout, "http-read-timeout", cfg.HTTPReadTimeout,
		"time to read a whole HTTP request (its header: at most 10s); does not apply to WebSockets")
	fs.DurationVar(&cfg.HTTPWriteTimeout, "http-write-timeout", cfg.HTTPWriteTimeout,
		"time to write an HTTP response; does not apply to WebSockets")
	fs.DurationVar(&cfg.HTTPIdleTimeout, "http-idle-timeout", cfg.HTTPIdleTimeout,
		"how long a keep-alive HTTP connection may wait for its next request")
	fs.Func("allowed-origins", "comma-separated extra origins (host patterns) allowed to open /ws", func(s string) error {
		cfg.AllowedOrigins = splitList(s)
		return nil
	})
	fs.Func("api-keys", "comma-separated operator API keys for /api/v1 (prefer the environment variable)", func(s string) error {
		cfg.APIKeys = splitList(s)
		return nil
	})
	fs.Func("trusted-proxies", "comma-separated CIDRs whose X-Forwarded-For is believed", func(s string) error {
		cfg.TrustedProxies = nil
		for _, p := range splitList(s) {
			pfx, err := netip.ParsePrefix(p)
			if err != nil {
				return err
			}
			cfg.TrustedProxies = append(cfg.TrustedProxies, pfx)
		}
		return nil
	})
	fs.Func("log-level", "debug, info, warn or error (default info)", func(s string) error {
		return cfg.LogLevel.UnmarshalText([]byte(s))
	})
	fs.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "text or json")
	fs.StringVar(&cfg.DebugAddr, "debug-addr", "", "loopback address (e.g. 127.0.0.1:6060) serving net/http/pprof under /debug/pprof/; empty: off")
	fs.DurationVar(&cfg.SeatGrace, "seat-grace", cfg.SeatGrace, "how long a player whose connection dropped keeps its seat for a resume (0: not held)")
	fs.IntVar(&cfg.MaxConnsPerIP, "max-conns-per-ip", cfg.MaxConnsPerIP, "open lobby connections per client IP (IPv6: per /64)")
	fs.IntVar(&cfg.JoinsPerMinute, "joins-per-minute", cfg.JoinsPerMinute, "room joins per client IP per minute")
	fs.IntVar(&cfg.RoomsPerMinute, "rooms-per-minute", cfg.RoomsPerMinute, "rooms one lobby session may create per minute")
	fs.Float64Var(&cfg.MessagesPerSecond, "messages-per-second", cfg.MessagesPerSecond, "lobby messages per session per second (bursts of twice that); excess is refused, persistent excess closes")
	fs.IntVar(&cfg.MaxRooms, "max-rooms", cfg.MaxRooms, "rooms on this server; past it creating one is refused with server_full")
	fs.Float64Var(&cfg.SignalsPerSecond, "signals-per-second", cfg.SignalsPerSecond, "SDP and ICE candidate messages per session per second; excess is refused with rate_limited")
	fs.IntVar(&cfg.SignalBurst, "signal-burst", cfg.SignalBurst, "signals a session may send at once above -signals-per-second (a host answering many joiners needs a few per peer)")
	fs.Var(&cfg.MaxFrame, "max-frame", "largest lobby frame a client may send, e.g. 8192 or 8KiB, at least 2KiB; larger closes the connection (1009). The default is the protocol's maximum")
	fs.Var(&cfg.MaxSDP, "max-sdp", "largest SDP offer or answer in bytes, at least 256 under -max-frame. The default is the protocol's maximum")
	fs.Var(&cfg.MaxCandidate, "max-candidate", "largest ICE candidate in bytes. The default is the protocol's maximum")
	fs.IntVar(&cfg.MaxChatLength, "max-chat-length", cfg.MaxChatLength, "characters in one chat line. The default is the protocol's maximum")
	fs.IntVar(&cfg.MaxRoomName, "max-room-name", cfg.MaxRoomName, "characters in a room name. The default is the protocol's maximum")
	fs.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", cfg.ShutdownGrace, "how long shutdown waits for connections to close")
	bindTLSFlags(fs, &cfg.TLS, &cfg.TURNOffer)

	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := envPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("%s: %w", name, err))
			}
		}
	})
	if envErr != nil {
		return cfg, fmt.Errorf("server: config: %w", envErr)
	}
	if err := fs.Parse(args); err != nil {
		return cfg, fmt.Errorf("server: config: %w", err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("server: config: unexpected argument %q", fs.Arg(0))
	}
	if cfg.TURNSecret == "" {
		var b [32]byte
		_, _ = rand.Read(b[:])
		cfg.TURNSecret = base64.RawStdEncoding.EncodeToString(b[:])
		cfg.secretGenerated = true
	}
	return cfg, cfg.validate()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (c Config) validate() error {
	var errs []error
	for name, addr := range map[string]string{"http": c.HTTPAddr, "turn-udp": c.TURNUDPAddr, "turn-tcp": c.TURNTCPAddr} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("-%s %q: %w", name, addr, err))
		}
	}
	if !c.PublicIP.IsValid() || c.PublicIP.IsUnspecified() {
		errs = append(errs, fmt.Errorf("-public-ip %v: must be a concrete address clients can reach", c.PublicIP))
	}
	if len(c.TURNSecret) < 16 {
		errs = append(errs, errors.New("-turn-secret: must be at least 16 bytes"))
	}
	// 10s is short enough to test credential refresh; production wants hours.
	if c.TURNTTL < 10*time.Second || c.TURNTTL > 24*time.Hour {
		errs = append(errs, fmt.Errorf("-turn-ttl %v: must be between 10s and 24h", c.TURNTTL))
	}
	for _, k := range c.APIKeys {
		if len(k) < 16 {
			errs = append(errs, errors.New("-api-keys: every key must be at least 16 bytes"))
			break
		}
	}
	if c.TURNMaxAllocs < 2 {
		errs = append(errs, fmt.Errorf("-turn-max-allocations %d: must be at least 2", c.TURNMaxAllocs))
	}
	// A player needs two allocations (UDP and TCP URLs; three with TLS), a
	// host as many per peer.
	if c.TURNAllocsPerIP < 2 || c.TURNMaxAllocsTotal < 0 || c.TURNMaxAllocsTotal == 1 {
		errs = append(errs, fmt.Errorf("-turn-allocations-per-ip %d and -turn-max-allocations-total %d: must be at least 2 (the total may be 0: derived from the open-file limit)",
			c.TURNAllocsPerIP, c.TURNMaxAllocsTotal))
	}
	// Browsers refresh a minute before the lifetime they were told ends; pion
	// grants at most an hour anyway.
	if c.TURNMaxLifetime < time.Minute || c.TURNMaxLifetime > time.Hour {
		errs = append(errs, fmt.Errorf("-turn-max-lifetime %v: must be between 1m and 1h", c.TURNMaxLifetime))
	}
	// A browser binds one channel per remote relay candidate: two per ICE
	// generation here (UDP and TCP), a few more across ICE restarts.
	if c.TURNMaxChannels < 4 || c.TURNMaxChannels > 16384 {
		errs = append(errs, fmt.Errorf("-turn-max-channels %d: must be between 4 and 16384", c.TURNMaxChannels))
	}
	// Below 16 KiB/s even a WebRTC handshake struggles: it is almost surely a
	// unit mistake (kbit/s for bytes/s).
	if c.TURNMaxBandwidth != 0 && (c.TURNMaxBandwidth < 16<<10 || c.TURNMaxBandwidth > 1<<40) {
		errs = append(errs, fmt.Errorf("-turn-max-bandwidth %v: must be 0 (unlimited) or between 16KiB and 1TiB per second", c.TURNMaxBandwidth))
	}
	// The burst must hold the largest relayed packet (1600 bytes) or such
	// packets would never pass.
	if c.TURNBandwidthBurst != 0 && (c.TURNBandwidthBurst < 1600 || c.TURNBandwidthBurst > 1<<30) {
		errs = append(errs, fmt.Errorf("-turn-bandwidth-burst %v: must be between 1600 bytes and 1GiB", c.TURNBandwidthBurst))
	}
	errs = append(errs, c.validateConnLimits()...)
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("-log-format %q: must be text or json", c.LogFormat))
	}
	if err := checkDebugAddr(c.DebugAddr); err != nil {
		errs = append(errs, err)
	}
	if c.SeatGrace < 0 || c.SeatGrace > 10*time.Minute {
		errs = append(errs, fmt.Errorf("-seat-grace %v: must be between 0 and 10m", c.SeatGrace))
	}
	if c.MaxConnsPerIP < 1 || c.JoinsPerMinute < 1 || c.RoomsPerMinute < 1 || c.MaxRooms < 1 {
		errs = append(errs, errors.New("-max-conns-per-ip, -joins-per-minute, -rooms-per-minute and -max-rooms must be at least 1"))
	}
	// Below 1/s a player could not even join and signal a peer; the SDK's
	// own traffic (pings, ready, chat) fits well under the default 50.
	if c.MessagesPerSecond < 1 {
		errs = append(errs, fmt.Errorf("-messages-per-second %v: must be at least 1", c.MessagesPerSecond))
	}
	if c.SignalsPerSecond <= 0 {
		errs = append(errs, fmt.Errorf("-signals-per-second %v: must be positive", c.SignalsPerSecond))
	}
	if c.SignalBurst < 1 {
		errs = append(errs, fmt.Errorf("-signal-burst %d: must be at least 1", c.SignalBurst))
	}
	errs = append(errs, c.validateSizes()...)
	errs = append(errs, c.TLS.validate()...)
	if err := validateOffer(c.TURNOffer); err != nil {
		errs = append(errs, err)
	} else if len(c.TURNOffer) == 1 && c.TURNOffer[0] == "tls" && c.TLS.turnAddr() == "" {
		errs = append(errs, errors.New("-turn-offer tls: TURN over TLS is off (it needs -tls-cert or -acme-domain, and -turn-tls not off), so no TURN server would be offered"))
	}
	if c.ShutdownGrace <= 0 {
		errs = append(errs, errors.New("-shutdown-grace: must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("server: config: %w", err)
	}
	return nil
}

// validateConnLimits bounds the connection caps and timeouts.
func (c Config) validateConnLimits() []error {
	var errs []error
	// One HTTP connection is kept from WebSockets for /healthz and pages,
	// so a cap of 1 would leave no room for the lobby.
	if c.MaxHTTPConns < 0 || c.MaxHTTPConns == 1 {
		errs = append(errs, fmt.Errorf("-max-http-conns %d: must be 0 (from the file limit) or at least 2", c.MaxHTTPConns))
	}
	if c.TURNTCPMaxConns < 0 {
		errs = append(errs, fmt.Errorf("-turn-tcp-max-conns %d: must be 0 (from the file limit) or more", c.TURNTCPMaxConns))
	}
	if c.TURNTCPConnsPerIP < 1 {
		errs = append(errs, fmt.Errorf("-turn-tcp-conns-per-ip %d: must be at least 1", c.TURNTCPConnsPerIP))
	}
	// Under a second a browser on a slow link could not allocate in time;
	// past 15 minutes it would outlast the idle timeout of allocated ones.
	if c.TURNTCPAllocateTimeout < time.Second || c.TURNTCPAllocateTimeout > 15*time.Minute {
		errs = append(errs, fmt.Errorf("-turn-tcp-allocate-timeout %v: must be between 1s and 15m", c.TURNTCPAllocateTimeout))
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"http-read-timeout", c.HTTPReadTimeout}, {"http-write-timeout", c.HTTPWriteTimeout}, {"http-idle-timeout", c.HTTPIdleTimeout}} {
		if d.v < time.Second || d.v > time.Hour {
			errs = append(errs, fmt.Errorf("-%s %v: must be between 1s and 1h", d.flag, d.v))
		}
	}
	return errs
}

// validateSizes keeps each size limit between its floor and the protocol's
// maximum, which is what clients are built against.
func (c Config) validateSizes() []error {
	var errs []error
	for _, l := range []struct {
		flag     string
		v        int64
		min, max int64
		unit     string
	}{
		// Under signaling.MinFrame some requests at their protocol maximum
		// would no longer fit a frame.
		{"max-frame", int64(c.MaxFrame), signaling.MinFrame, protocol.MaxFrame, "bytes"},
		{"max-sdp", int64(c.MaxSDP), 1, protocol.MaxSDP, "bytes"},
		{"max-candidate", int64(c.MaxCandidate), 1, protocol.MaxCandidate, "bytes"},
		{"max-chat-length", int64(c.MaxChatLength), 1, protocol.MaxChatText, "characters"},
		{"max-room-name", int64(c.MaxRoomName), 1, protocol.MaxRoomName, "characters"},
	} {
		if l.v < l.min || l.v > l.max {
			errs = append(errs, fmt.Errorf("-%s %d: must be between %d and %d %s (the protocol's maximum)", l.flag, l.v, l.min, l.max, l.unit))
		}
	}
	// An offer under -max-sdp must not be cut off by the frame limit.
	if room := int64(c.MaxFrame) - signaling.SignalFrameOverhead; int64(c.MaxSDP) > room {
		errs = append(errs, fmt.Errorf("-max-sdp %d: must leave %d bytes of -max-frame %d for the rest of the signal (at most %d)",
			int64(c.MaxSDP), signaling.SignalFrameOverhead, int64(c.MaxFrame), room))
	}
	return errs
}

// turnBandwidth maps the flags onto turn.Config, where 0 means the default
// and turn.NoBandwidthLimit means none.
func (c Config) turnBandwidth() (rate, burst int64) {
	if c.TURNMaxBandwidth == 0 {
		return turn.NoBandwidthLimit, 0
	}
	return int64(c.TURNMaxBandwidth), int64(c.TURNBandwidthBurst)
}

// byteSize is a flag.Value for a byte count: a whole number with an
// optional unit, KiB/MiB/GiB (1024) or KB/MB/GB (1000), any case.
type byteSize int64

var byteUnits = []struct { //nolint:gochecknoglobals // a read-only table
	suffix string
	scale  int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

func (b *byteSize) Set(s string) error {
	num, scale := strings.TrimSpace(s), int64(1)
	for _, u := range byteUnits {
		if len(num) > len(u.suffix) && strings.EqualFold(num[len(num)-len(u.suffix):], u.suffix) {
			num, scale = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.scale
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q: want a byte count like 1048576, 512KiB or 1MiB", s)
	}
	if n > math.MaxInt64/scale {
		return fmt.Errorf("%q: too large", s)
	}
	*b = byteSize(n * scale)
	return nil
}

// String prints whole KiB, MiB or GiB in that unit, for -h and errors.
func (b byteSize) String() string {
	n := int64(b)
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.scale == 0 {
			return strconv.FormatInt(n/u.scale, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// NewLogger builds the process logger from the config.
func NewLogger(c Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
