package turn

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"time"
)

// Sessions is what turn asks the lobby; turn knows no lobby types.
//
// RoomOf is called twice for every relayed packet unless the Sessions also
// implements RoomChangeNotifier, so implementations must be cheap, must not block,
// and should not allocate.
type Sessions interface {
	// SessionLive reports whether the lobby session exists and is still open.
	SessionLive(sessionID string) bool
	// RoomOf reports the room the session is currently in.
	RoomOf(sessionID string) (room string, ok bool)
}

// Defaults, gathered by DefaultConfig.
const (
	DefaultRealm         = "hostrelay"
	DefaultCredentialTTL = 6 * time.Hour
	DefaultMaxTTL        = 24 * time.Hour
	// DefaultMaxAllocationsPerSession lets a host of a full 16-player room
	// hold one allocation per TURN URL (UDP, TCP and TLS) for each of its 15
	// peer connections, with 10 to spare for pages closed without
	// pc.close(), whose allocations live on for up to 10 minutes. A browser
	// that gets 486 on any URL fails the connection (the SDK does so on
	// purpose), so this must cover every URL offered.
	DefaultMaxAllocationsPerSession = 3*15 + 10
	// DefaultMaxAllocationsPerIP lets a few full rooms play from behind one
	// NAT (a LAN party, a school, a carrier-grade NAT: a 16-player room takes
	// about 60 allocations, 90 with TURN over TLS offered) while one host
	// cannot take the server's share.
	DefaultMaxAllocationsPerIP = 256
	// DefaultMaxAllocations bounds the relay sockets (one file descriptor
	// and one goroutine each) of the whole server, far below common
	// descriptor limits so the lobby and HTTP keep theirs.
	DefaultMaxAllocations = 8192
	// DefaultMaxAllocationLifetime is RFC 5766's default lifetime, the one
	// browsers use: pion would grant a client asking for more up to an hour.
	DefaultMaxAllocationLifetime = 10 * time.Minute
	// DefaultMaxChannelsPerAllocation is generous for a browser, which binds
	// one channel per remote relay candidate of its peer connection (up to
	// three per ICE generation here: UDP, TCP and TLS); pion would allow
	// 16,384.
	DefaultMaxChannelsPerAllocation = 32
	// DefaultTCPAllocateTimeout is how long a TURN-over-TCP connection may
	// stay open without an allocation. A browser allocates within two round
	// trips of connecting; anything slower is a client that never will.
	DefaultTCPAllocateTimeout = 5 * time.Second
	// DefaultMaxTCPConns caps open TURN-over-TCP connections (hostrelay's
	// server derives its own cap from the process's file limit). Each
	// connection holds a descriptor.
	DefaultMaxTCPConns = 1024
	// DefaultMaxTCPConnsPerIP lets the host of a full 16-player room (one
	// connection per peer connection, two with TURN over TLS offered too)
	// and a few more players behind the same NAT use TURN over TCP, while
	// one address cannot take the whole cap.
	DefaultMaxTCPConnsPerIP = 64
)

// Bounds of the lifetime cap: pion v4.1.4 grants at most an hour.
const (
	minAllocationLifetime = time.Second
	maxAllocationLifetime = time.Hour
)

// maxChannelsLimit is pion's own bound, the number of channel numbers.
const maxChannelsLimit = 0x7FFF - 0x4000 + 1

// maxUDPListeners bounds UDPListeners (each is a socket and a goroutine).
const maxUDPListeners = 256

// minSecretLen keeps the HMAC key out of brute-force range.
const minSecretLen = 16

