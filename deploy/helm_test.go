package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hostrelay/hostrelay/server"
)

const chart = "helm/hostrelay"

// helmBin is the helm the Makefile pins (HELM_VERSION), built into
// bin/tools by `make helm`, which `make test` runs first; HOSTRELAY_HELM
// names another. Without either the Helm tests skip, saying so.
func helmBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HOSTRELAY_HELM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("HOSTRELAY_HELM=%s: %v", p, err)
		}
		return p
	}
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^HELM_VERSION\s*:=\s*(\S+)`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no HELM_VERSION")
	}
	p, err := filepath.Abs(filepath.Join("..", "bin", "tools", "helm-"+string(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("helm %s not built (%s): run `make helm` (`make test` does) to check the Helm chart", m[1], p)
	}
	return p
}

func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), helmBin(t), args...)
	// No repositories, plugins or caches of the user's.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom struct {
		FieldRef *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type portSpec struct {
	Name          string `yaml:"name"`
	Port          int    `yaml:"port"`
	ContainerPort int    `yaml:"containerPort"`
	HostPort      int    `yaml:"hostPort"`
	NodePort      int    `yaml:"nodePort"`
	TargetPort    any    `yaml:"targetPort"`
	Protocol      string `yaml:"protocol"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

// manifest is what the tests read of a Deployment or a Service.
type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		// Service
		Type                  string     `yaml:"type"`
		ExternalTrafficPolicy string     `yaml:"externalTrafficPolicy"`
		Ports                 []portSpec `yaml:"ports"`
		// Deployment
		Strategy struct {
			Type string `yaml:"type"`
		} `yaml:"strategy"`
		Template struct {
			Metadata struct {
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				HostNetwork     bool `yaml:"hostNetwork"`
				SecurityContext struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
					RunAsUser    int  `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []struct {
					Args            []string   `yaml:"args"`
					Env             []envVar   `yaml:"env"`
					Ports           []portSpec `yaml:"ports"`
					ReadinessProbe  probe      `yaml:"readinessProbe"`
					LivenessProbe   probe      `yaml:"livenessProbe"`
					SecurityContext struct {
						AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
						ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
					} `yaml:"securityContext"`
					Resources struct {
						Requests map[string]string `yaml:"requests"`
						Limits   map[string]string `yaml:"limits"`
					} `yaml:"resources"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// render runs helm lint and helm template with sets, and returns the
// manifests by kind and name.
func render(t *testing.T, sets ...string) map[string]manifest {
	t.Helper()
	args := []string{}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	if out, err := helm(t, append([]string{"lint", "--strict", chart}, args...)...); err != nil {
		t.Fatalf("helm lint %v: %v\n%s", sets, err, out)
	}
	out, err := helm(t, append([]string{"template", "relay", chart}, args...)...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", sets, err, out)
	}
	docs := map[string]manifest{}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var m manifest
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("helm template %v: %v", sets, err)
		}
		if m.Kind != "" {
			docs[m.Kind+"/"+m.Metadata.Name] = m
		}
	}
	return docs
}

// portSet is "number/protocol" of each port, with the hostPort or nodePort
// it is published on, which must be the same number.
func portSet(t *testing.T, ports []portSpec, published func(portSpec) int) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	for _, p := range ports {
		n := p.ContainerPort
		if n == 0 {
			n = p.Port
		}
		pub := published(p)
		if pub != 0 && pub != n {
			t.Errorf("port %d/%s published as %d: TURN hands out the port it listens on, so the two must be equal", n, p.Protocol, pub)
		}
		set[fmt.Sprintf("%d/%s/%v", n, p.Protocol, pub != 0)] = true
	}
	return set
}

// loads runs the container's args and plain environment through the
// server's own config loader, as the pod would start; POD_IP and fields
// from the node and from Secrets are given stand-ins.
func loads(t *testing.T, m manifest) server.Config {
	t.Helper()
	c := m.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom.FieldRef != nil:
			env[e.Name] = "10.0.0.5"
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "a-secret-from-a-kubernetes-secret"
		default:
			env[e.Name] = e.Value
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.ReplaceAll(a, "$(POD_IP)", env["POD_IP"])
	}
	asked := map[string]bool{}
	cfg, err := server.LoadConfig(args, func(k string) string { asked[k] = true; return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("the pod would not start with args %q: %v", args, err)
	}
	for k := range env {
		if k != "POD_IP" && !asked[k] {
			t.Errorf("the chart sets %s, which hostrelay does not read", k)
		}
	}
	return cfg
}

