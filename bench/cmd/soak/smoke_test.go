package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the test binary be the flooders' process, as the soak's
// binary is (startFloodProcess runs os.Executable with floodChildArg).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == floodChildArg {
		if err := runFloodChild(os.Args[2:], os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmoke runs the whole rig for 15 seconds against a freshly built
// bin/hostrelay, so it keeps working: players join, traffic flows, samples
// are judged. No figure is asserted (the verdict is the soak's business).
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	report := smokeRun(t, buildServer(t))
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

// TestSmokeFloods runs the rig with one attacker of each kind for the whole
// run: the flooders' process starts, floods, and reports back.
func TestSmokeFloods(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	report := smokeRun(t, buildServer(t), "-floods", "3", "-flood-phases", "1")
	for _, re := range []string{`pong flooders: [1-9]\d* connections past hello`, `endless-message flooders: [1-9]\d* connections past hello`,
		`burst readers: [1-9]\d* connections past hello`, `in a process of their own at nice 19, \d+\.\d\d cores`} {
		if !regexp.MustCompile(re).MatchString(report) {
			t.Errorf("the report has no %q", re)
		}
	}
	if strings.Contains(report, "got past hello: the flood did not happen") {
		t.Error("an attacker never got past hello")
	}
}

func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hostrelay")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/hostrelay/hostrelay/server/cmd/hostrelay")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// smokeRun runs the soak for 15 seconds with 4 players and returns its
// report.
func smokeRun(t *testing.T, bin string, extra ...string) string {
	t.Helper()
	args := append([]string{"-hostrelay", bin, "-duration", "15s", "-players", "4", "-room-size", "2",
		"-churn-every", "2s", "-warmup", "3s", "-sample", "500ms", "-drain-bound", "1s"}, extra...)
	cfg, err := parseConfig(args, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := run(t.Context(), cfg, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	return out.String()
}
