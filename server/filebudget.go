package server

import (
	"log/slog"
	"runtime"
)

// fileBudget shares out the descriptors this process may hold between what
// clients can make it open, so no flood of one kind exhausts them: at the
// caps, the reserve is still free for the listeners, the runtime, logs and
// the descriptor each accept holds for a moment before a refusal, so
// /healthz and the lobby keep answering.
//
// What a player costs in a room of 8 (a star around the host, and browsers
// use both TURN URLs): one lobby WebSocket, one TURN-over-TCP connection and
// two relay sockets per peer connection, 1.75 peer connections a player on
// average. So after the reserve, a quarter goes to HTTP connections, a
// quarter to TURN-over-TCP connections, and half to TURN allocations (one
// relay UDP socket each).
type fileBudget struct {
	limit       uint64 // the soft RLIMIT_NOFILE in force; 0: unknown
	reserve     int
	httpConns   int
	turnTCP     int
	allocations int
}

// fileReserve is kept out of every cap: the HTTP and TURN TCP listeners, the
// runtime's poller and pipes, stdio, and slack for accepts being refused.
// One TURN UDP socket per CPU comes on top.
const fileReserve = 128

// unknownFileLimit is budgeted with where the platform cannot say: the
// common default soft limit on Linux.
const unknownFileLimit = 1024

func budgetFor(limit uint64) fileBudget {
	n := unknownFileLimit
	if limit > 0 {
		n = int(min(limit, 1<<30)) // no process holds more; keeps the int arithmetic safe
	}
	reserve := min(fileReserve+runtime.GOMAXPROCS(0), n/2)
	spare := n - reserve
	b := fileBudget{limit: limit, reserve: reserve, httpConns: max(1, spare/4), turnTCP: max(1, spare/4)}
	b.allocations = max(1, spare-b.httpConns-b.turnTCP)
	return b
}

// newFileBudget raises the file limit as far as allowed and budgets it.
func newFileBudget(log *slog.Logger) fileBudget {
	soft, hard, err := raiseFileLimit()
	b := budgetFor(soft)
	attrs := []any{"component", "server", "soft", soft, "hard", hard, "reserve", b.reserve,
		"http_conns", b.httpConns, "turn_tcp_conns", b.turnTCP, "allocations", b.allocations}
	switch {
	case err != nil:
		log.Warn("file limit: could not raise the soft limit to the hard limit", append(attrs, "err", err)...)
	case soft == 0:
		log.Info("file limit unknown on this platform: caps assume 1024", attrs...)
	case soft < 4*fileReserve:
		log.Warn("file limit is low for a public server; raise it (ulimit -n, LimitNOFILE=)", attrs...)
	default:
		log.Info("file limit", attrs...)
	}
	return b
}
