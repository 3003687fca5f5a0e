package deploy_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hostrelay/hostrelay/server"
)

type composeFile struct {
	Services map[string]struct {
		Build struct {
			Context string `yaml:"context"`
		} `yaml:"build"`
		NetworkMode string            `yaml:"network_mode"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Command     []string          `yaml:"command"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// composeDefault is compose's ${NAME:-default} with the variable unset.
var composeDefault = regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`)

// `docker compose up` must start a server that works as configured: every
// HOSTRELAY_* variable it sets is one hostrelay reads, the file it mounts
// loads, and the command line is valid. This runs the compose file's own
// settings through server.LoadConfig, no Docker needed.
func TestComposeConfigLoads(t *testing.T) {
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	svc, ok := c.Services["hostrelay"]
	if !ok {
		t.Fatal("compose.yaml: no hostrelay service")
	}
	if svc.Build.Context != ".." {
		t.Errorf("build context %q: want the repository root (..), where the Dockerfile is", svc.Build.Context)
	}
	if svc.NetworkMode == "host" {
		t.Errorf("network_mode host: compose.yaml is the bridge-network setup, with its ports published")
	}

	// Mounted files, by their path in the container, read from here.
	files := map[string]string{}
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 {
			t.Fatalf("volume %q: want host:container", v)
		}
		if !strings.HasPrefix(parts[0], ".") && !strings.HasPrefix(parts[0], "/") {
			// A named volume: compose refuses one it was not told of.
			if _, ok := c.Volumes[parts[0]]; !ok {
				t.Errorf("volume %q: %s is not declared under volumes:", v, parts[0])
			}
			continue
		}
		if _, err := os.Stat(parts[0]); err != nil {
			t.Errorf("volume %q: %v", v, err)
		}
		files[parts[1]] = parts[0]
	}
	args := append([]string(nil), svc.Command...)
	for i, a := range args {
		if i > 0 && args[i-1] == "-config" {
			local, ok := files[a]
			if !ok {
				t.Fatalf("-config %s is not a mounted file", a)
			}
			args[i] = filepath.Clean(local)
		}
	}

	env := map[string]string{}
	for k, v := range svc.Environment {
		env[k] = composeDefault.ReplaceAllString(v, "$1")
	}
	asked := map[string]bool{}
	cfg, err := server.LoadConfig(args, func(name string) string {
		asked[name] = true
		return env[name]
	}, io.Discard)
	if err != nil {
		t.Fatalf("hostrelay would not start with compose.yaml's settings: %v", err)
	}
	for k := range env {
		if !asked[k] {
			t.Errorf("compose.yaml sets %s, which hostrelay does not read", k)
		}
	}
	if cfg.Log.Format != "json" {
		t.Errorf("log format %q: the container logs JSON for a collector", cfg.Log.Format)
	}
	checkPublished(t, svc.Ports, cfg)
}

// checkPublished: on a bridge network, everything players reach is
// published on the same port of the host: HTTP, TURN over UDP and TCP, TURN
// over TLS, and the relay port range, which must be set (the kernel's
// ephemeral range is too wide to publish) and published whole.
func checkPublished(t *testing.T, specs []string, cfg server.Config) {
	t.Helper()
	published := map[string]bool{} // "3478/udp"
	for _, spec := range specs {
		hostPart, containerPart, ok := strings.Cut(spec, ":")
		containerPart, proto, _ := strings.Cut(containerPart, "/")
		if proto == "" {
			proto = "tcp"
		}
		if !ok || hostPart != containerPart {
			t.Errorf("ports %q: want host:container with the same ports on both sides (TURN hands out the container's port numbers)", spec)
			continue
		}
		lo, hi, isRange := strings.Cut(containerPart, "-")
		if !isRange {
			hi = lo
		}
		from, err1 := strconv.Atoi(lo)
		to, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || from > to {
			t.Errorf("ports %q: not a port or a range", spec)
			continue
		}
		for p := from; p <= to; p++ {
			published[fmt.Sprintf("%d/%s", p, proto)] = true
		}
	}
	port := func(addr string) string {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("listen address %q: %v", addr, err)
		}
		return p
	}
	want := []string{port(cfg.HTTP.Addr) + "/tcp", port(cfg.TURN.UDPAddr) + "/udp", port(cfg.TURN.TCPAddr) + "/tcp",
		port(cfg.TURN.TLSAddr) + "/tcp"}
	r := cfg.TURN.RelayPorts
	if r.Size() == 0 {
		t.Fatal("compose.yaml sets no -turn-relay-ports: the relay sockets would bind the kernel's ephemeral range, which is not published")
	}
	for p := int(r.Min); p <= int(r.Max); p++ {
		want = append(want, fmt.Sprintf("%d/udp", p))
	}
	for _, w := range want {
		if !published[w] {
			t.Errorf("%s is not published", w)
		}
		delete(published, w)
	}
	for p := range published {
		t.Errorf("%s is published but nothing listens there", p)
	}
}
