// Package server wires hostrelay together: configuration, the HTTP app (lobby
// page, share links, health, the lobby WebSocket), the signaling hub and the
// embedded TURN server. Run is the whole graph in one function.
package server

import (
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

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/bans"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/turn"
)

// Config is everything an operator can set, one section per part of the
// server. Start from DefaultConfig (which works on localhost), change what
// you need and pass it to New or Run; LoadConfig does the same from flags,
// HOSTRELAY_* variables and a YAML file. A new lobby or TURN limit is a
// field of signaling.Config or turn.Config, its default in that package's
// DefaultConfig and its option line (bindLobby, bindTURN in options.go); a
// new server section is a struct here, a field below, its line in
// DefaultConfig and its bind method.
type Config struct {
	HTTP HTTPConfig
	TLS  TLSConfig
	// Lobby is the hub's own config, its limits bound to the lobby
	// options; New plugs in what the server provides and sets MessageBurst
	// to twice MessagesPerSecond (lobbyConfig).
	Lobby signaling.Config
	// TURN is the embedded TURN server's own config, its limits bound to
	// the turn options. In it Auto (MaxAllocations, MaxTCPConns,
	// BandwidthBurst) is derived at start, TLSAddr is used only with TLS on
	// ("off": none), and an empty Secret is made up; New derives these and
	// plugs in what the server provides (turnConfig).
	TURN turn.Config
	// ICE is the TURN URLs clients are handed; its options are in the turn
	// section.
	ICE     ICEConfig
	Log     LogConfig
	Debug   DebugConfig
	Metrics MetricsConfig
	Cluster ClusterConfig
	// Auth verifies the identity tokens players bring in hello (-auth);
	// New builds its verifier and plugs it into the lobby.
	Auth    auth.Config
	Webhook WebhookConfig
	// Bans is the server-wide ban list (bans.go).
	Bans BansConfig
	// ShutdownGrace is how long shutdown waits for lobby connections to close.
	ShutdownGrace time.Duration
}

// Auto, in a cap that is derived at start when not set (from the open-file
// limit, or from another setting), derives it. It is negative so that no
// count or size collides with it, and 0 is not it. Flags, variables and the
// YAML file spell it "auto" (and take the 0 that meant it before it
// existed, see parseSpecial). The one limit that may be turned off,
// TURN.MaxBandwidth, is off at turn.NoBandwidthLimit, spelled "off".
const Auto = -1

// HTTPConfig is the HTTP listener: the lobby page, share links, /healthz,
// /api/v1 and the lobby WebSocket.
type HTTPConfig struct {
	Addr           string
	APIKeys        []string // operator keys for /api/v1 (trusted backends); never logged
	TrustedProxies []netip.Prefix
	// AdminToken opens the admin page (/admin) and its API
	// (/api/v1/admin/); empty: both are off (404). Never logged.
	AdminToken string
	// MaxConns caps open HTTP connections, lobby WebSockets included; Auto:
	// a quarter of the open-file limit after a reserve (fileBudget).
	MaxConns     int
	ReadTimeout  time.Duration // to read a whole request; its header within at most 10s
	WriteTimeout time.Duration // to write a response
	IdleTimeout  time.Duration // a keep-alive connection waiting for its next request
}

// TLSConfig is HTTPS (and so WSS) on the HTTP listener, a plain-HTTP
// listener that redirects to it, and the certificate TURN over TLS serves
// (Config.TURN.TLSAddr). TLS is on when a certificate is configured: files
// (CertFile and KeyFile) or ACME (ACMEDomains); off, none of the rest
// applies. See tls.go.
type TLSConfig struct {
	// CertFile and KeyFile are PEM files: the certificate chain, leaf
	// first, and its private key. They are read again when either changes
	// (certbot and Kubernetes replace them in place), at the next handshake.
	CertFile, KeyFile string
	// ACMEDomains get certificates from an ACME CA (Let's Encrypt unless
	// ACMEDirectory says otherwise) by golang.org/x/crypto/acme/autocert,
	// proving control with HTTP-01 on the redirect listener (which must be
	// port 80 from the Internet) or TLS-ALPN-01 on the HTTP listener (443).
	ACMEDomains []string
	// ACMECache keeps the account key and certificates across restarts
	// (Let's Encrypt rate-limits issuance: keep it on a volume).
	ACMECache string
	// ACMEEmail is the account's contact for expiry notices; optional.
	ACMEEmail string
	// ACMEDirectory is the CA's directory URL; empty: Let's Encrypt's
	// production directory.
	ACMEDirectory string
	// RedirectAddr is the plain-HTTP listener that redirects to HTTPS and
	// answers ACME HTTP-01 challenges: "auto" is ":80" with ACME or when the
	// HTTP listener is on port 443, otherwise off; "off" (or empty) is off.
	RedirectAddr string
}

