package server

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/hostrelay/hostrelay/auth"
	"github.com/hostrelay/hostrelay/protocol"
	"github.com/hostrelay/hostrelay/signaling"
	"github.com/hostrelay/hostrelay/turn"
)

// option is one setting as an operator sees it: a flag, the HOSTRELAY_
// variable named after it, a YAML key, help, and the Config field it sets.
// The flags, the variables, the file, validation, -h, the README's table and
// the sample file are all made from these, so they cannot disagree.
type option struct {
	flag  string     // without the dash
	key   string     // in the YAML file, section.name; empty: not in the file
	help  string     // plain text: -h prints it (so no backquotes, which flag reads as the value's name)
	value flag.Value // the field, with its text form
	list  bool       // a comma-separated list; the file may give a sequence
	// check validates the field once every source is applied; the error
	// is prefixed with the option's names and value.
	check func() error
	def   string // the README's default column (markdown), where the value alone does not say it
	see   string // a markdown link the README appends to help
	// sensitive values are never printed in an error.
	sensitive bool
}

// envPrefix + upper-cased flag name with '-' as '_' is each flag's variable.
const envPrefix = "HOSTRELAY_"

func (o *option) env() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(o.flag, "-", "_"))
}

// names is how errors call the option: by its flag and its YAML key.
func (o *option) names() string {
	if o.key == "" {
		return "-" + o.flag
	}
	return "-" + o.flag + " (" + o.key + ")"
}

func (o *option) checked(f func() error) *option { o.check = f; return o }
func (o *option) defaultDoc(s string) *option    { o.def = s; return o }
func (o *option) link(md string) *option         { o.see = md; return o }

// binder collects the options of one section of the YAML file.
type binder struct {
	opts   *[]*option
	prefix string
}

func (b binder) section(name string) binder {
	return binder{opts: b.opts, prefix: b.prefix + name + "."}
}

func (b binder) add(flagName, key string, v flag.Value, help string) *option {
	o := &option{flag: flagName, key: b.prefix + key, help: help, value: v}
	_, o.list = v.(listValue)
	if _, ok := v.(prefixesValue); ok {
		o.list = true
	}
	*b.opts = append(*b.opts, o)
	return o
}

// options binds every setting of c; each section binds its own.
func (c *Config) options() []*option {
	var opts []*option
	b := binder{opts: &opts}
	c.HTTP.bind(b.section("http"))
	c.TLS.bind(b.section("tls"))
	c.bindTURN(b.section("turn"))
	bindLobby(b.section("lobby"), &c.Lobby)
	c.Log.bind(b.section("log"))
	c.Debug.bind(b.section("debug"))
	c.Metrics.bind(b.section("metrics"))
	c.Cluster.bind(b.section("cluster"))
	bindAuth(b.section("auth"), &c.Auth)
	c.Webhook.bind(b.section("webhook"))
	c.Bans.bind(b.section("bans"))
	b.add("shutdown-grace", "shutdown_grace", durValue{&c.ShutdownGrace},
		"how long SIGTERM waits for lobby connections to close (a second signal exits at once)").
		checked(positive(&c.ShutdownGrace))
	return opts
}

// configOption is -config, which names the file rather than setting a field.
func configOption(path *string) *option {
	return &option{flag: "config", value: strValue{path}, def: "none",
		help: "YAML file of settings (deploy/hostrelay.example.yaml lists every key); flags and HOSTRELAY_ variables override it"}
}

