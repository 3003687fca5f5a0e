// Package release_test checks what a release ships: this machine's archive
// (.goreleaser.yaml) unpacked and run as a user would run it, and the npm
// packages as `npm publish` would upload them.
package release_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// repoRoot is the module root: these tests run in release/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
