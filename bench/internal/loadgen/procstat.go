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
	// -1 if the process is not pinned to a single core.
	CoreBusy  float64
	core      int
	coreStart [2]uint64 // busy, total jiffies
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
			m.coreStart = coreJiffies(m.core)
		}

		return
	}
	m.Used, m.Wall = t-m.start, time.Since(m.startWall)
	if m.core >= 0 {
		end := coreJiffies(m.core)
		if total := end[1] - m.coreStart[1]; total > 0 {
			m.CoreBusy = float64(end[0]-m.coreStart[0]) / float64(total)
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

// coreJiffies returns a core's busy and total time from /proc/stat.
func coreJiffies(core int) [2]uint64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return [2]uint64{}
	}
	prefix := "cpu" + strconv.Itoa(core) + " "
	for line := range strings.SplitSeq(string(b), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var busy, total uint64
		for i, f := range strings.Fields(line)[1:] {
			v, _ := strconv.ParseUint(f, 10, 64)
			if i >= 8 { // guest times are already in user
				break
			}
			total += v
			if i != 3 && i != 4 { // idle, iowait
				busy += v
			}
		}

		return [2]uint64{busy, total}
	}

	return [2]uint64{}
}
