//go:build !e2e

package static

import "embed"

// dist always contains .gitkeep, so the package builds (and go test runs)
// before the web app has been built; Built reports whether it has.
//
//go:embed all:dist
var web embed.FS

const webDir = "dist"
