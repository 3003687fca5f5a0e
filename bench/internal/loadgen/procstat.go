package loadgen

import (
	"bytes"

	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of utime/stime in /proc/<pid>/stat on Linux.
const userHZ = 100

// CPUTime is a process's user+system CPU time so far, all threads included,
// from /proc/<pid>/stat.
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("loadgen: %w", err)
	}
	// The command name may hold spaces; fields resume after its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("loadgen: /proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("loadgen: /proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("loadgen: /proc/%d/stat: bad utime/stime", pid)
	}

	return time.Duration(ut+st) * time.Second / userHZ, nil //nolint:gosec // clock ticks of one process: far below 2^63
}

// RSS is a process's resident set size in bytes, from /proc/<pid>/status.
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("loadgen: %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("loadgen: VmRSS %q: %w", v, err)
			}

			return kb << 10, nil
		}
	}

	return 0, fmt.Errorf("loadgen: /proc/%d/status: no VmRSS", pid)
}

// CPUMeter brackets a window of a process's CPU time and, when the process
// is pinned to one core, how busy that core was (the server's own time plus
// kernel work such as softirq that no process is charged for).
type CPUMeter struct {
	PID        int
	start      time.Duration
	startWall  time.Time
	Used, Wall time.Duration
	// CoreBusy is the pinned core's non-idle fraction over the window, or
	// -1 if the process is not pinned to a single core. It is 1 − the core's
	// idle time over the wall time: on a tickless kernel /proc/stat's idle
	// time is exact, while its busy times are sampled at the tick, which a
	// core waking for short bursts (a relay at a few thousand packets/s)
	// mostly misses: their sum read well below the pinned server's own CPU
	// time here.
	CoreBusy float64
	core     int
	coreIdle uint64 // idle+iowait clock ticks at the start
}

// Mark starts (start=true) or ends the window. It fits RunConfig.Window.
func (m *CPUMeter) Mark(start bool) {
	if m == nil || m.PID == 0 {
		return
	}
	t, err := CPUTime(m.PID)
	if err != nil {
		return
	}
	if start {
		m.start, m.startWall = t, time.Now()
		m.core, m.CoreBusy = pinnedCore(m.PID), -1
		if m.core >= 0 {
			m.coreIdle = coreIdle(m.core)
		}

		return
	}
	m.Used, m.Wall = t-m.start, time.Since(m.startWall)
	if m.core >= 0 {
		if end := coreIdle(m.core); end >= m.coreIdle && m.Wall > 0 {
			idle := float64(end-m.coreIdle) / userHZ
			m.CoreBusy = min(1, max(0, 1-idle/m.Wall.Seconds()))
		}
	}
}

// pinnedCore is the only core pid may run on, or -1.
func pinnedCore(pid int) int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(pid, &set) != nil || set.Count() != 1 {
		return -1
	}
	for i := range 1024 {
		if set.IsSet(i) {
			return i
		}
	}

	return -1
}

// coreIdle returns a core's idle and iowait time from /proc/stat, in clock
// ticks (USER_HZ).
func coreIdle(core int) uint64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	prefix := "cpu" + strconv.Itoa(core) + " "
	for line := range strings.SplitSeq(string(b), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			return 0
		}
		idle, _ := strconv.ParseUint(f[4], 10, 64)
		iowait, _ := strconv.ParseUint(f[5], 10, 64)

		return idle + iowait
	}

	return 0
}
