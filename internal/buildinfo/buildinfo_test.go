package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

func record(mainVersion string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/hostrelay/hostrelay", Version: mainVersion}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		ldVersion, ldCommit  string
		bi                   *debug.BuildInfo
		wantVersion, wantCmt string
	}{
		{"linker wins over the record", "0.1.0", sha, record("(devel)", "vcs.revision", "ffff", "vcs.modified", "true"), "0.1.0", sha},
		{"linker's leading v dropped", "v0.2.0-rc.1", sha, record("(devel)"), "0.2.0-rc.1", sha},
		{"linker version, commit from the record", "0.1.0", "", record("(devel)", "vcs.revision", sha), "0.1.0", sha},
		{"go install of a tag", "", "", record("v0.1.0"), "0.1.0", Unknown},
		{"checkout with vcs stamping", "", "", record("(devel)", "vcs.revision", sha, "vcs.modified", "false"), "0.0.0-dev+0123456789ab", sha},
		{"dirty checkout", "", "", record("(devel)", "vcs.revision", sha, "vcs.modified", "true"), "0.0.0-dev+0123456789ab.dirty", sha},
		{"checkout without vcs stamping (-buildvcs=false)", "", "", record("(devel)"), "0.0.0-dev", Unknown},
		{"no record at all", "", "", nil, Unknown, Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolve(tc.ldVersion, tc.ldCommit, tc.bi)
			if got.Version != tc.wantVersion || got.Commit != tc.wantCmt {
				t.Errorf("resolve = %q %q, want %q %q", got.Version, got.Commit, tc.wantVersion, tc.wantCmt)
			}
			if got.Version == "(devel)" || strings.HasPrefix(got.Version, "v") {
				t.Errorf("version %q", got.Version)
			}
		})
	}
}

func TestString(t *testing.T) {
	i := Info{Version: "0.1.0", Commit: sha, GoVersion: "go1.26.8"}
	if got, want := i.String(), "0.1.0 ("+sha+", go1.26.8)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestReadInTests: a test binary has no linker values and a "(devel)" or
// empty main version, and still reports neither.
func TestReadInTests(t *testing.T) {
	i := Read()
	if i.Version == "" || i.Version == "(devel)" || i.Commit == "" || i.GoVersion == "" {
		t.Errorf("Read() = %+v", i)
	}
	if String() != i.String() || Version() != i.Version || Commit() != i.Commit {
		t.Errorf("accessors disagree with Read(): %q %q %q", String(), Version(), Commit())
	}
}
