package release_test

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// distDirs are the GoReleaser output folders looked in: make release-host
// writes dist/host (make test runs it), make release writes dist.
var distDirs = []string{"dist/host", "dist"}

// artifact is an entry of GoReleaser's dist/artifacts.json.
type artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"` // relative to the repository's root
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
}

// metadata is GoReleaser's dist/metadata.json.
type metadata struct {
	ProjectName string `json:"project_name"`
	Version     string `json:"version"`
	Commit      string `json:"commit"`
}

// TestHostArchive unpacks this platform's archive from each release found,
// checks it against SHA256SUMS, and runs the binary in it: -version must
// print the version the release was made with, and the server must start on
// loopback, answer /healthz and serve the embedded web app.
func TestHostArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a release's binary")
	}
	root := repoRoot(t)
	found := false
	for _, dir := range distDirs {
		if _, err := os.Stat(filepath.Join(root, dir, "artifacts.json")); err != nil {
			continue
		}
		found = true
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) { checkHostArchive(t, root, dir) })
	}
	if !found {
		t.Skip("SKIP: no release in dist/host or dist: `make release-host` (part of make test) or `make release VERSION=x.y.z` makes one")
	}
}

func checkHostArchive(t *testing.T, root, dir string) {
	var meta metadata
	readJSON(t, filepath.Join(root, dir, "metadata.json"), &meta)
	var artifacts []artifact
	readJSON(t, filepath.Join(root, dir, "artifacts.json"), &artifacts)
	if meta.Version == "" {
		t.Fatalf("%s/metadata.json has no version", dir)
	}

	var archive *artifact
	for i, a := range artifacts {
		if a.Type == "Archive" && a.Goos == runtime.GOOS && a.Goarch == runtime.GOARCH {
			archive = &artifacts[i]
		}
	}
	if archive == nil {
		t.Fatalf("%s: no archive for %s/%s in artifacts.json", dir, runtime.GOOS, runtime.GOARCH)
	}
	path := filepath.Join(root, archive.Path)
	checkSum(t, filepath.Join(root, dir, "SHA256SUMS"), archive.Name, path)

	// The archive holds one folder named as the archive, with the binary,
	// README.md and LICENSE in it.
	unpacked := t.TempDir()
	unpack(t, path, unpacked)
	top := strings.TrimSuffix(strings.TrimSuffix(archive.Name, ".zip"), ".tar.gz")
	binary := filepath.Join(unpacked, top, "hostrelay")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	for _, f := range []string{binary, filepath.Join(unpacked, top, "README.md"), filepath.Join(unpacked, top, "LICENSE")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", archive.Name, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Static; stamped with the version (-version below) and a real commit.
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(meta.Commit) {
		t.Errorf("%s/metadata.json: commit %q: GoReleaser read no commit from git", dir, meta.Commit)
	}
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("built with CGO_ENABLED=%q -trimpath=%q: want 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
	}

	version, err := exec.CommandContext(t.Context(), binary, "-version").CombinedOutput()
	if err != nil {
		t.Fatalf("hostrelay -version: %v\n%s", err, version)
	}
	if !containsWord(string(version), meta.Version) {
		t.Errorf("hostrelay -version printed %q: want the release's version %s", strings.TrimSpace(string(version)), meta.Version)
	}

	addr := startServer(t, binary, unpacked)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(body)
	}
	if resp, body := get("/healthz"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz: %s %s", resp.Status, body)
	}
	// The web app is embedded: the lobby page is Vite's build, not a placeholder.
	if resp, body := get("/"); resp.StatusCode != http.StatusOK || !strings.Contains(body, `<script type="module"`) {
		t.Errorf("GET /: %s, want the built lobby page; got:\n%.300s", resp.Status, body)
	}
}

