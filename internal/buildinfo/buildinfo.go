// Package buildinfo is the version and commit a release build stamps into
// the binary (.goreleaser.yaml's ldflags:
// -X github.com/hostrelay/hostrelay/internal/buildinfo.version=… and .commit=…).
// A plain `go build` leaves both empty.
package buildinfo

var version, commit string //nolint:gochecknoglobals // set by the linker (-X), read-only at run time

// Version is the release version ("0.1.0"), or "dev" for a build without one.
func Version() string {
	if version == "" {
		return "dev"
	}
	return version
}

// Commit is the full commit hash the release was built from, or "" if unknown.
func Commit() string { return commit }