// Config configures the embedded TURN server. Start from DefaultConfig,
// which holds every default, and set Secret, PublicIP, the listen addresses
// and Sessions: New fills in no limit left at 0, it refuses it.
type Config struct {
	// Realm is the STUN realm.
	Realm string
	// Secret is the HMAC key for TURN REST credentials; required, at least 16
	// bytes. It is copied by New and never logged.
	Secret []byte
	// PublicIP is the relay address advertised to clients
	// (XOR-RELAYED-ADDRESS); required, IPv4 (pion/turn v4 relays over udp4 only).
	PublicIP net.IP
	// RelayBindIP is where relay sockets bind; default PublicIP if it is
	// loopback, else 0.0.0.0.
	RelayBindIP net.IP
	// RelayPorts is the range every relay socket's port comes from, so a
	// firewall or a container can open just that; the zero value is the
	// kernel's ephemeral range. One port per allocation: when every port
	// of the range is taken (by our relays or by anything else on
	// RelayBindIP), Allocate is answered 508 Insufficient Capacity.
	RelayPorts PortRange
	// UDPAddr is the TURN UDP listen address, e.g. "0.0.0.0:3478" or
	// "127.0.0.1:0". Empty disables TURN over UDP.
	UDPAddr string
	// UDPListeners is how many UDP sockets share UDPAddr (SO_REUSEPORT), each
	// with its own read loop (DefaultConfig: GOMAXPROCS). Always 1 where
	// SO_REUSEPORT is not available.
	UDPListeners int
	// UDPBatch is how many datagrams a UDP listener reads, and sends, per
	// system call (recvmmsg and sendmmsg; DefaultConfig: DefaultUDPBatch),
	// 1..1024. 1 reads and sends one at a time, as every platform without
	// those calls does whatever is set here. A read takes what is waiting
	// and never waits for a batch to fill.
	UDPBatch int
	// DisableUDPGSO turns off segmented sends. By default, where Linux has
	// UDP GSO (4.18+) and the device takes it, a batch's forwards to one
	// client go out as one message the kernel cuts into datagrams, which
	// costs the server less per datagram; the client receives the same
	// datagrams either way. Off, each datagram is a message of its own.
	DisableUDPGSO bool
	// TCPAddr is the TURN TCP listen address. Empty disables TURN over TCP.
	// If both its port and UDPAddr's port are 0, TCP listens on the port the
	// UDP socket got, so clients need only one port number.
	TCPAddr string
	// TLSAddr is the TURN-over-TLS ("turns:") listen address, e.g.
	// "0.0.0.0:5349"; empty disables it. For clients whose network lets
	// only TLS out. Its connections share TCP's caps and timeouts
	// (MaxTCPConns, MaxTCPConnsPerIP, TCPAllocateTimeout, which also bounds
	// the handshake).
	TLSAddr string
	// TLS is the TLS configuration for TLSAddr, required with it: its
	// Certificates or GetCertificate give the certificate (the host name
	// in "turns:" URLs must match it). New copies it and raises MinVersion
	// to TLS 1.2.
	TLS *tls.Config
	// TCPAllocateTimeout closes a TURN-over-TCP connection that has made no
	// allocation this long after it was accepted. After its first allocation a connection is closed only after 15 minutes of
	// silence.
	TCPAllocateTimeout time.Duration
	// MaxTCPConns caps open TURN-over-TCP connections; past it a new
	// connection is closed as soon as it is accepted.
	MaxTCPConns int
	// MaxTCPConnsPerIP caps open TURN-over-TCP connections from one client
	// IP (an IPv6 client: from its /64), refused the same way.
	MaxTCPConnsPerIP int
	// CredentialTTL is the lifetime of issued credentials.
	CredentialTTL time.Duration
	// MaxTTL bounds credential expiry: usernames whose expiry is further than
	// now+MaxTTL are refused.
	MaxTTL time.Duration
	// MaxAllocationsPerSession caps live allocations per lobby session.
	// Chrome makes one allocation per peer connection per TURN URL, and a
	// closed page keeps its allocations for up to 10 minutes.
	MaxAllocationsPerSession int
	// MaxAllocationsPerIP caps live allocations per client IP (IPv6: per
	// /64), whatever the session. Past it, and past MaxAllocationsPerSession, Allocate is answered 486
	// Allocation Quota Reached.
	MaxAllocationsPerIP int
	// MaxAllocations caps live allocations (relay sockets) of the whole
	// server. Past it Allocate is answered
	// 508 Insufficient Capacity.
	MaxAllocations int
	// MaxAllocationLifetime caps the lifetime an Allocate or Refresh is
	// granted (1s..1h). An allocation
	// not refreshed within it is closed.
	MaxAllocationLifetime time.Duration
	// MaxChannelsPerAllocation caps the channels bound on one allocation. A
	// ChannelBind for a new
	// channel past it is answered 508 Insufficient Capacity. Permissions
	// need no cap of their own: pion keys them by peer IP and the peer
	// policy admits only PublicIP, so an allocation holds at most one.
	MaxChannelsPerAllocation int
	// MaxBandwidth is the relayed payload, in bytes per second, that one
	// allocation's client may send through it; packets beyond it are dropped
	// and counted (Stats.DroppedBandwidth). NoBandwidthLimit turns the limit
	// off; 0 is refused.
	MaxBandwidth int64
	// BandwidthBurst is how many bytes an allocation may send at once after
	// a quiet spell, above MaxBandwidth (DefaultBandwidthBurst gives a
	// quarter second at a rate). At least 1600 (one full-size packet), at
	// most 1 GiB; unused without a limit.
	BandwidthBurst int64
	// Sessions answers which sessions are live and which room they are in;
	// required.
	Sessions Sessions
	// Logger receives the server's logs with component=turn; nil:
	// slog.Default().
	Logger *slog.Logger

	// tcpWriteTimeout bounds a TURN-over-TCP write: 0 is the constant
	// tcpWriteTimeout; tests shorten it.
	tcpWriteTimeout time.Duration
}

