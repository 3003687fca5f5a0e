package server

import (
	"runtime"
	"runtime/debug"
)

// buildInfo is what the admin page shows as the version: the module version
// and the commit the binary was built from, as the go command recorded them.
type buildInfo struct {
	version   string
	goVersion string
}

func readBuildInfo() buildInfo {
	b := buildInfo{version: "unknown", goVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.version = bi.Main.Version // "(devel)" from a checkout, v1.2.3 from go install
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		b.version += " " + rev + dirty
	}
	return b
}
