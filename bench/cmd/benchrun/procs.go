package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hostrelay/hostrelay/internal/stunprobe"
)

// proc is a server the driver started, pinned to the server core. Only
// processes started here are ever signalled, and only by their PID.
type proc struct {
	name string
	cmd  *exec.Cmd
	pid  int
	done chan struct{}
	mu   sync.Mutex
	tail []string // last lines of its output, for failure reports
}

// start runs argv under taskset on cpu and returns once ready(line) accepts
// a line of its stdout or stderr (nil ready: at once).
func start(ctx context.Context, name string, cpu int, ready func(line string) bool, argv ...string) (*proc, error) {
	args := append([]string{"-c", fmt.Sprint(cpu)}, argv...)
	cmd := exec.Command("taskset", args...) //nolint:gosec // our own binaries
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	// taskset execs the command: the PID is the server's.
	p := &proc{name: name, cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	lines := make(chan string, 64)
	var wg sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				p.note(sc.Text())
				select {
				case lines <- sc.Text():
				default:
				}
			}
		}()
	}
	go func() { wg.Wait(); _ = cmd.Wait(); close(p.done) }()
	if ready == nil {
		return p, nil
	}
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l := <-lines:
			if ready(l) {
				go func() {
					for range lines { //nolint:revive // drain so the readers never block
					}
				}()

				return p, nil
			}
		case <-p.done:
			return nil, fmt.Errorf("%s exited during start:\n%s", name, p.output())
		case <-timeout:
			p.stop()

			return nil, fmt.Errorf("%s not ready within 20s:\n%s", name, p.output())
		case <-ctx.Done():
			p.stop()

			return nil, ctx.Err()
		}
	}
}

func (p *proc) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tail = append(p.tail, line)
	if len(p.tail) > 40 {
		p.tail = p.tail[len(p.tail)-40:]
	}
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()

	return strings.Join(p.tail, "\n")
}

// stop sends SIGTERM to the process, then SIGKILL if it lingers.
func (p *proc) stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(p.pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
		<-p.done
	}
}

// listeningAddr matches the "listening <addr>" line of the bench servers.
func listeningAddr(addr *string) func(string) bool {
	return func(l string) bool {
		a, ok := strings.CutPrefix(l, "listening ")
		if ok {
			*addr = strings.TrimSpace(a)
		}

		return ok
	}
}

// hostrelay is a running bin/hostrelay.
type hostrelay struct {
	*proc
	http, turnUDP string
	metrics       string // the -metrics-addr listener, when started with one
}

// startHostrelay starts bin pinned to cpu with the bench's settings, and
// any extra flags after them.
func startHostrelay(ctx context.Context, bin string, cpu int, extra ...string) (*hostrelay, error) {
	h := &hostrelay{}
	p, err := start(ctx, "hostrelay", cpu, func(l string) bool {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) != nil || e["msg"] != "listening" {
			return false
		}
		hs, ok1 := e["http"].(string)
		tu, ok2 := e["turn_udp"].(string)
		if !ok1 || !ok2 {
			return false
		}
		h.http, h.turnUDP = hs, tu
		h.metrics, _ = e["metrics"].(string)

		return true
	}, append([]string{bin, "-http", "127.0.0.1:0", "-turn-udp", "127.0.0.1:0", "-turn-tcp", "127.0.0.1:0",
		"-public-ip", "127.0.0.1", "-log-format", "json", "-log-level", "info",
		// Many allocations per session for the memory and capacity runs; the
		// quota is not on the packet path.
		"-turn-max-allocations", "100000",
		// The forwarding ladder offers well over 1 MiB/s per allocation to find
		// the server's capacity; the default per-allocation bandwidth limit
		// would turn that into drops that are not the server's.
		"-turn-max-bandwidth", "off",
		// Every load connection comes from 127.0.0.1: lift the per-IP limits.
		"-max-conns-per-ip", "1000000", "-joins-per-minute", "1000000", "-turn-allocations-per-ip", "1000000",
		// The caps derived from the open-file limit (a quarter of it for HTTP,
		// half for allocations) stop the idle-session and capacity runs short
		// of what the machine holds: the bench measures the machine, so the
		// open-file limit itself is the bound.
		"-max-http-conns", "1000000", "-turn-max-allocations-total", "1000000"}, extra...)...)
	if err != nil {
		return nil, err
	}
	h.proc = p

	return h, nil
}

// coturn is a running coturn with TURN REST credentials (use-auth-secret).
type coturn struct {
	*proc
	addr   string
	secret string
	dir    string
}

// coturnPath finds Debian's coturn binary.
func coturnPath() (string, error) {
	for _, p := range []string{"/usr/bin/turnserver", "/usr/sbin/turnserver"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("turnserver"); err == nil {
		return p, nil
	}

	return "", errors.New("coturn not installed (bench/run.sh installs the Debian package)")
}

func startCoturn(ctx context.Context, cpu int) (*coturn, error) {
	bin, err := coturnPath()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-coturn-")
	if err != nil {
		return nil, err
	}
	secret := randomHex(16)
	c := &coturn{addr: fmt.Sprintf("127.0.0.1:%d", port), secret: secret, dir: dir}
	p, err := start(ctx, "coturn", cpu, nil, bin, "-n",
		"--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", fmt.Sprintf("--listening-port=%d", port),
		"--min-port=50000", "--max-port=59999",
		"--use-auth-secret", "--static-auth-secret="+secret, "--realm=hostrelay",
		"--allow-loopback-peers", "--no-cli", "--no-tls", "--no-dtls", "--no-software-attribute",
		"--total-quota=0", "--user-quota=0",
		"--log-file="+filepath.Join(dir, "coturn.log"), "--simple-log", "--no-stdout-log",
		"--pidfile="+filepath.Join(dir, "coturn.pid"), "--userdb="+filepath.Join(dir, "turndb"))
	if err != nil {
		return nil, err
	}
	c.proc = p
	if err := waitSTUN(ctx, c.addr); err != nil {
		c.stop()

		return nil, fmt.Errorf("coturn: %w\n%s", err, p.output())
	}

	return c, nil
}

func (c *coturn) stop() {
	if c == nil {
		return
	}
	c.proc.stop()
	_ = os.RemoveAll(c.dir)
}

// waitSTUN sends Binding requests until the server at addr answers.
func waitSTUN(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()

	return stunprobe.WaitUp(ctx, addr, 200*time.Millisecond)
}

func freePort() (int, error) {
	// A port free for both UDP and TCP.
	for range 20 {
		u, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return 0, err
		}
		port := u.LocalAddr().(*net.UDPAddr).Port //nolint:forcetypeassert // UDP
		t, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
		_ = u.Close()
		if err == nil {
			_ = t.Close()

			return port, nil
		}
	}

	return 0, errors.New("no free port")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)

	return hex.EncodeToString(b)
}
