package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseReport(t *testing.T) {
	libs, err := parseReport([]byte("a.example/x\tv1.0.0\tMIT\t/m/x/LICENSE\n" +
		"b.example/y\tv2.0.0\tMIT\t/m/y/LICENSE\nb.example/y\tv2.0.0\tApache-2.0\t/m/y/LICENSE\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) != 2 || libs[1].name != "b.example/y" || strings.Join(libs[1].licenses, ",") != "MIT,Apache-2.0" {
		t.Fatalf("libs = %+v", libs)
	}
	for _, bad := range []string{"", "a\tb\tc\n", "a.example/x\tv1\tUnknown\t/m/x/LICENSE\n", "a.example/x\tUnknown\tUnknown\tUnknown\n"} {
		if _, err := parseReport([]byte(bad)); err == nil {
			t.Errorf("parseReport(%q) passed", bad)
		}
	}
}

// TestRender: each library's license names, its license file and the NOTICE
// files beside it (not other files), then the standard library's license.
func TestRender(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o750)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lic := write("y/LICENSE", "Apache License text\n\n")
	write("y/NOTICE", "Copyright Y's authors\n")
	write("y/README.md", "not a notice\n")
	goLicense := write("go/LICENSE", "Go's license\n")
	out, err := render([]library{{name: "b.example/y", version: "v2.0.0", licensePath: lic, licenses: []string{"Apache-2.0"}}}, goLicense)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"\nb.example/y v2.0.0\nLicense: Apache-2.0\n\n-- LICENSE\n\nApache License text\n\n-- NOTICE\n\nCopyright Y's authors\n",
		"Go standard library (golang.org)\nLicense: BSD-3-Clause\n\n-- LICENSE\n\nGo's license\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "not a notice") {
		t.Errorf("README copied:\n%s", s)
	}
}