func (c *HTTPConfig) bind(b binder) {
	b.add("http", "addr", strValue{&c.Addr},
		"HTTP listen address: the lobby page, share links, /healthz, /api/v1 and the lobby WebSocket /ws").
		checked(hostPort(&c.Addr))
	b.add("api-keys", "api_keys", listValue{&c.APIKeys},
		"operator keys for /api/v1, comma-separated, each at least 16 bytes (prefer the environment variable); never logged").
		checked(func() error {
			for _, k := range c.APIKeys {
				if len(k) < 16 {
					return errors.New("every key must be at least 16 bytes")
				}
			}
			return nil
		}).defaultDoc("none").sensitive = true
	b.add("trusted-proxies", "trusted_proxies", prefixesValue{&c.TrustedProxies},
		"comma-separated CIDRs whose X-Forwarded-For is believed; otherwise the peer address is the client").
		defaultDoc("none")
	// Not one of -api-keys: a backend's key mints TURN credentials, this one
	// closes rooms and removes players, and it is typed into a browser.
	b.add("admin-token", "admin_token", strValue{&c.AdminToken},
		"token for the admin page /admin and its API /api/v1/admin (live rooms, close a room, kick a player), at least 16 bytes (prefer the environment variable); empty: both answer 404; never logged").
		checked(func() error {
			if c.AdminToken != "" && len(c.AdminToken) < 16 {
				return errors.New("must be at least 16 bytes")
			}
			return nil
		}).defaultDoc("none (off)").
		link("[admin page](docs/operations.md#admin-page)").sensitive = true
	// One connection is kept from WebSockets for /healthz and pages, so a
	// cap of 1 would leave no room for the lobby.
	b.add("max-http-conns", "max_conns", intValue{&c.MaxConns, Auto},
		"open HTTP connections, lobby WebSockets included; at the cap the longest-idle one makes room, and WebSockets may take all but an eighth; one client IP (IPv6: /64) may hold a quarter, at least -max-conns-per-ip + 8, past which its own longest-idle one makes room (auto: a quarter of the open-file limit after a reserve)").
		checked(autoOrAtLeast(&c.MaxConns, 2)).
		link("[file handles](docs/operations.md#file-handles-and-connection-caps)")
	b.add("http-read-timeout", "read_timeout", durValue{&c.ReadTimeout},
		"time to read a whole HTTP request (its header: at most 10s); does not apply to open WebSockets").
		checked(durBetween(&c.ReadTimeout, time.Second, time.Hour))
	b.add("http-write-timeout", "write_timeout", durValue{&c.WriteTimeout},
		"time to write an HTTP response; does not apply to open WebSockets").
		checked(durBetween(&c.WriteTimeout, time.Second, time.Hour))
	b.add("http-idle-timeout", "idle_timeout", durValue{&c.IdleTimeout},
		"how long a keep-alive HTTP connection may wait for its next request").
		checked(durBetween(&c.IdleTimeout, time.Second, time.Hour))
}

