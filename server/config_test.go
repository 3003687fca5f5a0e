package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/turn"
)

func noEnv(string) string { return "" }

// writeFile writes a config file in the test's directory and returns its path.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hostrelay.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigTURNBandwidth(t *testing.T) {
	cfg, err := LoadConfig(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rate, burst := cfg.TURN.MaxBandwidth, bandwidthBurst(cfg.TURN); rate != turn.DefaultMaxBandwidth || burst != turn.DefaultMaxBandwidth/4 {
		t.Fatalf("default: %d B/s burst %d, want %d and turn's default burst", rate, burst, turn.DefaultMaxBandwidth)
	}

	for _, tc := range []struct {
		args        []string
		env         map[string]string
		rate, burst int64
	}{
		{args: []string{"-turn-max-bandwidth", "off"}, rate: turn.NoBandwidthLimit},
		{args: []string{"-turn-max-bandwidth", "OFF"}, rate: turn.NoBandwidthLimit},
		// 0 meant unlimited before off existed; it still does.
		{args: []string{"-turn-max-bandwidth", "0"}, rate: turn.NoBandwidthLimit},
		{args: []string{"-turn-max-bandwidth", "2MiB", "-turn-bandwidth-burst", "64KiB"}, rate: 2 << 20, burst: 64 << 10},
		{args: []string{"-turn-max-bandwidth", "500kb"}, rate: 500_000, burst: 125_000},
		{args: []string{"-turn-max-bandwidth", "65536", "-turn-bandwidth-burst", "auto"}, rate: 65536, burst: 16384},
		{env: map[string]string{"HOSTRELAY_TURN_MAX_BANDWIDTH": "3 MiB", "HOSTRELAY_TURN_BANDWIDTH_BURST": "1600"},
			rate: 3 << 20, burst: 1600},
		// Flags override the environment.
		{args: []string{"-turn-max-bandwidth", "1GiB"}, env: map[string]string{"HOSTRELAY_TURN_MAX_BANDWIDTH": "off"},
			rate: 1 << 30, burst: 1 << 28},
	} {
		cfg, err := LoadConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Errorf("%v %v: %v", tc.args, tc.env, err)
			continue
		}
		if rate, burst := cfg.TURN.MaxBandwidth, bandwidthBurst(cfg.TURN); rate != tc.rate || burst != tc.burst {
			t.Errorf("%v %v: %d B/s burst %d, want %d burst %d", tc.args, tc.env, rate, burst, tc.rate, tc.burst)
		}
	}

	for _, bad := range [][]string{
		{"-turn-max-bandwidth", "-1"},
		{"-turn-max-bandwidth", "1.5MiB"},
		{"-turn-max-bandwidth", "1Mbit"},
		{"-turn-max-bandwidth", "MiB"},
		{"-turn-max-bandwidth", "auto"}, // the rate has no derived value
		{"-turn-max-bandwidth", "1000"}, // under 16 KiB/s: a unit mistake
		{"-turn-max-bandwidth", "2TiB"}, // over turn's bound
		{"-turn-max-bandwidth", "9999999999999TiB"},
		{"-turn-bandwidth-burst", "1000"}, // under one full-size packet
		{"-turn-bandwidth-burst", "2GiB"},
		{"-turn-bandwidth-burst", "off"},
	} {
		_, err := LoadConfig(bad, noEnv, io.Discard)
		if err == nil {
			t.Errorf("%v accepted", bad)
		} else if !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: error does not name the flag: %v", bad, err)
		}
	}
	if _, err := LoadConfig(nil, func(k string) string {
		if k == "HOSTRELAY_TURN_MAX_BANDWIDTH" {
			return "fast"
		}
		return ""
	}, io.Discard); err == nil || !strings.Contains(err.Error(), "HOSTRELAY_TURN_MAX_BANDWIDTH") {
		t.Errorf("bad env not named: %v", err)
	}

	// -h shows the default in the unit it was given in, and the sentinels
	// by name.
	var usage strings.Builder
	_, _ = LoadConfig([]string{"-h"}, noEnv, &usage)
	for _, want := range []string{"(default 1MiB)", "(default auto)", "HOSTRELAY_", "-config"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("usage does not show %q:\n%s", want, usage.String())
		}
	}
}

