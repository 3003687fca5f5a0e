package release_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"
)

var npmPackages = []string{"protocol", "sdk", "netcode", "react"}

// manifest is the part of a package.json a registry page and `npm publish` read.
type manifest struct {
	Name       string `json:"name"`
	License    string `json:"license"`
	Homepage   string `json:"homepage"`
	Repository struct {
		Type, URL, Directory string
	} `json:"repository"`
	Bugs struct {
		URL string `json:"url"`
	} `json:"bugs"`
	PublishConfig struct {
		Access     string `json:"access"`
		Provenance bool   `json:"provenance"`
	} `json:"publishConfig"`
}

// publishedFile is a file of `npm publish --json`'s report.
type publishedFile struct {
	Path string `json:"path"`
}

// shipped is what a package may ship: its build (JavaScript, types, maps),
// the sources the maps point into, README, LICENSE and package.json.
var (
	shipped = regexp.MustCompile(`^(LICENSE|README\.md|package\.json|dist/.+\.(js|d\.ts|js\.map|d\.ts\.map)|src/.+\.ts)$`)
	testish = regexp.MustCompile(`\.test(-util)?\.`)
)

// TestNPMPublishDryRun runs `npm publish --dry-run` for the three published
// packages as a maintainer would (prepack builds each and copies LICENSE in),
// and checks each would upload only what it must, with the metadata a
// registry page shows. --offline: the dry run otherwise asks the registry
// which versions exist, and a test stays on loopback; provenance is only
// generated for a real publish, so publishConfig.provenance needs no CI here.
func TestNPMPublishDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the npm packages")
	}
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", "tsc")); err != nil {
		t.Skip("SKIP: node_modules is not installed (make deps); the packages' prepack needs tsc")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("SKIP: npm is not on PATH")
	}

	for _, p := range npmPackages {
		var m manifest
		readJSON(t, filepath.Join(root, "web", "packages", p, "package.json"), &m)
		dir := "web/packages/" + p
		if m.License != "MIT" || m.Repository.Type != "git" || m.Repository.URL != "git+https://github.com/hostrelay/hostrelay.git" ||
			m.Repository.Directory != dir || m.Homepage == "" || m.Bugs.URL == "" ||
			m.PublishConfig.Access != "public" || !m.PublishConfig.Provenance {
			t.Errorf("%s/package.json: license, repository (directory %s), homepage, bugs or publishConfig {access: public, provenance: true} missing: %+v", dir, dir, m)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	args := []string{"publish", "--dry-run", "--offline", "--json"}
	for _, p := range npmPackages {
		args = append(args, "-w", "@hostrelay/"+p)
	}
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm %v: %v\n%s\n%s", args, err, stdout.String(), stderr.String())
	}

	// One JSON object per package, one after another.
	reports := map[string][]publishedFile{}
	dec := json.NewDecoder(&stdout)
	for {
		var r map[string]struct {
			Files []publishedFile `json:"files"`
		}
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("npm publish --json: %v", err)
		}
		for name, rep := range r {
			reports[name] = rep.Files
		}
	}
	for _, p := range npmPackages {
		name := "@hostrelay/" + p
		files, ok := reports[name]
		if !ok {
			t.Errorf("npm publish --dry-run reported nothing for %s:\n%s", name, stderr.String())
			continue
		}
		var paths []string
		for _, f := range files {
			paths = append(paths, f.Path)
			if !shipped.MatchString(f.Path) || testish.MatchString(f.Path) {
				t.Errorf("%s would ship %s", name, f.Path)
			}
		}
		for _, want := range []string{"LICENSE", "README.md", "package.json", "dist/index.js", "dist/index.d.ts"} {
			if !slices.Contains(paths, want) {
				t.Errorf("%s would not ship %s", name, want)
			}
		}
		t.Logf("%s: %d files", name, len(files))
	}
	// postpack removed the copies of LICENSE prepack made.
	for _, p := range npmPackages {
		if _, err := os.Stat(filepath.Join(root, "web", "packages", p, "LICENSE")); err == nil {
			t.Errorf("web/packages/%s/LICENSE left behind after packing", p)
		}
	}
}