// bindTURN binds the turn section straight onto the TURN server's config,
// and the URLs clients are handed onto c.ICE.
func (c *Config) bindTURN(b binder) {
	t, ice := &c.TURN, &c.ICE
	b.add("turn-udp", "udp_addr", strValue{&t.UDPAddr}, "TURN over UDP listen address").
		checked(hostPort(&t.UDPAddr))
	b.add("turn-gso", "gso", disabledValue{&t.DisableUDPGSO},
		"send a batch's relayed packets for one client as one segmented message (Linux UDP GSO, where the kernel and network device take it; less CPU per packet); off sends each on its own")
	b.add("turn-tcp", "tcp_addr", strValue{&t.TCPAddr},
		"TURN over TCP listen address, for networks that block UDP (port 0: the UDP port)").
		checked(hostPort(&t.TCPAddr))
	b.add("public-ip", "public_ip", ipValue{&t.PublicIP},
		"this host's public IP, the relay address handed to clients. Set it in production: the default only works for players on this machine").
		checked(func() error {
			if t.PublicIP == nil || t.PublicIP.IsUnspecified() {
				return errors.New("must be a concrete address clients can reach")
			}
			return nil
		})
	// Below 1024 a port needs privileges the server does not run with.
	b.add("turn-relay-ports", "relay_ports", portRangeValue{&t.RelayPorts},
		"UDP ports the TURN relay sockets use, lo-hi with 1024 <= lo <= hi <= 65535 (e.g. 50000-50999), so a firewall or a container publishes only those; one port per allocation (a browser takes 2 or 3 per peer connection): when all are taken Allocate is answered 508, counted as reason ports; empty: the kernel's ephemeral range").
		checked(func() error {
			switch r := t.RelayPorts; {
			case r.Size() == 0:
				return nil
			case r.Min < 1024:
				return errors.New("ports under 1024 need privileges: start at 1024 or above")
			case r.Min > r.Max:
				return errors.New("the first port must not be above the last")
			}
			return nil
		}).defaultDoc("the kernel's ephemeral range").
		link("[firewall](docs/operations.md#firewall)")
	b.add("public-host", "public_host", strValue{&ice.PublicHost}, "host name put in TURN URLs").
		defaultDoc("the host the browser used")
	b.add("turn-secret", "secret", bytesValue{&t.Secret},
		"HMAC secret for TURN credentials, at least 16 bytes; set it so credentials survive restarts").
		checked(func() error {
			if len(t.Secret) > 0 && len(t.Secret) < 16 {
				return errors.New("must be at least 16 bytes")
			}
			return nil
		}).defaultDoc("random at each start (logged as a warning, never printed)").sensitive = true
	// 10s is short enough to test credential refresh; production wants hours.
	b.add("turn-ttl", "credential_ttl", durValue{&t.CredentialTTL}, "lifetime of issued TURN credentials (10s to 24h)").
		checked(durBetween(&t.CredentialTTL, 10*time.Second, 24*time.Hour))
	// A player needs one allocation per URL (two, three with TLS), a host
	// as many per peer.
	b.add("turn-max-allocations", "max_allocations_per_session", intValue{&t.MaxAllocationsPerSession, 0},
		"live TURN allocations per lobby session; a browser uses one per peer connection and TURN URL, so a host of 16 needs 30, or 45 with TURN over TLS offered").
		checked(atLeast(&t.MaxAllocationsPerSession, 2))
	b.add("turn-allocations-per-ip", "max_allocations_per_ip", intValue{&t.MaxAllocationsPerIP, 0},
		"live TURN allocations per client IP (IPv6: per /64), whatever the session; past it Allocate is answered 486").
		checked(atLeast(&t.MaxAllocationsPerIP, 2))
	b.add("turn-max-allocations-total", "max_allocations", intValue{&t.MaxAllocations, Auto},
		"live TURN allocations on this server (one socket each); past it Allocate is answered 508 (auto: half of the open-file limit after a reserve)").
		checked(autoOrAtLeast(&t.MaxAllocations, 2)).
		link("[file handles](docs/operations.md#file-handles-and-connection-caps)")
	// Browsers refresh a minute before the lifetime they were told ends;
	// pion grants at most an hour anyway.
	b.add("turn-max-lifetime", "max_lifetime", durValue{&t.MaxAllocationLifetime},
		"longest lifetime a TURN allocation is granted (1m to 1h; pion alone grants an hour when asked); one not refreshed within it is closed").
		checked(durBetween(&t.MaxAllocationLifetime, time.Minute, time.Hour))
	// A browser binds one channel per remote relay candidate: two per ICE
	// generation here (UDP and TCP), a few more across ICE restarts.
	b.add("turn-max-channels", "max_channels", intValue{&t.MaxChannelsPerAllocation, 0},
		"channels one TURN allocation may bind (a browser binds one per remote relay candidate); past it ChannelBind is answered 508").
		checked(between(&t.MaxChannelsPerAllocation, 4, 16384))
	// Below 16 KiB/s even a WebRTC handshake struggles: it is almost surely
	// a unit mistake (kbit/s for bytes/s).
	b.add("turn-max-bandwidth", "max_bandwidth", bandwidthValue{&t.MaxBandwidth},
		"relayed bytes per second per TURN allocation (one peer connection), e.g. 1048576 or 1MiB; packets over it are dropped and counted (off: unlimited). Takes KiB/MiB/GiB or KB/MB/GB").
		checked(func() error {
			if t.MaxBandwidth != turn.NoBandwidthLimit && (t.MaxBandwidth < 16<<10 || t.MaxBandwidth > 1<<40) {
				return errors.New("must be off (unlimited) or between 16KiB and 1TiB per second")
			}
			return nil
		})
	// The burst must hold the largest relayed packet (1600 bytes) or such
	// packets would never pass.
	b.add("turn-bandwidth-burst", "bandwidth_burst", sizeValue[int64]{&t.BandwidthBurst, Auto},
		"bytes a TURN allocation may send at once above -turn-max-bandwidth after a quiet spell, at least 1600 (auto: a quarter second at that rate, 256KiB at the default)").
		checked(func() error {
			if t.BandwidthBurst != Auto && (t.BandwidthBurst < 1600 || t.BandwidthBurst > 1<<30) {
				return errors.New("must be auto or between 1600 bytes and 1GiB")
			}
			return nil
		})
	b.add("turn-tcp-max-conns", "tcp_max_conns", intValue{&t.MaxTCPConns, Auto},
		"open TURN-over-TCP connections; past it new ones are closed at once (auto: a quarter of the open-file limit after a reserve)").
		checked(autoOrAtLeast(&t.MaxTCPConns, 1)).
		link("[file handles](docs/operations.md#file-handles-and-connection-caps)")
	b.add("turn-tcp-conns-per-ip", "tcp_conns_per_ip", intValue{&t.MaxTCPConnsPerIP, 0},
		"open TURN-over-TCP connections per client IP (IPv6: per /64), TURN over TLS included; a browser uses one per peer connection and TCP or TLS URL").
		checked(atLeast(&t.MaxTCPConnsPerIP, 1))
	// Under a second a browser on a slow link could not allocate in time;
	// past 15 minutes it would outlast the idle timeout of allocated ones.
	b.add("turn-tcp-allocate-timeout", "tcp_allocate_timeout", durValue{&t.TCPAllocateTimeout},
		"a TURN-over-TCP connection that has made no allocation this long is closed (1s to 15m)").
		checked(durBetween(&t.TCPAllocateTimeout, time.Second, 15*time.Minute))
	b.add("turn-tls", "tls_addr", strValue{&t.TLSAddr},
		"TURN over TLS (turns:) listen address, used with TLS on (the tls section's certificate), for networks that let only TLS out; its connections count against the TURN-over-TCP caps; off: none").
		checked(func() error { return offOrHostPort(t.TLSAddr) }).
		link("[TLS](docs/operations.md#tls-https-and-turn-over-tls)")
	b.add("turn-offer", "offer", listValue{&ice.Offer},
		"TURN transports whose URLs clients get, of those listening: udp, tcp, tls, always in that order (tls alone for players whose networks block UDP and TCP 3478)").
		checked(func() error { return checkOffer(ice.Offer, c.turnTLSAddr() != "") })
}