// TestConfigPrecedence: a flag beats its variable, a variable the file, the
// file the default, setting by setting; -config beats HOSTRELAY_CONFIG.
func TestConfigPrecedence(t *testing.T) {
	file := writeFile(t, `
turn:
  credential_ttl: 2h       # the file alone
lobby:
  max_rooms: 11            # the file, then the environment
  seat_grace: 3s           # the file, the environment, then a flag
`)
	env := map[string]string{"HOSTRELAY_CONFIG": file, "HOSTRELAY_MAX_ROOMS": "12", "HOSTRELAY_SEAT_GRACE": "4s"}
	cfg, err := LoadConfig([]string{"-seat-grace", "5s"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	if cfg.TURN.CredentialTTL != 2*time.Hour || cfg.Lobby.MaxRooms != 12 || cfg.Lobby.Grace != 5*time.Second ||
		cfg.Lobby.JoinsPerMinute != def.Lobby.JoinsPerMinute {
		t.Fatalf("ttl %v (want the file's 2h), rooms %d (the environment's 12), grace %v (the flag's 5s), joins %d (the default %d)",
			cfg.TURN.CredentialTTL, cfg.Lobby.MaxRooms, cfg.Lobby.Grace, cfg.Lobby.JoinsPerMinute, def.Lobby.JoinsPerMinute)
	}

	// -config names another file than the environment: the flag's is read,
	// and the environment's not at all.
	other := writeFile(t, "turn:\n  credential_ttl: 3h\n")
	env["HOSTRELAY_CONFIG"] = writeFile(t, "nonsense: [")
	cfg, err = LoadConfig([]string{"-config", other}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || cfg.TURN.CredentialTTL != 3*time.Hour {
		t.Fatalf("-config over HOSTRELAY_CONFIG: %v %v", cfg.TURN.CredentialTTL, err)
	}

	// A flag given twice: the last wins, as with the flag package.
	cfg, err = LoadConfig([]string{"-max-rooms", "7", "-max-rooms", "8"}, noEnv, io.Discard)
	if err != nil || cfg.Lobby.MaxRooms != 8 {
		t.Fatalf("-max-rooms 7 -max-rooms 8: %d %v", cfg.Lobby.MaxRooms, err)
	}
}

// TestConfigSentinels: each field that takes auto or off takes it (and the
// 0 that meant it before), takes its lowest count and refuses one under
// it, refuses the other word, and a Config built in Go with a 0 or the
// wrong sentinel is refused by name.
func TestConfigSentinels(t *testing.T) {
	for _, tc := range []struct {
		flag, key   string
		word        string
		field       func(*Config) *int64
		lowest      string // the smallest value taken
		under       string // one under it
		highest     string // the largest, if bounded
		over        string
		otherWord   string
		sentinelVal int64
	}{
		{flag: "max-http-conns", key: "http.max_conns", word: "auto", lowest: "2", under: "1", otherWord: "off", sentinelVal: Auto},
		{flag: "turn-max-allocations-total", key: "turn.max_allocations", word: "auto", lowest: "2", under: "1", otherWord: "off", sentinelVal: Auto},
		{flag: "turn-tcp-max-conns", key: "turn.tcp_max_conns", word: "auto", lowest: "1", under: "-1", otherWord: "off", sentinelVal: Auto},
		{flag: "turn-max-bandwidth", key: "turn.max_bandwidth", word: "off", lowest: "16KiB", under: "16383",
			highest: "1TiB", over: "1099511627777", otherWord: "auto", sentinelVal: turn.NoBandwidthLimit},
		{flag: "turn-bandwidth-burst", key: "turn.bandwidth_burst", word: "auto", lowest: "1600", under: "1599",
			highest: "1GiB", over: "1073741825", otherWord: "off", sentinelVal: Auto},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			value := func(c Config) string {
				for _, o := range c.options() {
					if o.flag == tc.flag {
						return o.value.String()
					}
				}
				t.Fatalf("no option -%s", tc.flag)
				return ""
			}
			for _, ok := range []string{tc.word, strings.ToUpper(tc.word), "0", tc.lowest, tc.highest} {
				if ok == "" {
					continue
				}
				cfg, err := LoadConfig([]string{"-" + tc.flag, ok}, noEnv, io.Discard)
				if err != nil {
					t.Errorf("-%s %s refused: %v", tc.flag, ok, err)
					continue
				}
				want := ok
				if ok == "0" || strings.EqualFold(ok, tc.word) {
					want = tc.word // the legacy 0 reads back as the word
				}
				if got := value(cfg); got != want {
					t.Errorf("-%s %s reads back as %q", tc.flag, ok, got)
				}
			}
			for _, bad := range []string{tc.under, tc.over, tc.otherWord} {
				if bad == "" {
					continue
				}
				_, err := LoadConfig([]string{"-" + tc.flag, bad}, noEnv, io.Discard)
				if err == nil || !strings.Contains(err.Error(), "-"+tc.flag) {
					t.Errorf("-%s %s: %v, want refused naming the flag", tc.flag, bad, err)
				}
			}
			// The same word in the file.
			cfg, err := LoadConfig([]string{"-config", writeFile(t, yamlOf(tc.key, tc.word))}, noEnv, io.Discard)
			if err != nil || value(cfg) != tc.word {
				t.Errorf("%s: %s in the file: %q %v", tc.key, tc.word, value(cfg), err)
			}
		})
	}

	// In Go, 0 is neither auto nor off, and a negative number that is not
	// the field's sentinel is refused.
	for name, set := range map[string]func(*Config){
		"-max-http-conns (http.max_conns) 0":                    func(c *Config) { c.HTTP.MaxConns = 0 },
		"-turn-max-allocations-total (turn.max_allocations) -2": func(c *Config) { c.TURN.MaxAllocations = -2 },
		"-turn-tcp-max-conns (turn.tcp_max_conns) 0":            func(c *Config) { c.TURN.MaxTCPConns = 0 },
		"-turn-max-bandwidth (turn.max_bandwidth) 0":            func(c *Config) { c.TURN.MaxBandwidth = 0 },
		"-turn-max-bandwidth (turn.max_bandwidth) -2":           func(c *Config) { c.TURN.MaxBandwidth = -2 },
		"-turn-bandwidth-burst (turn.bandwidth_burst) -2":       func(c *Config) { c.TURN.BandwidthBurst = -2 },
		"-turn-bandwidth-burst (turn.bandwidth_burst) 0":        func(c *Config) { c.TURN.BandwidthBurst = 0 },
	} {
		cfg := DefaultConfig()
		set(&cfg)
		if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// yamlOf is a file setting one key (section.name) to v.
func yamlOf(key, v string) string {
	section, name, _ := strings.Cut(key, ".")
	return section + ":\n  " + name + ": " + v + "\n"
}

// TestConfigFileErrors: an unknown key, a value of the wrong shape and a
// value that does not parse are refused, naming the key, its line and (for
// a known key) the flag.
func TestConfigFileErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"turn:\n  max_bandwith: 1MiB\n", []string{"hostrelay.yaml:2:", "unknown key turn.max_bandwith"}}, //nolint:misspell // the typo is the test
		{"http:\n  addr: \":8080\"\ntracing:\n  addr: \":9090\"\n", []string{":3:", "unknown key tracing"}},
		{"max_rooms: 5\n", []string{"unknown key max_rooms"}}, // a lobby key outside its section
		{"turn:\n  max_bandwidth: fast\n", []string{":2:", "turn.max_bandwidth (-turn-max-bandwidth)", `"fast"`}},
		{"turn:\n  max_bandwidth: [1, 2]\n", []string{"turn.max_bandwidth (-turn-max-bandwidth): want a single value"}},
		{"lobby: 5\n", []string{":1:", "lobby: want a mapping"}},
		{"- http\n", []string{"want a mapping of sections"}},
		{"log:\n  level: info\n  level: debug\n", []string{":3:", "log.level: given twice"}},
		{"turn: {secret: [", []string{"hostrelay.yaml"}},
	} {
		_, err := LoadConfig([]string{"-config", writeFile(t, tc.file)}, noEnv, io.Discard)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: %v, want %q", tc.file, err, want)
			}
		}
	}
	if _, err := LoadConfig([]string{"-config", filepath.Join(t.TempDir(), "missing.yaml")}, noEnv, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "-config") {
		t.Errorf("missing file: %v", err)
	}

	// What the file may say: lists as sequences or comma-separated, an
	// empty value, comments, an empty file.
	cfg, err := LoadConfig([]string{"-config", writeFile(t, `
# comments are fine
lobby:
  allowed_origins: [game.example, "*.game.example"]
http:
  trusted_proxies: 10.0.0.0/8, 192.0.2.0/24
debug:
  addr:
`)}, noEnv, io.Discard)
	if err != nil || !reflect.DeepEqual(cfg.Lobby.OriginPatterns, []string{"game.example", "*.game.example"}) ||
		len(cfg.HTTP.TrustedProxies) != 2 || cfg.Debug.Addr != "" {
		t.Fatalf("lists: %v %v %v", cfg.Lobby.OriginPatterns, cfg.HTTP.TrustedProxies, err)
	}
	if cfg, err := LoadConfig([]string{"-config", writeFile(t, "")}, noEnv, io.Discard); err != nil ||
		!reflect.DeepEqual(cfg, DefaultConfig()) {
		t.Fatalf("empty file: %v", err)
	}
}

