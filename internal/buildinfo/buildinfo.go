// Package buildinfo is the version and commit this binary was built from.
//
// make build and releases set both with the linker:
//
//	go build -ldflags "-X github.com/hostrelay/hostrelay/internal/buildinfo.version=0.1.0 \
//	  -X github.com/hostrelay/hostrelay/internal/buildinfo.commit=<full sha>"
//
// Without them (go build, go install, go test) they come from what the go
// command recorded: the module version (v0.1.0 from go install …@v0.1.0),
// vcs.revision and vcs.modified. A checkout built that way is
// 0.0.0-dev, never "(devel)".
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the linker (-X); empty in a plain go build.
//
//nolint:gochecknoglobals // written only by the linker, never at run time
var version, commit string

// Unknown is the commit (and the version) of a binary that carries no record
// of where it came from.
const Unknown = "unknown"

// Info is what a binary knows of its build.
type Info struct {
	// Version is a semantic version without a leading v: 0.1.0 for a tag,
	// 0.1.0-3-gabc1234 past it, 0.0.0-dev+abc1234 before the first tag;
	// -dirty (+dirty) when built with uncommitted changes.
	Version string
	// Commit is the full hash of the commit built, or Unknown.
	Commit string
	// GoVersion is the Go release that built the binary.
	GoVersion string
}

// Read returns this binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolve(version, commit, bi)
}

// Version is Read().Version.
func Version() string { return Read().Version }

// Commit is Read().Commit.
func Commit() string { return Read().Commit }

// String is how the binaries print their version:
// "0.1.0 (<commit>, go1.26.8)".
func String() string { return Read().String() }

func (i Info) String() string {
	return i.Version + " (" + i.Commit + ", " + i.GoVersion + ")"
}

// resolve prefers the linker's values and fills in what is missing from the
// go command's record bi (nil when the binary has none).
func resolve(ldVersion, ldCommit string, bi *debug.BuildInfo) Info {
	i := Info{Version: strings.TrimPrefix(ldVersion, "v"), Commit: ldCommit, GoVersion: runtime.Version()}
	if bi == nil {
		if i.Version == "" {
			i.Version = Unknown
		}
		if i.Commit == "" {
			i.Commit = Unknown
		}
		return i
	}
	if bi.GoVersion != "" {
		i.GoVersion = bi.GoVersion
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if i.Commit == "" {
		i.Commit = rev
	}
	if i.Commit == "" {
		i.Commit = Unknown
	}
	if i.Version != "" {
		return i
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		// go install …@v0.1.0, or a pseudo-version the go command derived
		// from the VCS (v0.0.0-20261128…-abcdef123456, +dirty when modified).
		i.Version = strings.TrimPrefix(v, "v")
		return i
	}
	i.Version = "0.0.0-dev"
	var meta []string
	if len(rev) >= 12 {
		meta = append(meta, rev[:12])
	} else if rev != "" {
		meta = append(meta, rev)
	}
	if dirty {
		meta = append(meta, "dirty")
	}
	if len(meta) > 0 {
		i.Version += "+" + strings.Join(meta, ".")
	}
	return i
}
