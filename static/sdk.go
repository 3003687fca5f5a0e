package static

import (
	"embed"
	"io/fs"
)

// sdk always contains .gitkeep, like dist. npm run build writes the
// script-tag SDK here (web/bundle/build.ts): the bundles, their source maps
// and manifest.json. It is the same in the e2e build.
//
//go:embed all:sdk
var sdk embed.FS

// SDK returns the script-tag SDK's files: manifest.json, hostrelay.mjs,
// hostrelay.js and their maps, or only .gitkeep before the first build.
func SDK() fs.FS {
	sub, err := fs.Sub(sdk, "sdk")
	if err != nil {
		panic("static: sdk missing from embed: " + err.Error()) // impossible: go:embed guarantees it
	}
	return sub
}
