package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSmoke runs the whole rig for 15 seconds against a freshly built
// bin/hostrelay, so it keeps working: players join, traffic flows, samples
// are judged. No figure is asserted (the verdict is the soak's business).
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	bin := filepath.Join(t.TempDir(), "hostrelay")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/hostrelay/hostrelay/server/cmd/hostrelay")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg, err := parseConfig([]string{"-hostrelay", bin, "-duration", "15s", "-players", "4", "-room-size", "2",
		"-churn-every", "2s", "-warmup", "3s", "-sample", "500ms", "-drain-bound", "1s"}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	report := out.String()
	t.Log(report)
	m := regexp.MustCompile(`game packets: (\d+) sent, (\d+) received`).FindStringSubmatch(report)
	if m == nil {
		t.Fatal("no game packet line in the report")
	}
	if n, _ := strconv.Atoi(m[2]); n == 0 {
		t.Fatal("no game packet arrived")
	}
	for _, want := range []string{"== flatness", "server goroutines per player", "== drain", "server exit after SIGTERM"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report has no %q", want)
		}
	}
	if strings.Contains(report, "NOT JUDGED") {
		t.Error("the run was too short to judge")
	}
}
