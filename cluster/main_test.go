package cluster

import (
	"os"
	"testing"
	"time"

	"github.com/hostrelay/hostrelay/internal/leakcheck"
)

// Every test closes what it started: a node's watchers, heartbeat, sweep
// and flusher, its NATS connection, and the embedded NATS server.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m, 10*time.Second, leakcheck.Any)) }
