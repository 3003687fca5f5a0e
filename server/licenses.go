package server

import (
	"io/fs"
	"strings"

	"github.com/hostrelay/hostrelay/licenses"
	"github.com/hostrelay/hostrelay/static"
)

// webNotices is the file the web app's build writes beside index.html: the
// licenses of the npm packages bundled into it (vite.config.ts).
const webNotices = "THIRD-PARTY-NOTICES.txt"

// Notices is what `hostrelay -licenses` prints and GET /licenses serves:
// hostrelay's license, then the notices of the third-party code inside this
// binary, the Go packages linked into it and the npm packages bundled into
// the web app built into it.
func Notices() string {
	var b strings.Builder
	b.WriteString("hostrelay is free software under the MIT License, Copyright (c) 2026 the hostrelay authors.\n" +
		"It contains the third-party software below, each part under its own license.\n\n")
	b.WriteString("######## Go packages (the server binary)\n\n")
	b.WriteString(licenses.Go())
	b.WriteString("\n######## npm packages (the web app built into the binary)\n\n")
	if web, err := fs.ReadFile(static.FS(), webNotices); err == nil {
		b.Write(web)
	} else {
		b.WriteString("The web app was not built into this binary, so it carries no npm packages.\n")
	}
	return b.String()
}
