// Package static holds the built web app (npm run build writes it to dist/)
// so that one binary serves everything.
package static

import (
	"embed"
	"io/fs"
)

// dist always contains .gitkeep, so the package builds (and go test runs)
// before the web app has been built; Built reports whether it has.
//
//go:embed all:dist
var dist embed.FS

// FS returns the built web app rooted at its index.html.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("static: dist missing from embed: " + err.Error()) // impossible: go:embed guarantees it
	}
	return sub
}

// Built reports whether the web app was built before this binary was.
func Built() bool {
	_, err := fs.Stat(FS(), "index.html")
	return err == nil
}