func secretRef(m manifest, name string) (secret, key string) {
	for _, e := range m.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name && e.ValueFrom.SecretKeyRef != nil {
			return e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key
		}
	}
	return "", ""
}

// TestHelmChartDefaults: the chart as it comes lints and renders one pod
// that starts with its args (the relay range set), publishes TURN and
// every relay port on the node's address (hostPort) at the same numbers,
// is scraped by Prometheus on its metrics port, probes /healthz, runs as
// non-root, and reads no Secret until told one.
func TestHelmChartDefaults(t *testing.T) {
	docs := render(t)
	dep, ok := docs["Deployment/relay-hostrelay"]
	if !ok {
		t.Fatalf("no Deployment relay-hostrelay in %v", slices.Collect(maps.Keys(docs)))
	}
	cfg := loads(t, dep)
	if r := cfg.TURN.RelayPorts; r.Min != 50000 || r.Max != 50099 {
		t.Errorf("relay ports %v, want the values' 50000-50099", r)
	}
	if cfg.Log.Format != "json" || cfg.Metrics.Addr != "10.0.0.5:9090" || cfg.TURN.PublicIP.String() != "10.0.0.5" {
		t.Errorf("log format %q, metrics %q, public IP %v: want json, the pod IP's :9090, the node's IP",
			cfg.Log.Format, cfg.Metrics.Addr, cfg.TURN.PublicIP)
	}
	if dep.Spec.Strategy.Type != "Recreate" {
		t.Errorf("strategy %q: with the node's ports a new pod cannot start beside the old one: want Recreate", dep.Spec.Strategy.Type)
	}
	pod := dep.Spec.Template
	c := pod.Spec.Containers[0]
	ports := portSet(t, c.Ports, func(p portSpec) int { return p.HostPort })
	want := []string{"8080/TCP/false", "9090/TCP/false", "3478/UDP/true", "3478/TCP/true"}
	for p := 50000; p <= 50099; p++ {
		want = append(want, fmt.Sprintf("%d/UDP/true", p))
	}
	for _, w := range want {
		if !ports[w] {
			t.Errorf("container port %s (number/protocol/on the node) missing", w)
		}
		delete(ports, w)
	}
	for p := range ports {
		t.Errorf("container port %s not expected", p)
	}
	if a := pod.Metadata.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9090" || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("pod annotations %v: want Prometheus to scrape :9090/metrics", a)
	}
	if c.ReadinessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes %+v %+v: want /healthz", c.ReadinessProbe, c.LivenessProbe)
	}
	if sc := pod.Spec.SecurityContext; !sc.RunAsNonRoot || sc.RunAsUser == 0 ||
		c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation ||
		!c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("security context %+v %+v: want non-root, no privilege escalation, a read-only root", sc, c.SecurityContext)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("resources %+v: want a CPU request and a memory limit", c.Resources)
	}
	if s, _ := secretRef(dep, "HOSTRELAY_TURN_SECRET"); s != "" {
		t.Errorf("TURN secret read from %q without secrets.turnSecret.existingSecret", s)
	}
	if pod.Spec.HostNetwork {
		t.Error("host network by default: want hostPort")
	}
	svc, ok := docs["Service/relay-hostrelay"]
	if !ok || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != "http" {
		t.Errorf("HTTP Service %+v: want one port to the pod's http", svc.Spec)
	}
	if _, ok := docs["Service/relay-hostrelay-turn"]; ok {
		t.Error("a NodePort Service for TURN in hostPort mode")
	}
}

