package server

import (
	"os"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/leakcheck"
)

// TestMain fails the run if any goroutine the tests started outlives them.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m, 10*time.Second, leakcheck.Any)) }
