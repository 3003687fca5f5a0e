//go:build unix

package turn

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far: the measure
// make bench uses (server CPU-seconds), here around the read loop only.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}

	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