func (c *TLSConfig) bind(b binder) {
	b.add("tls-cert", "cert_file", strValue{&c.CertFile},
		"PEM certificate chain (leaf first) for HTTPS, WSS and TURN over TLS, with -tls-key; read again when the file changes").
		defaultDoc("none: plain HTTP").
		link("[TLS](docs/operations.md#tls-https-and-turn-over-tls)")
	b.add("tls-key", "key_file", strValue{&c.KeyFile}, "PEM private key of -tls-cert").
		checked(func() error {
			if (c.CertFile == "") != (c.KeyFile == "") {
				return errors.New("give -tls-cert and -tls-key together")
			}
			return nil
		}).defaultDoc("none")
	b.add("acme-domain", "acme_domains", listValue{&c.ACMEDomains},
		"comma-separated domain names to get certificates for from Let's Encrypt (ACME), instead of -tls-cert; port 80 (or -http on 443) must be reachable from the Internet").
		checked(func() error {
			if len(c.ACMEDomains) > 0 && c.CertFile != "" {
				return errors.New("give -acme-domain or -tls-cert, not both")
			}
			for _, d := range c.ACMEDomains {
				if !validDomain(d) {
					return fmt.Errorf("%q must be a DNS name (an ACME CA issues no certificate for an IP address or a wildcard here)", d)
				}
			}
			return nil
		}).defaultDoc("none")
	b.add("acme-cache", "acme_cache", strValue{&c.ACMECache},
		"directory keeping the ACME account and certificates across restarts; keep it (a volume in a container): Let's Encrypt limits how often it issues").
		checked(func() error {
			if len(c.ACMEDomains) > 0 && c.ACMECache == "" {
				return errors.New("required with -acme-domain")
			}
			return nil
		})
	b.add("acme-email", "acme_email", strValue{&c.ACMEEmail}, "contact address for the ACME account (expiry notices); optional").
		defaultDoc("none")
	b.add("acme-directory", "acme_directory", strValue{&c.ACMEDirectory},
		"ACME directory URL, e.g. Let's Encrypt's staging directory for trials").
		defaultDoc("Let's Encrypt")
	b.add("http-redirect", "redirect_addr", strValue{&c.RedirectAddr},
		"plain-HTTP listen address that redirects to HTTPS and answers ACME HTTP-01 challenges (auto: :80 with -acme-domain or when -http is on port 443, else none; off: none)").
		checked(func() error {
			switch {
			case c.RedirectAddr == "auto" || c.RedirectAddr == "off" || c.RedirectAddr == "":
				return nil
			case !c.Enabled():
				return errors.New("needs TLS (-tls-cert or -acme-domain): it redirects to HTTPS")
			}
			return offOrHostPort(c.RedirectAddr)
		})
}

