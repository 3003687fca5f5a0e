package server

import (
	"strings"

	"github.com/hostrelay/hostrelay/internal/buildinfo"
)

// adminVersion is the admin page's version figure, one string: the version
// and the commit's first 12 digits (the JSON's commit has the whole hash),
// unless the version already names them (0.0.0-dev+<commit>).
func adminVersion(b buildinfo.Info) string {
	c := b.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if strings.Contains(b.Version, c) {
		return b.Version
	}
	return b.Version + " " + c
}
