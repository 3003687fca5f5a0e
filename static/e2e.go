//go:build e2e

package static

import "embed"

// The end-to-end tests' binary (go build -tags e2e, see make e2e) embeds the
// e2e build of the web app instead, `vite build --mode e2e`, which alone has
// the pages' test hooks. e2e always contains .gitkeep, like dist.
//
//go:embed all:e2e
var web embed.FS

const webDir = "e2e"
