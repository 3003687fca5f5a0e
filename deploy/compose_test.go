package deploy_test

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
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
	if svc.NetworkMode != "host" {
		t.Errorf("network_mode %q: TURN's relay ports are random, so host networking is needed", svc.NetworkMode)
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
}
