// Package deploy_test checks the container image: that the Dockerfile's
// build makes a static binary (what distroless/static runs), and, where a
// Docker engine is present, that the image builds, runs as non-root and
// serves.
package deploy_test

import (
	"bufio"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// repoRoot is the module root: this test runs in deploy/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goBuildLine is the Dockerfile's `RUN ... go build ...` of the server, as
// environment assignments and arguments, so the test builds exactly what
// the image does.
func goBuildLine(t *testing.T, root string) (env []string, args []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "RUN ") || !strings.Contains(line, " go build ") {
			continue
		}
		fields := shellFields(strings.TrimPrefix(line, "RUN "))
		for len(fields) > 0 && strings.Contains(fields[0], "=") {
			env = append(env, fields[0])
			fields = fields[1:]
		}
		if len(fields) < 2 || fields[0] != "go" || fields[1] != "build" {
			t.Fatalf("Dockerfile: cannot read the go build line %q", line)
		}
		return env, fields[2:]
	}
	t.Fatal("Dockerfile: no RUN ... go build line")
	return nil, nil
}

// The final stage is distroless/static: no libc, no loader. A binary that
// needs either (cgo on, as the net package uses by default) would not start.
func TestImageBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	root := repoRoot(t)
	env, args := goBuildLine(t, root)
	out := filepath.Join(t.TempDir(), "hostrelay")
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			args[i+1] = out
		}
	}
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", args, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary asks for a dynamic loader: it would not run on distroless/static (build env %v)", env)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil {
		t.Fatal(err)
	} else if len(libs) > 0 {
		t.Errorf("the binary links %v dynamically: it would not run on distroless/static", libs)
	}
}

// The image itself, when this machine has a Docker engine: it builds, its
// user is not root, and the server in it answers /healthz.
func TestImageBuildsAndServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a container image")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("SKIP: docker is not on PATH; the image build test needs a Docker engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, "docker", "info").CombinedOutput(); err != nil {
		t.Skipf("SKIP: docker is installed but its engine does not answer (%v): %s", err, lastLine(b))
	}
	root := repoRoot(t)
	tag := fmt.Sprintf("hostrelay-test:%d", time.Now().UnixNano())
	run(ctx, t, root, "docker", "build", "-t", tag, ".")
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", tag).Run() })

	if user := strings.TrimSpace(run(ctx, t, root, "docker", "image", "inspect", "-f", "{{.Config.User}}", tag)); user == "" || strings.HasPrefix(user, "root") || strings.HasPrefix(user, "0") {
		t.Errorf("the image runs as %q: want a non-root user", user)
	}

	httpAddr := freeAddr(t, "tcp")
	turnAddr := freeAddr(t, "udp")
	id := strings.TrimSpace(run(ctx, t, root, "docker", "run", "-d", "--rm", "--network", "host", tag,
		"-http", httpAddr, "-turn-udp", turnAddr, "-turn-tcp", turnAddr))
	t.Cleanup(func() { _ = exec.Command("docker", "stop", id).Run() })

	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + httpAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command("docker", "logs", id).CombinedOutput()
			t.Fatalf("the container never answered /healthz on %s: %v\n%s", httpAddr, err, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func run(ctx context.Context, t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
	return string(b)
}

// freeAddr is a loopback address with a port free right now (the container
// shares the host's network, so the test picks the ports it will dial).
func freeAddr(t *testing.T, network string) string {
	t.Helper()
	switch network {
	case "udp":
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().String()
	default:
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
}

// lastLine is the last line of a command's output: docker info ends with why the engine cannot be reached.
func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// shellFields splits a shell command line on blanks outside single quotes,
// dropping the quotes, as sh does for the Dockerfile's RUN line.
func shellFields(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, inField := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inField = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inField {
				out = append(out, cur.String())
				cur.Reset()
				inField = false
			}
		default:
			cur.WriteRune(r)
			inField = true
		}
	}
	if inField {
		out = append(out, cur.String())
	}
	return out
}
