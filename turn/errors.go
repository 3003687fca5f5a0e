package turn

import "errors"

// Configuration errors returned (wrapped) by New. Callers match them with errors.Is.
var (
	// ErrNoSessions means Config.Sessions is nil: without it turn cannot tell live sessions from stale credentials.
	ErrNoSessions = errors.New("turn: Sessions is required")
	// ErrSecretTooShort means Config.Secret has fewer than 16 bytes.
	ErrSecretTooShort = errors.New("turn: Secret must be at least 16 bytes")
	// ErrPublicIP means Config.PublicIP is missing, not IPv4, or unspecified.
	ErrPublicIP = errors.New("turn: PublicIP must be a specific IPv4 address")
	// ErrRelayBindIP means Config.RelayBindIP is not IPv4.
	ErrRelayBindIP = errors.New("turn: RelayBindIP must be an IPv4 address")
	// ErrRelayPorts means RelayPorts is set with Min 0 or Min above Max.
	ErrRelayPorts = errors.New("turn: RelayPorts must have 1 <= Min <= Max")
	// ErrNoListener means none of UDPAddr, TCPAddr and TLSAddr is set.
	ErrNoListener = errors.New("turn: at least one of UDPAddr, TCPAddr and TLSAddr is required")
	// ErrTLS means TLSAddr is set without a TLS config that has a certificate.
	ErrTLS = errors.New("turn: TLSAddr needs TLS with Certificates or GetCertificate")
	// ErrListenAddr means UDPAddr, TCPAddr or TLSAddr is not a host:port address.
	ErrListenAddr = errors.New("turn: invalid listen address")
	// ErrTTL means CredentialTTL or MaxTTL is out of range.
	ErrTTL = errors.New("turn: invalid credential lifetime")
	// ErrQuota means MaxAllocationsPerSession, MaxAllocationsPerIP or
	// MaxAllocations is under 1.
	ErrQuota = errors.New("turn: allocation caps must be at least 1")
	// ErrLifetime means MaxAllocationLifetime is outside 1s..1h.
	ErrLifetime = errors.New("turn: MaxAllocationLifetime must be between 1s and 1h")
	// ErrChannels means MaxChannelsPerAllocation is outside 1..16384.
	ErrChannels = errors.New("turn: MaxChannelsPerAllocation must be between 1 and 16384")
	// ErrUDPListeners means UDPListeners is out of range (1..256).
	ErrUDPListeners = errors.New("turn: UDPListeners must be between 1 and 256")
	// ErrUDPBatch means UDPBatch is out of range (1..1024).
	ErrUDPBatch = errors.New("turn: UDPBatch must be between 1 and 1024")
	// ErrBandwidth means MaxBandwidth is neither NoBandwidthLimit nor
	// 1 byte/s..1 TiB/s, or BandwidthBurst is outside 1600 bytes..1 GiB.
	ErrBandwidth = errors.New("turn: MaxBandwidth must be 1 byte/s..1 TiB/s or NoBandwidthLimit, BandwidthBurst 1600 bytes..1 GiB")
	// ErrTCPLimits means TCPAllocateTimeout is not positive or over 15
	// minutes (the idle timeout), or MaxTCPConns or MaxTCPConnsPerIP is
	// under 1.
	ErrTCPLimits = errors.New("turn: TCPAllocateTimeout must be over 0 and at most 15m, MaxTCPConns and MaxTCPConnsPerIP at least 1")
	// ErrRealm means Realm is empty or too long for a STUN REALM attribute.
	ErrRealm = errors.New("turn: Realm must be 1 to 127 characters")
)

// Runtime errors.
var (
	// ErrClosed is returned when a relay socket is requested after Close.
	ErrClosed = errors.New("turn: server closed")
	// ErrCloseTimeout means Close gave up waiting for allocations to wind down.
	ErrCloseTimeout = errors.New("turn: timed out waiting for allocations to close")

	errUsername          = errors.New("turn: malformed username")
	errCapacity          = errors.New("turn: allocation capacity reached (MaxAllocations)")
	errPortsExhausted    = errors.New("turn: no free relay port in RelayPorts")
	errRelayNetwork      = errors.New("turn: relay sockets are UDP over IPv4 only")
	errTCPRelay          = errors.New("turn: TCP relay allocations are not supported")
	errSamePortExhausted = errors.New("turn: could not get the same port for UDP and TCP")
	errTCPFrame          = errors.New("turn: invalid TURN-over-TCP frame")
)