// TestConfigValidationNamesFlagAndKey: a value that parses but is out of
// range is refused by the one validation, which names the flag and the
// YAML key however it was given, and never prints a secret.
func TestConfigValidationNamesFlagAndKey(t *testing.T) {
	const want = "-turn-ttl (turn.credential_ttl) 1s: must be between 10s and 24h"
	for name, load := range map[string]func() error{
		"flag": func() error { _, err := LoadConfig([]string{"-turn-ttl", "1s"}, noEnv, io.Discard); return err },
		"env": func() error {
			_, err := LoadConfig(nil, func(k string) string { return map[string]string{"HOSTRELAY_TURN_TTL": "1s"}[k] }, io.Discard)
			return err
		},
		"file": func() error {
			_, err := LoadConfig([]string{"-config", writeFile(t, yamlOf("turn.credential_ttl", "1s"))}, noEnv, io.Discard)
			return err
		},
		"go": func() error {
			cfg := DefaultConfig()
			cfg.TURN.CredentialTTL = time.Second
			_, err := New(t.Context(), cfg, slog.New(slog.DiscardHandler))
			return err
		},
	} {
		if err := load(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}

	// Every failing option is named, not just the first.
	_, err := LoadConfig([]string{"-max-rooms", "0", "-log-format", "xml", "-http", "nope"}, noEnv, io.Discard)
	for _, want := range []string{"-max-rooms (lobby.max_rooms) 0", "-log-format (log.format) xml", "-http (http.addr) nope"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q", err, want)
		}
	}

	const short = "short-secret"
	_, err = LoadConfig([]string{"-turn-secret", short, "-api-keys", "k1,k2"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-turn-secret (turn.secret) (hidden)") ||
		!strings.Contains(err.Error(), "-api-keys (http.api_keys) (hidden)") || strings.Contains(err.Error(), short) ||
		strings.Contains(err.Error(), "k1") {
		t.Errorf("short secrets: %v", err)
	}
}

// TestDefaultConfigServes: an embedder's DefaultConfig, with only its
// addresses changed, validates and serves, with a TURN secret made up at
// start (and said so).
func TestDefaultConfigServes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HTTP.Addr, cfg.TURN.UDPAddr, cfg.TURN.TCPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	var logs logBuffer
	s, err := New(t.Context(), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	if len(s.cfg.TURN.Secret) < 16 || len(cfg.TURN.Secret) != 0 {
		t.Fatalf("secret: server's %d bytes, caller's %q", len(s.cfg.TURN.Secret), cfg.TURN.Secret)
	}
	resp, err := http.Get("http://" + s.Addrs().HTTP + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %s", resp.Status)
	}
	if !strings.Contains(logs.String(), "no TURN secret configured") {
		t.Fatalf("no warning about the made-up secret:\n%s", logs.String())
	}
}

// -turn-gso is on by default and takes on/off (true/false, 1/0) from a
// flag, a variable or the file; anything else is refused by name.
func TestConfigTURNGSO(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		file string
		want bool
	}{
		{want: true},
		{args: []string{"-turn-gso", "off"}, want: false},
		{args: []string{"-turn-gso=false"}, want: false},
		{args: []string{"-turn-gso", "ON"}, want: true},
		{env: map[string]string{"HOSTRELAY_TURN_GSO": "0"}, want: false},
		{file: "turn:\n  gso: off\n", want: false},
		{file: "turn:\n  gso: off\n", args: []string{"-turn-gso", "1"}, want: true},
	} {
		args := tc.args
		if tc.file != "" {
			args = append([]string{"-config", writeFile(t, tc.file)}, args...)
		}
		cfg, err := LoadConfig(args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Fatalf("%v %v %q: %v", tc.args, tc.env, tc.file, err)
		}
		if gso := !cfg.TURN.DisableUDPGSO; gso != tc.want {
			t.Errorf("%v %v %q: GSO %v, want %v", tc.args, tc.env, tc.file, gso, tc.want)
		}
	}
	for _, bad := range []string{"yes", "", "2"} {
		_, err := LoadConfig([]string{"-turn-gso", bad}, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "turn-gso") || !strings.Contains(err.Error(), "on or off") {
			t.Errorf("-turn-gso %q: %v, want an error naming the flag and its values", bad, err)
		}
	}
}

// TestConfigTURNRelayPorts: -turn-relay-ports reads lo-hi from a flag, a
// variable or the file into turn.Config.RelayPorts; empty is the kernel's
// range; anything else is refused naming the option and what is wrong.
func TestConfigTURNRelayPorts(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		file string
		want turn.PortRange
	}{
		{want: turn.PortRange{}},
		{args: []string{"-turn-relay-ports", "50000-50999"}, want: turn.PortRange{Min: 50000, Max: 50999}},
		{args: []string{"-turn-relay-ports", " 1024 - 65535 "}, want: turn.PortRange{Min: 1024, Max: 65535}},
		{args: []string{"-turn-relay-ports", "40000-40000"}, want: turn.PortRange{Min: 40000, Max: 40000}},
		{env: map[string]string{"HOSTRELAY_TURN_RELAY_PORTS": "50000-50099"}, want: turn.PortRange{Min: 50000, Max: 50099}},
		{file: "turn:\n  relay_ports: 50000-50099\n", want: turn.PortRange{Min: 50000, Max: 50099}},
		{file: "turn:\n  relay_ports: 50000-50099\n", args: []string{"-turn-relay-ports", ""}, want: turn.PortRange{}},
	} {
		args := tc.args
		if tc.file != "" {
			args = append([]string{"-config", writeFile(t, tc.file)}, args...)
		}
		cfg, err := LoadConfig(args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Fatalf("%v %v %q: %v", tc.args, tc.env, tc.file, err)
		}
		if cfg.TURN.RelayPorts != tc.want {
			t.Errorf("%v %v %q: relay ports %v, want %v", tc.args, tc.env, tc.file, cfg.TURN.RelayPorts, tc.want)
		}
	}
	for bad, why := range map[string]string{
		"50000":       "want a range of ports like 50000-50999",
		"50000-":      "want a range of ports like 50000-50999",
		"a-b":         "want a range of ports like 50000-50999",
		"0-0":         "want a range of ports like 50000-50999",
		"50000-65536": "want a range of ports like 50000-50999",
		"80-1080":     "ports under 1024 need privileges",
		"50999-50000": "the first port must not be above the last",
	} {
		_, err := LoadConfig([]string{"-turn-relay-ports", bad}, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-turn-relay-ports") || !strings.Contains(err.Error(), why) {
			t.Errorf("-turn-relay-ports %q: %v, want an error naming the flag and %q", bad, err, why)
		}
	}
}
