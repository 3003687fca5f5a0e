package deploy_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hostrelay/hostrelay/server"
)

// TestClusterComposeConfigLoads: every node of compose.cluster.yaml starts
// with its settings (every variable one hostrelay reads), joins NATS, and
// no two nodes share an id or a port; NATS runs with JetStream.
func TestClusterComposeConfigLoads(t *testing.T) {
	raw, err := os.ReadFile("compose.cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			NetworkMode string            `yaml:"network_mode"`
			Build       struct {
				Context string `yaml:"context"`
			} `yaml:"build"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.cluster.yaml: %v", err)
	}
	nats, ok := c.Services["nats"]
	if !ok || !strings.Contains(strings.Join(nats.Command, " "), "-js") {
		t.Fatalf("nats service %+v: want one running with JetStream (-js)", nats)
	}
	ids, ports := map[string]string{}, map[string]string{}
	nodes := 0
	for name, svc := range c.Services {
		if !strings.HasPrefix(name, "hostrelay-") {
			continue
		}
		nodes++
		if svc.Build.Context != ".." || svc.NetworkMode != "host" {
			t.Errorf("%s: build %q, network %q: want .. and host (the anchor's)", name, svc.Build.Context, svc.NetworkMode)
		}
		env := map[string]string{}
		for k, v := range svc.Environment {
			env[k] = composeDefault.ReplaceAllString(v, "$1")
		}
		asked := map[string]bool{}
		cfg, err := server.LoadConfig(svc.Command, func(n string) string { asked[n] = true; return env[n] }, io.Discard)
		if err != nil {
			t.Fatalf("%s would not start: %v", name, err)
		}
		for k := range env {
			if !asked[k] {
				t.Errorf("%s sets %s, which hostrelay does not read", name, k)
			}
		}
		if cfg.Cluster.NATS == "" || cfg.Cluster.NodeID == "" || cfg.Cluster.Region == "" {
			t.Errorf("%s: nats %q, node %q, region %q: every node joins with an id and a region", name,
				cfg.Cluster.NATS, cfg.Cluster.NodeID, cfg.Cluster.Region)
		}
		if other, dup := ids[cfg.Cluster.NodeID]; dup {
			t.Errorf("%s and %s share node id %q", name, other, cfg.Cluster.NodeID)
		}
		ids[cfg.Cluster.NodeID] = name
		for _, addr := range []string{"tcp" + cfg.HTTP.Addr, "udp" + cfg.TURN.UDPAddr, "tcp" + cfg.TURN.TCPAddr} {
			if other, dup := ports[addr]; dup {
				t.Errorf("%s and %s both listen on %s (host networking)", name, other, addr)
			}
			ports[addr] = name
		}
	}
	if nodes != 3 {
		t.Errorf("%d hostrelay nodes, want 3", nodes)
	}
}
