package server

import (
	"testing"

	"github.com/hostrelay/hostrelay/internal/buildinfo"
)

func TestAdminVersion(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		version, commit, want string
	}{
		{"0.1.0", sha, "0.1.0 0123456789ab"},
		{"0.0.0-dev+0123456789ab", sha, "0.0.0-dev+0123456789ab"},
		{"0.1.0-2-g0123456789ab-dirty", sha, "0.1.0-2-g0123456789ab-dirty"},
		{"0.0.0-dev", buildinfo.Unknown, "0.0.0-dev unknown"},
	} {
		if got := adminVersion(buildinfo.Info{Version: tc.version, Commit: tc.commit}); got != tc.want {
			t.Errorf("adminVersion(%q, %q) = %q, want %q", tc.version, tc.commit, got, tc.want)
		}
	}
}