// TestHelmChartNodePortAndSecrets: exposure nodePort puts TURN and each
// relay port on a NodePort Service at the pod's own numbers (Local, so
// the client's address is kept), publishes nothing on the node from the
// pod, and the TURN secret and admin token come from the Secrets named.
func TestHelmChartNodePortAndSecrets(t *testing.T) {
	docs := render(t, "exposure=nodePort", "turn.port=30478", "relayPorts.min=31000", "relayPorts.max=31009",
		"publicIP=203.0.113.7", "publicHost=relay.example.com",
		"secrets.turnSecret.existingSecret=hostrelay-turn", "secrets.adminToken.existingSecret=hostrelay-admin",
		"secrets.adminToken.key=token", "metrics.enabled=false", "extraArgs={-max-rooms,500}")
	dep := docs["Deployment/relay-hostrelay"]
	cfg := loads(t, dep)
	if r := cfg.TURN.RelayPorts; r.Min != 31000 || r.Max != 31009 {
		t.Errorf("relay ports %v, want 31000-31009", r)
	}
	if cfg.TURN.UDPAddr != ":30478" || cfg.TURN.TCPAddr != ":30478" || cfg.TURN.PublicIP.String() != "203.0.113.7" ||
		cfg.ICE.PublicHost != "relay.example.com" || cfg.Lobby.MaxRooms != 500 || cfg.Metrics.Addr != "" {
		t.Errorf("TURN %s %s, public IP %v, host %q, max rooms %d, metrics %q: want the values'",
			cfg.TURN.UDPAddr, cfg.TURN.TCPAddr, cfg.TURN.PublicIP, cfg.ICE.PublicHost, cfg.Lobby.MaxRooms, cfg.Metrics.Addr)
	}
	if s, k := secretRef(dep, "HOSTRELAY_TURN_SECRET"); s != "hostrelay-turn" || k != "turn-secret" {
		t.Errorf("TURN secret from %q key %q, want hostrelay-turn, turn-secret", s, k)
	}
	if s, k := secretRef(dep, "HOSTRELAY_ADMIN_TOKEN"); s != "hostrelay-admin" || k != "token" {
		t.Errorf("admin token from %q key %q, want hostrelay-admin, token", s, k)
	}
	for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
		if p.HostPort != 0 {
			t.Errorf("hostPort %d in nodePort mode", p.HostPort)
		}
	}
	if _, ok := dep.Spec.Template.Metadata.Annotations["prometheus.io/scrape"]; ok {
		t.Error("scrape annotations with metrics off")
	}
	svc, ok := docs["Service/relay-hostrelay-turn"]
	if !ok || svc.Spec.Type != "NodePort" || svc.Spec.ExternalTrafficPolicy != "Local" {
		t.Fatalf("TURN Service %+v: want a NodePort Service with externalTrafficPolicy Local", svc.Spec)
	}
	ports := portSet(t, svc.Spec.Ports, func(p portSpec) int { return p.NodePort })
	want := []string{"30478/UDP/true", "30478/TCP/true"}
	for p := 31000; p <= 31009; p++ {
		want = append(want, fmt.Sprintf("%d/UDP/true", p))
	}
	for _, w := range want {
		if !ports[w] {
			t.Errorf("node port %s missing", w)
		}
		delete(ports, w)
	}
	for p := range ports {
		t.Errorf("node port %s not expected", p)
	}
}

// TestHelmChartHostNetwork: exposure hostNetwork runs the pod on the
// node's network and publishes nothing.
func TestHelmChartHostNetwork(t *testing.T) {
	dep := render(t, "exposure=hostNetwork")["Deployment/relay-hostrelay"]
	if !dep.Spec.Template.Spec.HostNetwork {
		t.Fatal("hostNetwork not set")
	}
	for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
		if p.HostPort != 0 {
			t.Errorf("hostPort %d with host networking", p.HostPort)
		}
	}
	loads(t, dep)
}

// TestHelmChartRefusesBadValues: values the chart cannot serve fail the
// render with a message that says what to change.
func TestHelmChartRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"exposure=nodePort"}, "outside the node port range 30000-32767"},
		{[]string{"relayPorts.min=80"}, "want 1024 <= min <= max <= 65535"},
		{[]string{"relayPorts.min=50100"}, "want 1024 <= min <= max <= 65535"},
		{[]string{"exposure=loadBalancer"}, "want hostPort, nodePort or hostNetwork"},
	} {
		args := []string{"template", "relay", chart}
		for _, s := range tc.sets {
			args = append(args, "--set", s)
		}
		out, err := helm(t, args...)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("helm template %v: %v\n%s\nwant an error saying %q", tc.sets, err, out, tc.want)
		}
	}
}
