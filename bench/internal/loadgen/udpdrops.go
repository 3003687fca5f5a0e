package loadgen

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// UDPDrops sums the kernel's per-socket drop counters (/proc/net/udp) of
// IPv4 sockets bound to the given local ports, and of all others.
func UDPDrops(ports map[int]bool) (mine, others uint64) {
	f, err := os.Open("/proc/net/udp")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 13 {
			continue
		}
		local := fs[1]
		i := strings.LastIndexByte(local, ':')
		port, err := strconv.ParseInt(local[i+1:], 16, 32)
		if err != nil {
			continue
		}
		d, err := strconv.ParseUint(fs[len(fs)-1], 10, 64)
		if err != nil {
			continue
		}
		if ports[int(port)] {
			mine += d
		} else {
			others += d
		}
	}

	return mine, others
}