// bindLobby binds the lobby section straight onto the hub's config.
func bindLobby(b binder, c *signaling.Config) {
	b.add("allowed-origins", "allowed_origins", listValue{&c.OriginPatterns},
		"comma-separated extra browser origins (host patterns) allowed to open /ws").
		defaultDoc("the page's own origin")
	b.add("seat-grace", "seat_grace", durValue{&c.Grace},
		"how long a player whose connection dropped keeps its seat for a resume (0: not held; at most 10m)").
		checked(durBetween(&c.Grace, 0, 10*time.Minute))
	b.add("spectators-per-room", "spectators_per_room", intValue{&c.SpectatorsPerRoom, 0},
		"spectators one room admits beyond its players (the host sends one stream; the server fans it out)").
		checked(atLeast(&c.SpectatorsPerRoom, 1))
	b.add("spectator-delay", "spectator_delay", durValue{&c.SpectatorDelay},
		"how long spectators see the game behind the players, so none can tell a player what the other side does (0 to 1m)").
		checked(durBetween(&c.SpectatorDelay, 0, time.Minute))
	// At least one room's whole buffer (the delay's and the joiners'), so
	// a watched room at the default limits can always stream.
	b.add("spectator-budget", "spectator_budget", sizeValue[int]{&c.SpectatorBudgetBytes, 0},
		"memory all rooms' spectator frames may hold together (the delay, and what a joiner is sent first); past it a room's joiner history goes first, then frames are refused. Rooms nobody watches keep at most a keyframe or two each, in a quarter of it").
		checked(func() error {
			if c.SpectatorBudgetBytes < 1<<20 {
				return errors.New("must be at least 1MiB")
			}
			return nil
		}).
		link("[spectators](docs/operations.md#spectators)")
	b.add("max-conns-per-ip", "max_conns_per_ip", intValue{&c.MaxConnsPerIP, 0},
		"open lobby connections per client IP (IPv6: per /64); past it HTTP 429").
		checked(atLeast(&c.MaxConnsPerIP, 1))
	b.add("joins-per-minute", "joins_per_minute", intValue{&c.JoinsPerMinute, 0}, "room joins per client IP per minute").
		checked(atLeast(&c.JoinsPerMinute, 1))
	b.add("rooms-per-minute", "rooms_per_minute", intValue{&c.RoomsPerMinute, 0}, "rooms one lobby session may create per minute").
		checked(atLeast(&c.RoomsPerMinute, 1))
	b.add("max-rooms", "max_rooms", intValue{&c.MaxRooms, 0}, "rooms on this server; past it creating one is refused with server_full").
		checked(atLeast(&c.MaxRooms, 1))
	// Below 1/s a player could not even join and signal a peer; the SDK's
	// own traffic (pings, ready, chat) fits well under the default 50.
	b.add("messages-per-second", "messages_per_second", floatValue{&c.MessagesPerSecond},
		"lobby messages per session per second, bursts of twice that; excess is refused with rate_limited, persistent excess closes the connection").
		checked(func() error {
			if c.MessagesPerSecond < 1 {
				return errors.New("must be at least 1")
			}
			return nil
		})
	b.add("signals-per-second", "signals_per_second", floatValue{&c.SignalsPerSecond},
		"SDP and ICE candidate messages per session per second; excess is refused with rate_limited").
		checked(func() error {
			if c.SignalsPerSecond <= 0 {
				return errors.New("must be positive")
			}
			return nil
		})
	b.add("signal-burst", "signal_burst", intValue{&c.SignalBurst, 0},
		"signals a session may send at once above -signals-per-second (a host answering many joiners sends a few per peer)").
		checked(atLeast(&c.SignalBurst, 1))
	// Under signaling.MinFrame some requests at their protocol maximum would
	// no longer fit a frame.
	b.add("max-frame", "max_frame", sizeValue[int]{&c.MaxFrame, 0},
		"largest lobby frame a client may send, 2KiB to 16KiB; larger closes the connection (1009). Clients learn it from welcome.maxFrame. This and the four size settings below default to the protocol's maximum and may only lower it").
		checked(sizeBetween(&c.MaxFrame, signaling.MinFrame, protocol.MaxFrame)).
		link("[limits](docs/protocol.md#limits)")
	b.add("max-sdp", "max_sdp", sizeValue[int]{&c.MaxSDP, 0},
		"largest SDP offer or answer in bytes, at least 256 under -max-frame; larger is refused with invalid_argument").
		checked(func() error {
			if err := sizeBetween(&c.MaxSDP, 1, protocol.MaxSDP)(); err != nil {
				return err
			}
			// An offer under -max-sdp must not be cut off by the frame limit.
			if room := c.MaxFrame - signaling.SignalFrameOverhead; c.MaxSDP > room {
				return fmt.Errorf("must leave %d bytes of -max-frame %d for the rest of the signal (at most %d)",
					signaling.SignalFrameOverhead, c.MaxFrame, room)
			}
			return nil
		})
	b.add("max-candidate", "max_candidate", sizeValue[int]{&c.MaxCandidate, 0},
		"largest ICE candidate in bytes; larger is refused with invalid_argument").
		checked(sizeBetween(&c.MaxCandidate, 1, protocol.MaxCandidate))
	b.add("max-chat-length", "max_chat_length", intValue{&c.MaxChatText, 0},
		"characters in one chat line; longer is refused with invalid_argument").
		checked(between(&c.MaxChatText, 1, protocol.MaxChatText))
	b.add("max-room-name", "max_room_name", intValue{&c.MaxRoomName, 0},
		"characters in a room name; longer is refused with invalid_argument").
		checked(between(&c.MaxRoomName, 1, protocol.MaxRoomName))
}

