package turn

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestConfigValidation(t *testing.T) {
	fs := newFakeSessions()
	tests := []struct {
		name   string
		mutate func(*Config)
		want   error
	}{
		{"no sessions", func(c *Config) { c.Sessions = nil }, ErrNoSessions},
		{"short secret", func(c *Config) { c.Secret = []byte("short") }, ErrSecretTooShort},
		{"no secret", func(c *Config) { c.Secret = nil }, ErrSecretTooShort},
		{"no public ip", func(c *Config) { c.PublicIP = nil }, ErrPublicIP},
		{"ipv6 public ip", func(c *Config) { c.PublicIP = net.ParseIP("2001:db8::1") }, ErrPublicIP},
		{"unspecified public ip", func(c *Config) { c.PublicIP = net.IPv4zero }, ErrPublicIP},
		{"ipv6 bind ip", func(c *Config) { c.RelayBindIP = net.IPv6loopback }, ErrRelayBindIP},
		{"no listeners", func(c *Config) { c.UDPAddr, c.TCPAddr = "", "" }, ErrNoListener},
		{"relay ports from 0", func(c *Config) { c.RelayPorts = PortRange{Max: 50000} }, ErrRelayPorts},
		{"relay ports reversed", func(c *Config) { c.RelayPorts = PortRange{Min: 50001, Max: 50000} }, ErrRelayPorts},
		{"bad udp addr", func(c *Config) { c.UDPAddr = "nope" }, ErrListenAddr},
		{"bad tcp port", func(c *Config) { c.TCPAddr = "127.0.0.1:99999" }, ErrListenAddr},
		{"ttl over max", func(c *Config) { c.CredentialTTL, c.MaxTTL = 2*time.Hour, time.Hour }, ErrTTL},
		{"ttl under a second", func(c *Config) { c.CredentialTTL = 500 * time.Millisecond }, ErrTTL},
		{"negative ttl", func(c *Config) { c.CredentialTTL = -time.Hour }, ErrTTL},
		{"negative quota", func(c *Config) { c.MaxAllocationsPerSession = -1 }, ErrQuota},
		{"long realm", func(c *Config) { c.Realm = strings.Repeat("r", 128) }, ErrRealm},
		{"negative udp listeners", func(c *Config) { c.UDPListeners = -1 }, ErrUDPListeners},
		{"too many udp listeners", func(c *Config) { c.UDPListeners = 257 }, ErrUDPListeners},
		{"negative udp batch", func(c *Config) { c.UDPBatch = -1 }, ErrUDPBatch},
		{"udp batch past UIO_MAXIOV", func(c *Config) { c.UDPBatch = 1025 }, ErrUDPBatch},
		{"negative bandwidth", func(c *Config) { c.MaxBandwidth = -2 }, ErrBandwidth},
		{"bandwidth over 1 TiB/s", func(c *Config) { c.MaxBandwidth = 1<<40 + 1 }, ErrBandwidth},
		{"burst under a packet", func(c *Config) { c.BandwidthBurst = packetCap - 1 }, ErrBandwidth},
		{"negative burst", func(c *Config) { c.BandwidthBurst = -1 }, ErrBandwidth},
		{"burst over 1 GiB", func(c *Config) { c.BandwidthBurst = 1<<30 + 1 }, ErrBandwidth},
		{"negative allocate timeout", func(c *Config) { c.TCPAllocateTimeout = -time.Second }, ErrTCPLimits},
		{"allocate timeout past the idle timeout", func(c *Config) { c.TCPAllocateTimeout = tcpIdleTimeout + 1 }, ErrTCPLimits},
		{"negative tcp cap", func(c *Config) { c.MaxTCPConns = -1 }, ErrTCPLimits},
		{"negative tcp cap per ip", func(c *Config) { c.MaxTCPConnsPerIP = -1 }, ErrTCPLimits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(fs)
			tt.mutate(&cfg)
			srv, err := New(context.Background(), cfg)
			if err == nil {
				_ = srv.Close()
				t.Fatal("New succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "turn:") {
				t.Fatalf("error %q does not start with turn:", err)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := DefaultConfig()
	if c.Realm != DefaultRealm || c.CredentialTTL != DefaultCredentialTTL || c.MaxTTL != DefaultMaxTTL ||
		c.MaxAllocationsPerSession != DefaultMaxAllocationsPerSession {
		t.Fatalf("defaults not set: %+v", c)
	}
	if c.TCPAllocateTimeout != DefaultTCPAllocateTimeout || c.MaxTCPConns != DefaultMaxTCPConns ||
		c.MaxTCPConnsPerIP != DefaultMaxTCPConnsPerIP {
		t.Fatalf("TCP defaults not set: %s %d %d", c.TCPAllocateTimeout, c.MaxTCPConns, c.MaxTCPConnsPerIP)
	}
	if c.MaxBandwidth != DefaultMaxBandwidth || c.BandwidthBurst != DefaultMaxBandwidth/4 {
		t.Fatalf("bandwidth %d burst %d, want %d and a quarter of it", c.MaxBandwidth, c.BandwidthBurst, DefaultMaxBandwidth)
	}
	c.PublicIP = net.IPv4(127, 0, 0, 1)
	if c = c.prepared(); !c.RelayBindIP.Equal(net.IPv4(127, 0, 0, 1)) || c.Logger == nil {
		t.Fatalf("loopback PublicIP: RelayBindIP = %s, want 127.0.0.1", c.RelayBindIP)
	}
	c = Config{PublicIP: net.IPv4(203, 0, 113, 7)}.prepared()
	if !c.RelayBindIP.Equal(net.IPv4zero) {
		t.Fatalf("public PublicIP: RelayBindIP = %s, want 0.0.0.0", c.RelayBindIP)
	}
	// A low rate still gets a burst of at least one full-size packet.
	if b := DefaultBandwidthBurst(1000); b != packetCap {
		t.Fatalf("burst at 1000 B/s = %d, want %d", b, packetCap)
	}
}

// TestZeroLimitsRefused: New fills in no limit, so one left at 0 (a Config
// not started from DefaultConfig) is refused rather than quietly replaced.
func TestZeroLimitsRefused(t *testing.T) {
	fs := newFakeSessions()
	for name, tc := range map[string]struct {
		mutate func(*Config)
		want   error
	}{
		"realm":                {func(c *Config) { c.Realm = "" }, ErrRealm},
		"credential ttl":       {func(c *Config) { c.CredentialTTL = 0 }, ErrTTL},
		"allocations/session":  {func(c *Config) { c.MaxAllocationsPerSession = 0 }, ErrQuota},
		"allocations/ip":       {func(c *Config) { c.MaxAllocationsPerIP = 0 }, ErrQuota},
		"allocations":          {func(c *Config) { c.MaxAllocations = 0 }, ErrQuota},
		"lifetime":             {func(c *Config) { c.MaxAllocationLifetime = 0 }, ErrLifetime},
		"channels":             {func(c *Config) { c.MaxChannelsPerAllocation = 0 }, ErrChannels},
		"bandwidth":            {func(c *Config) { c.MaxBandwidth = 0 }, ErrBandwidth},
		"burst":                {func(c *Config) { c.BandwidthBurst = 0 }, ErrBandwidth},
		"tcp allocate timeout": {func(c *Config) { c.TCPAllocateTimeout = 0 }, ErrTCPLimits},
		"tcp conns":            {func(c *Config) { c.MaxTCPConns = 0 }, ErrTCPLimits},
		"tcp conns/ip":         {func(c *Config) { c.MaxTCPConnsPerIP = 0 }, ErrTCPLimits},
		"udp listeners":        {func(c *Config) { c.UDPListeners = 0 }, ErrUDPListeners},
		"udp batch":            {func(c *Config) { c.UDPBatch = 0 }, ErrUDPBatch},
		"all": {func(c *Config) {
			*c = Config{Secret: testSecret, PublicIP: c.PublicIP, UDPAddr: c.UDPAddr, Sessions: fs}
		}, ErrRealm},
	} {
		cfg := testConfig(fs)
		tc.mutate(&cfg)
		if !reusePortSupported && name == "udp listeners" {
			continue // forced to 1 there
		}
		if _, err := New(context.Background(), cfg); !errors.Is(err, tc.want) {
			t.Errorf("%s at 0: %v, want %v", name, err, tc.want)
		}
	}
	// Without a limit the burst is not used, so 0 is fine there.
	srv, _ := newServer(t, func(c *Config) { c.MaxBandwidth, c.BandwidthBurst = NoBandwidthLimit, 0 })
	if srv.allocs.bw.limited {
		t.Fatal("NoBandwidthLimit: limited")
	}
}

func TestConfigSecretCopied(t *testing.T) {
	secret := append([]byte(nil), testSecret...)
	srv, _ := newServer(t, func(c *Config) { c.Secret = secret })
	before := srv.Credentials("s", time.Unix(1e9, 0))
	secret[0] ^= 0xff
	if after := srv.Credentials("s", time.Unix(1e9, 0)); after != before {
		t.Fatal("changing the caller's Secret changed the server's credentials")
	}
}

func TestNewListenError(t *testing.T) {
	taken, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := testConfig(newFakeSessions())
	cfg.UDPAddr = taken.LocalAddr().String()
	srv, err := New(context.Background(), cfg)
	if err == nil {
		_ = srv.Close()
		t.Fatal("New succeeded on a taken port")
	}
	if !strings.HasPrefix(err.Error(), "turn:") {
		t.Fatalf("error %q does not start with turn:", err)
	}
}

func TestSamePortForUDPAndTCP(t *testing.T) {
	srv, _ := newServer(t)
	if srv.UDPAddr().Port != srv.TCPAddr().Port {
		t.Fatalf("udp port %d != tcp port %d", srv.UDPAddr().Port, srv.TCPAddr().Port)
	}
}

func TestSingleTransport(t *testing.T) {
	udpOnly, _ := newServer(t, func(c *Config) { c.TCPAddr = "" })
	if udpOnly.TCPAddr() != nil || udpOnly.UDPAddr() == nil {
		t.Fatal("UDP-only server has wrong listeners")
	}
	tcpOnly, _ := newServer(t, func(c *Config) { c.UDPAddr = "" })
	if tcpOnly.UDPAddr() != nil || tcpOnly.TCPAddr() == nil {
		t.Fatal("TCP-only server has wrong listeners")
	}
}
