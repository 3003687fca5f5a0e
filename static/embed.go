// Package static holds the built web app (npm run build writes it to dist/)
// so that one binary serves everything.
package static

import (
	"io/fs"
)

// FS returns the built web app rooted at its index.html.
func FS() fs.FS {
	sub, err := fs.Sub(web, webDir)
	if err != nil {
		panic("static: " + webDir + " missing from embed: " + err.Error()) // impossible: go:embed guarantees it
	}
	return sub
}

// Built reports whether the web app was built before this binary was.
func Built() bool {
	_, err := fs.Stat(FS(), "index.html")
	return err == nil
}
