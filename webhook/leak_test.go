package webhook

import (
	"os"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/leakcheck"
)

// TestMain fails the run if a sender's worker or retry outlives its Close.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m, 5*time.Second, leakcheck.Any)) }