func (c *LogConfig) bind(b binder) {
	b.add("log-level", "level", levelValue{&c.Level}, "debug, info, warn or error")
	b.add("log-format", "format", strValue{&c.Format}, "text or json").
		checked(func() error {
			if c.Format != "text" && c.Format != "json" {
				return errors.New("must be text or json")
			}
			return nil
		})
}

func (c *DebugConfig) bind(b binder) {
	b.add("debug-addr", "addr", strValue{&c.Addr},
		"a loopback address (e.g. 127.0.0.1:6060; anything else is refused) serving Go's net/http/pprof under /debug/pprof/: goroutines, heap and CPU profiles; empty: off").
		checked(func() error { return checkDebugAddr(c.Addr) }).
		defaultDoc("off").
		link("[operations](docs/operations.md#debug-listener)")
}

// validate checks every option, naming each that fails by its flag and its
// YAML key, before anything listens.
func (c Config) validate() error {
	var errs []error
	for _, o := range c.options() {
		if o.check == nil {
			continue
		}
		if err := o.check(); err != nil {
			v := o.value.String()
			if o.sensitive {
				v = "(hidden)"
			} else if v == "" || strings.ContainsAny(v, " ,") {
				v = fmt.Sprintf("%q", v)
			}
			errs = append(errs, fmt.Errorf("%s %s: %w", o.names(), v, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("server: config: %w", err)
	}
	return nil
}

// The checks below read the field when validation runs, after every source.

func atLeast(p *int, lo int) func() error {
	return func() error {
		if *p < lo {
			return fmt.Errorf("must be at least %d", lo)
		}
		return nil
	}
}

func autoOrAtLeast(p *int, lo int) func() error {
	return func() error {
		if *p != Auto && *p < lo {
			return fmt.Errorf("must be auto or at least %d", lo)
		}
		return nil
	}
}

func between(p *int, lo, hi int) func() error {
	return func() error {
		if *p < lo || *p > hi {
			return fmt.Errorf("must be between %d and %d", lo, hi)
		}
		return nil
	}
}

func sizeBetween[T ~int | ~int64](p *T, lo, hi T) func() error {
	return func() error {
		if *p < lo || *p > hi {
			return fmt.Errorf("must be between %d and %d bytes (the protocol's maximum)", int64(lo), int64(hi))
		}
		return nil
	}
}

func durBetween(p *time.Duration, lo, hi time.Duration) func() error {
	return func() error {
		if *p < lo || *p > hi {
			return fmt.Errorf("must be between %s and %s", fmtDuration(lo), fmtDuration(hi))
		}
		return nil
	}
}

func positive(p *time.Duration) func() error {
	return func() error {
		if *p <= 0 {
			return errors.New("must be positive")
		}
		return nil
	}
}

// bindAuth binds the auth section straight onto the verifier's config.
func bindAuth(b binder, c *auth.Config) {
	b.add("auth", "mode", authModeValue{&c.Mode},
		"identity tokens in hello: off (ignored; every player unverified), optional (a token, if sent, must be valid) or required (every hello needs a valid one)").
		checked(c.Validate).
		link("[identity](docs/identity.md)")
	b.add("auth-hs256-secret", "hs256_secret", bytesValue{&c.HS256Secret},
		"shared secret the game's backend signs HS256 tokens with, at least 32 bytes (prefer the environment variable or -auth-hs256-secret-file); never logged").
		defaultDoc("none").sensitive = true
	b.add("auth-hs256-secret-file", "hs256_secret_file", secretFileValue{p: &c.HS256Secret},
		"file holding the HS256 secret (one trailing newline is dropped); read once at start").
		defaultDoc("none")
	b.add("auth-jwks-url", "jwks_url", strValue{&c.JWKSURL},
		"URL of the JWKS whose keys verify RS256, ES256 and EdDSA tokens (each token names its key with kid); fetched at start, hourly, and on an unknown kid at most every 30s").
		defaultDoc("none")
	b.add("auth-audience", "audience", strValue{&c.Audience},
		"when set, a token's aud must hold this value").defaultDoc("none (aud not checked)")
	b.add("auth-issuer", "issuer", strValue{&c.Issuer},
		"when set, a token's iss must be this value").defaultDoc("none (iss not checked)")
	b.add("auth-max-token", "max_token", intValue{&c.MaxTokenBytes, 0},
		fmt.Sprintf("bytes of one token, at most %d; a longer one is refused as auth_invalid (too_large)", protocol.MaxAuthToken)).
		checked(func() error {
			if c.MaxTokenBytes < 1 || c.MaxTokenBytes > protocol.MaxAuthToken {
				return fmt.Errorf("must be 1 to %d", protocol.MaxAuthToken)
			}
			return nil
		})
	b.add("auth-jwks-timeout", "jwks_timeout", durValue{&c.JWKSTimeout},
		"longest a hello waits for the JWKS to be fetched; past it the hello is refused auth_unavailable").
		checked(durBetween(&c.JWKSTimeout, 100*time.Millisecond, 30*time.Second))
}
