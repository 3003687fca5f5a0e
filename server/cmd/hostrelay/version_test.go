package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

const (
	testVersion = "1.2.3-test.1"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
)

// TestVersionFromLinker builds hostrelay as make build does, the version and
// commit set with -ldflags -X, and finds them in -version, in /healthz and
// in the "listening" log line; -licenses prints the notices of the Go
// packages inside.
func TestVersionFromLinker(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hostrelay")
	const pkg = "github.com/hostrelay/hostrelay/internal/buildinfo"
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin,
		"-ldflags", "-X "+pkg+".version="+testVersion+" -X "+pkg+".commit="+testCommit, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	out, err := exec.CommandContext(t.Context(), bin, "-version").Output()
	if err != nil {
		t.Fatalf("-version: %v", err)
	}
	want := "hostrelay " + testVersion + " (" + testCommit + ", " + runtime.Version() + ")\n"
	if string(out) != want {
		t.Fatalf("-version printed %q, want %q", out, want)
	}

	out, err = exec.CommandContext(t.Context(), bin, "-licenses").Output()
	if err != nil {
		t.Fatalf("-licenses: %v", err)
	}
	for _, want := range []string{"MIT License", "github.com/pion/turn/v4 v", "github.com/labstack/echo/v4 v", "Go standard library"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("-licenses: no %q in %.300s…", want, out)
		}
	}

	c := startProgram(t, bin, nil, 0)
	listening := c.waitLog("listening")
	if listening["version"] != testVersion || listening["commit"] != testCommit {
		t.Errorf("listening: version %v commit %v", listening["version"], listening["commit"])
	}
	addr, _ := listening["http"].(string)
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Version, Commit string }
	err = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if err != nil || h.Version != testVersion || h.Commit != testCommit {
		t.Errorf("/healthz: %+v %v", h, err)
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.exitCode(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestVersionWithoutLinker: a plain go build (no -ldflags) still prints a
// semantic version, never "(devel)": 0.0.0-dev with -buildvcs=false, else
// the version the go command derives from git (a tag, or a pseudo-version).
func TestVersionWithoutLinker(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hostrelay")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(t.Context(), bin, "--version").Output()
	if err != nil {
		t.Fatalf("--version: %v", err)
	}
	if !regexp.MustCompile(`^hostrelay \d+\.\d+\.\d+\S* \(\S+, go\S+\)\n$`).Match(out) || strings.Contains(string(out), "(devel)") {
		t.Fatalf("--version printed %q", out)
	}
}