// ICEConfig is what clients are told about TURN: the URLs iceFor hands out.
type ICEConfig struct {
	PublicHost string // host name in TURN URLs; empty: the host the client used
	// Offer lists the transports whose TURN URLs clients get (udp, tcp,
	// tls), of those listening, always in that order.
	Offer []string
}

// LogConfig is the process log.
type LogConfig struct {
	Level  slog.Level
	Format string // text or json
}

// DebugConfig is the loopback-only net/http/pprof listener.
type DebugConfig struct {
	Addr string // empty: off
}

// DefaultConfig is the configuration `make run` uses: every limit at its
// default, listening on all interfaces, relaying for this machine only
// (PublicIP 127.0.0.1). The lobby's and TURN's limits come from
// signaling.DefaultConfig and turn.DefaultConfig, so each default is written
// once; what is derived at start is Auto.
func DefaultConfig() Config {
	lobby, relay := signaling.DefaultConfig(), turn.DefaultConfig()
	relay.UDPAddr, relay.TCPAddr, relay.TLSAddr = ":3478", ":3478", ":5349"
	relay.PublicIP = net.IPv4(127, 0, 0, 1).To4()
	// Derived at start from the open-file limit and the rate (turnConfig).
	relay.MaxAllocations, relay.MaxTCPConns, relay.BandwidthBurst = Auto, Auto, Auto
	return Config{
		HTTP: HTTPConfig{
			Addr:         ":8080",
			MaxConns:     Auto,
			ReadTimeout:  30 * time.Second,
			WriteTimeout: time.Minute,
			IdleTimeout:  time.Minute,
		},
		// TLS is off until a certificate is configured.
		TLS:           TLSConfig{ACMECache: "acme-cache", RedirectAddr: "auto"},
		Lobby:         lobby,
		TURN:          relay,
		ICE:           ICEConfig{Offer: slices.Clone(turnTransports)},
		Log:           LogConfig{Level: slog.LevelInfo, Format: "text"},
		Cluster:       ClusterConfig{Name: "hostrelay", Replicas: 1},
		Auth:          auth.DefaultConfig(),
		Webhook:       defaultWebhookConfig(),
		Bans:          BansConfig{Max: bans.DefaultMaxBans},
		ShutdownGrace: 10 * time.Second,
	}
}

// bandwidthBurst is TURN's burst with Auto derived: a quarter second at
// the rate (turn.DefaultBandwidthBurst); none without a limit.
func bandwidthBurst(c turn.Config) int64 {
	switch {
	case c.MaxBandwidth == turn.NoBandwidthLimit:
		return 0
	case c.BandwidthBurst == Auto:
		return turn.DefaultBandwidthBurst(c.MaxBandwidth)
	}
	return c.BandwidthBurst
}

// ByteSize is a byte count. As text (flags, variables, YAML) it is a whole
// number with an optional unit, KiB/MiB/GiB/TiB (1024) or KB/MB/GB/TB
// (1000), any case.
type ByteSize int64

var byteUnits = []struct { //nolint:gochecknoglobals // a read-only table
	suffix string
	scale  int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// parseByteSize reads a byte count like 1048576, 512KiB or 1MiB.
func parseByteSize(s string) (ByteSize, error) {
	num, scale := strings.TrimSpace(s), int64(1)
	for _, u := range byteUnits {
		if len(num) > len(u.suffix) && strings.EqualFold(num[len(num)-len(u.suffix):], u.suffix) {
			num, scale = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.scale
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a byte count like 1048576, 512KiB or 1MiB", s)
	}
	if n > math.MaxInt64/scale {
		return 0, fmt.Errorf("%q: too large", s)
	}
	return ByteSize(n * scale), nil
}

// String prints whole KiB, MiB, GiB or TiB in that unit, for -h, errors and
// the README.
func (b ByteSize) String() string {
	n := int64(b)
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n > 0 && n%u.scale == 0 {
			return strconv.FormatInt(n/u.scale, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// NewLogger builds the process logger from the config.
func NewLogger(c Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.Log.Level}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