// PortRange is the inclusive range of ports Min..Max; the zero value is no
// range.
type PortRange struct {
	Min, Max uint16
}

// Size is how many ports the range holds, 0 for the zero value.
func (r PortRange) Size() int {
	if r == (PortRange{}) {
		return 0
	}

	return int(r.Max) - int(r.Min) + 1
}

// contains reports whether port is in the range.
func (r PortRange) contains(port int) bool { return port >= int(r.Min) && port <= int(r.Max) }

// String is "Min-Max", or "" for the zero value.
func (r PortRange) String() string {
	if r == (PortRange{}) {
		return ""
	}

	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

// DefaultConfig is the TURN server's configuration with every limit at its
// default: the one place they are set (hostrelay's server takes its TURN
// defaults from here). The caller adds Secret, PublicIP, the listen
// addresses and Sessions.
func DefaultConfig() Config {
	return Config{
		Realm:                    DefaultRealm,
		UDPListeners:             runtime.GOMAXPROCS(0),
		UDPBatch:                 DefaultUDPBatch,
		TCPAllocateTimeout:       DefaultTCPAllocateTimeout,
		MaxTCPConns:              DefaultMaxTCPConns,
		MaxTCPConnsPerIP:         DefaultMaxTCPConnsPerIP,
		CredentialTTL:            DefaultCredentialTTL,
		MaxTTL:                   DefaultMaxTTL,
		MaxAllocationsPerSession: DefaultMaxAllocationsPerSession,
		MaxAllocationsPerIP:      DefaultMaxAllocationsPerIP,
		MaxAllocations:           DefaultMaxAllocations,
		MaxAllocationLifetime:    DefaultMaxAllocationLifetime,
		MaxChannelsPerAllocation: DefaultMaxChannelsPerAllocation,
		MaxBandwidth:             DefaultMaxBandwidth,
		BandwidthBurst:           DefaultBandwidthBurst(DefaultMaxBandwidth),
	}
}

// DefaultBandwidthBurst is the burst that suits a rate: a quarter second at
// it, and never less than one full-size packet.
func DefaultBandwidthBurst(rate int64) int64 {
	return max(rate/defaultBurstDivisor, minBandwidthBurst)
}

// prepared returns a copy of c with its slices copied, so later changes by
// the caller cannot reach the server, and with what is derived from other
// fields filled in. Limits are the caller's: a 0 left in one is refused by
// validate, not replaced.
func (c Config) prepared() Config {
	c.Secret = append([]byte(nil), c.Secret...)
	if ip4 := c.PublicIP.To4(); ip4 != nil {
		c.PublicIP = append(net.IP(nil), ip4...)
	}
	switch {
	case c.RelayBindIP != nil:
		if ip4 := c.RelayBindIP.To4(); ip4 != nil {
			c.RelayBindIP = append(net.IP(nil), ip4...)
		}
	case c.PublicIP.IsLoopback():
		c.RelayBindIP = append(net.IP(nil), c.PublicIP...)
	default:
		c.RelayBindIP = net.IPv4zero.To4()
	}
	if !reusePortSupported {
		c.UDPListeners = 1
	}
	if c.tcpWriteTimeout == 0 {
		c.tcpWriteTimeout = tcpWriteTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.TLS != nil {
		c.TLS = c.TLS.Clone()
		c.TLS.MinVersion = max(c.TLS.MinVersion, tls.VersionTLS12)
	}

	return c
}

// validate checks a Config that went through prepared. It runs before any
// socket is opened.
func (c Config) validate() error {
	switch {
	case c.Sessions == nil:
		return ErrNoSessions
	case len(c.Secret) < minSecretLen:
		return fmt.Errorf("%w (got %d)", ErrSecretTooShort, len(c.Secret))
	case c.Realm == "" || len(c.Realm) > 127:
		return ErrRealm
	case c.PublicIP == nil:
		return fmt.Errorf("%w: missing", ErrPublicIP)
	case c.PublicIP.To4() == nil || c.PublicIP.IsUnspecified():
		return fmt.Errorf("%w: got %s", ErrPublicIP, c.PublicIP)
	case c.RelayBindIP.To4() == nil:
		return fmt.Errorf("%w: got %s", ErrRelayBindIP, c.RelayBindIP)
	case c.RelayPorts != PortRange{} && (c.RelayPorts.Min == 0 || c.RelayPorts.Min > c.RelayPorts.Max):
		return fmt.Errorf("%w (got %d-%d)", ErrRelayPorts, c.RelayPorts.Min, c.RelayPorts.Max)
	case c.UDPAddr == "" && c.TCPAddr == "" && c.TLSAddr == "":
		return ErrNoListener
	case c.TLSAddr != "" && (c.TLS == nil || len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil &&
		c.TLS.GetConfigForClient == nil):
		return ErrTLS
	case c.CredentialTTL < time.Second:
		// Usernames carry whole seconds; a shorter TTL expires before use.
		return fmt.Errorf("%w: CredentialTTL %s is under 1s", ErrTTL, c.CredentialTTL)
	case c.MaxTTL < c.CredentialTTL:
		return fmt.Errorf("%w: CredentialTTL %s exceeds MaxTTL %s", ErrTTL, c.CredentialTTL, c.MaxTTL)
	case c.MaxAllocationsPerSession < 1:
		return fmt.Errorf("%w: MaxAllocationsPerSession %d", ErrQuota, c.MaxAllocationsPerSession)
	case c.MaxAllocationsPerIP < 1 || c.MaxAllocations < 1:
		return fmt.Errorf("%w: MaxAllocationsPerIP %d, MaxAllocations %d", ErrQuota, c.MaxAllocationsPerIP, c.MaxAllocations)
	case c.MaxAllocationLifetime < minAllocationLifetime || c.MaxAllocationLifetime > maxAllocationLifetime:
		return fmt.Errorf("%w (got %s)", ErrLifetime, c.MaxAllocationLifetime)
	case c.MaxChannelsPerAllocation < 1 || c.MaxChannelsPerAllocation > maxChannelsLimit:
		return fmt.Errorf("%w (got %d)", ErrChannels, c.MaxChannelsPerAllocation)
	case c.TCPAllocateTimeout <= 0 || c.TCPAllocateTimeout > tcpIdleTimeout:
		return fmt.Errorf("%w: TCPAllocateTimeout %s", ErrTCPLimits, c.TCPAllocateTimeout)
	case c.MaxTCPConns < 1 || c.MaxTCPConnsPerIP < 1:
		return fmt.Errorf("%w: MaxTCPConns %d, MaxTCPConnsPerIP %d", ErrTCPLimits, c.MaxTCPConns, c.MaxTCPConnsPerIP)
	case c.UDPListeners < 1 || c.UDPListeners > maxUDPListeners:
		return fmt.Errorf("%w (got %d)", ErrUDPListeners, c.UDPListeners)
	case c.UDPBatch < 1 || c.UDPBatch > maxUDPBatch:
		return fmt.Errorf("%w (got %d)", ErrUDPBatch, c.UDPBatch)
	case c.MaxBandwidth != NoBandwidthLimit && (c.MaxBandwidth < 1 || c.MaxBandwidth > maxBandwidth):
		return fmt.Errorf("%w: MaxBandwidth %d", ErrBandwidth, c.MaxBandwidth)
	case c.MaxBandwidth != NoBandwidthLimit &&
		(c.BandwidthBurst < minBandwidthBurst || c.BandwidthBurst > maxBandwidthBurst):
		return fmt.Errorf("%w: BandwidthBurst %d", ErrBandwidth, c.BandwidthBurst)
	}
	for _, addr := range []string{c.UDPAddr, c.TCPAddr, c.TLSAddr} {
		if addr == "" {
			continue
		}
		if _, err := listenPort(addr); err != nil {
			return err
		}
	}

	return nil
}

// listenPort returns the port of a host:port listen address.
func listenPort(addr string) (int, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("%w %q: %w", ErrListenAddr, addr, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("%w %q: bad port", ErrListenAddr, addr)
	}

	return int(n), nil
}