// startServer runs the binary on loopback ports the kernel picks and returns
// its HTTP address, read from its "listening" log line. Cleanup stops it.
func startServer(t *testing.T, binary, dir string) string {
	t.Helper()
	cmd := exec.Command(binary, "-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-public-ip", "127.0.0.1", "-log-format", "json", "-turn-secret", "release-test-secret-0123456789")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	addrs := make(chan string, 1)
	var logs strings.Builder
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			var line struct {
				Msg, Component, HTTP string
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" && line.Component == "server" {
				addrs <- line.HTTP
			}
		}
	}()
	go func() { <-logged; exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// Our child, not yet reaped unless it already exited: its PID is its own.
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil && !t.Failed() {
				t.Errorf("hostrelay exited with %v after the interrupt:\n%s", err, logs.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("hostrelay did not exit within 20 s of the interrupt, killed: %v", <-exited)
		}
	})
	select {
	case addr := <-addrs:
		return addr
	case err := <-exited:
		exited <- err // for Cleanup
		t.Fatalf("hostrelay exited before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatalf("hostrelay logged no \"listening\" line within 30 s")
	}
	return ""
}

// checkSum checks that sums (a SHA256SUMS file) lists name with path's hash.
func checkSum(t *testing.T, sums, name, path string) {
	t.Helper()
	b, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	want := hex.EncodeToString(h.Sum(nil)) + "  " + name
	for _, line := range strings.Split(string(b), "\n") {
		if line == want {
			return
		}
	}
	t.Errorf("%s has no line %q", sums, want)
}

// unpack extracts a .tar.gz or .zip into dir, refusing entries outside it.
func unpack(t *testing.T, archive, dir string) {
	t.Helper()
	write := func(name string, mode fs.FileMode, r io.Reader) {
		target := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			t.Fatalf("%s: entry %q is outside the archive's folder", archive, name)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm()&0o700)
		if err != nil {
			t.Fatal(err)
		}
		// An archive of ours, but a cap all the same: the binary is ~20 MB.
		if _, err := io.Copy(f, io.LimitReader(r, 1<<30)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			write(f.Name, f.Mode(), r)
			r.Close()
		}
		return
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if h.Typeflag == tar.TypeReg {
			write(h.Name, h.FileInfo().Mode(), tr)
		}
	}
}

// containsWord reports whether s has word between blanks, parentheses or its ends.
func containsWord(s, word string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '(' || r == ')' }) {
		if f == word || f == "v"+word {
			return true
		}
	}
	return false
}

// TestReleaseImageFindsBinaries: deploy/release.Dockerfile copies each Linux
// binary of the release by a pattern (its build context is dist/); for every
// Linux binary a release holds, the pattern must name that binary and no
// other. No Docker engine needed.
func TestReleaseImageFindsBinaries(t *testing.T) {
	root := repoRoot(t)
	pattern := ""
	b, err := os.ReadFile(filepath.Join(root, "deploy", "release.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "COPY" && f[2] == "/hostrelay" {
			pattern = f[1]
		}
	}
	if pattern == "" {
		t.Fatal("deploy/release.Dockerfile: no `COPY <pattern> /hostrelay` line")
	}
	found := false
	for _, dir := range distDirs {
		var artifacts []artifact
		if _, err := os.Stat(filepath.Join(root, dir, "artifacts.json")); err != nil {
			continue
		}
		readJSON(t, filepath.Join(root, dir, "artifacts.json"), &artifacts)
		for _, a := range artifacts {
			if a.Type != "Binary" || a.Goos != "linux" {
				continue
			}
			found = true
			glob := strings.NewReplacer("${TARGETOS}", a.Goos, "${TARGETARCH}", a.Goarch).Replace(pattern)
			matches, err := filepath.Glob(filepath.Join(root, dir, filepath.FromSlash(glob)))
			if err != nil {
				t.Fatal(err)
			}
			if len(matches) != 1 || matches[0] != filepath.Join(root, a.Path) {
				t.Errorf("%s for linux/%s matches %v in %s: want %s alone", pattern, a.Goarch, matches, dir, a.Path)
			}
		}
	}
	if !found {
		t.Skip("SKIP: no release with a Linux binary in dist/host or dist")
	}
}
