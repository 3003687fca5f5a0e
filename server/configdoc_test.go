package server

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestConfigDocsInStep: README.md's configuration table and
// deploy/hostrelay.example.yaml are what the options make. After changing
// server/options.go, run `go generate ./server`.
func TestConfigDocsInStep(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := readmeInStep(string(readme), ConfigTable()); err != nil {
		t.Error(err)
	}
	sample, err := os.ReadFile("../deploy/hostrelay.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sameText("deploy/hostrelay.example.yaml", string(sample), SampleConfig()); err != nil {
		t.Error(err)
	}

	// The sample file is the defaults: loading it changes nothing, and
	// every option is in it.
	cfg, err := LoadConfig([]string{"-config", "../deploy/hostrelay.example.yaml"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if def := DefaultConfig(); !reflect.DeepEqual(cfg, def) {
		t.Errorf("loading the sample changes the config:\n got %+v\nwant %+v", cfg, def)
	}
	for _, o := range cfg.options() {
		name := o.key[strings.LastIndex(o.key, ".")+1:]
		if !strings.Contains(string(sample), "\n"+strings.Repeat(" ", 2*strings.Count(o.key, "."))+name+": ") {
			t.Errorf("%s is not in the sample", o.key)
		}
	}
}

// TestConfigDocsDrift: the check above fails when either side changes: a
// row of the README edited by hand, an option's help or default changed,
// an option added (as a new section's would be) or removed.
func TestConfigDocsDrift(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := ConfigTable()
	if err := readmeInStep(string(readme), table); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(readme), "| `-http` | `http.addr` | `:8080` |", "| `-http` | `http.addr` | `:80` |", 1)
	if edited == string(readme) {
		t.Fatal("the -http row is not in the README")
	}
	if err := readmeInStep(edited, table); err == nil || !strings.Contains(err.Error(), "`:80`") {
		t.Errorf("hand-edited row: %v", err)
	}

	opts := func(change func(*Config, []*option) []*option) string {
		cfg := DefaultConfig()
		var path string
		return configTable(change(&cfg, append([]*option{configOption(&path)}, cfg.options()...)))
	}
	for name, change := range map[string]func(*Config, []*option) []*option{
		"help": func(_ *Config, o []*option) []*option { o[1].help += " (changed)"; return o },
		"default": func(c *Config, o []*option) []*option {
			c.Lobby.MaxRooms = 9
			return o
		},
		"added": func(c *Config, o []*option) []*option {
			b := binder{opts: &o}
			b.section("metrics").add("metrics-addr", "addr", strValue{&c.Debug.Addr}, "a new section's option")
			return o
		},
		"removed": func(_ *Config, o []*option) []*option { return o[:len(o)-1] },
	} {
		if err := readmeInStep(string(readme), opts(change)); err == nil {
			t.Errorf("%s option: the README is said to be in step", name)
		}
	}
	if _, err := spliceTable("no markers here", table); err == nil {
		t.Error("a README without markers was accepted")
	}
}

// readmeInStep compares the README with the one its table would make.
func readmeInStep(readme, table string) error {
	want, err := spliceTable(readme, table)
	if err != nil {
		return err
	}
	return sameText("README.md", readme, want)
}

// sameText reports the first line where got differs from want.
func sameText(name, got, want string) error {
	if got == want {
		return nil
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Errorf("%s is out of step with server/options.go (run `go generate ./server`): line %d\n got: %s\nwant: %s",
				name, i+1, gl, wl)
		}
	}
	return nil
}
