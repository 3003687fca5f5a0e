package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hostrelay/hostrelay/bench/internal/loadgen"
)

// hostrelay is the server under test: the real binary, started here and
// only ever signalled by its PID.
type hostrelay struct {
	cmd   *exec.Cmd
	pid   int
	http  string // host:port of the lobby and /healthz
	debug string // host:port of the pprof listener
	done  chan struct{}
	web   *http.Client

	mu       sync.Mutex
	warnings map[string]int // WARN and ERROR log lines by message
	tail     []string       // last lines, for failure reports
	exit     error          // the process's exit, once done is closed

	// Lobby connections the server dropped, by its log: a slow consumer
	// (its queue full), or no pong within the server's PongTimeout.
	slowConsumers, pingTimeouts int
}

// serverFlags are the flags the soak gives the server, each with why.
// All players share 127.0.0.1, so the per-IP limits, which are there for
// the open internet, would refuse most of them; per-session limits stay at
// their defaults, since one honest player must fit them (the soak checks it).
func serverFlags(players, floods int) [][2]string {
	return [][2]string{
		// Loopback only, ports chosen by the kernel.
		{"-http", "127.0.0.1:0"}, {"-turn-udp", "127.0.0.1:0"}, {"-turn-tcp", "127.0.0.1:0"},
		{"-public-ip", "127.0.0.1"},
		// The goroutine count comes from pprof; loopback only by the server's rule.
		{"-debug-addr", "127.0.0.1:0"},
		// JSON so the listening line and warnings can be read. (The TURN
		// secret goes in the environment, so the server does not warn about
		// a generated one and ps does not show it.)
		{"-log-format", "json"}, {"-log-level", "info"},
		// Every player holds one lobby connection from 127.0.0.1; a resume
		// briefly holds a second while the server notices the first is dead.
		// An attacker (-floods) holds one, and one more while the server
		// finishes a connection it closed.
		{"-max-conns-per-ip", strconv.Itoa(2*players + 2*floods + 64)},
		// Joins per IP per minute: the ramp alone joins every player within
		// a minute, and churn keeps joining.
		{"-joins-per-minute", "1000000"},
		// TURN allocations and TURN-over-TCP connections per IP: every
		// player's peer connections allocate over UDP and TCP from 127.0.0.1
		// (at 500 players about 2,100 allocations and 870 TCP connections
		// were live at once), so both get 8 per player with room to spare.
		// The server-wide caps (-turn-max-allocations-total,
		// -turn-tcp-max-conns, -max-http-conns) come from the open-file
		// limit and are left alone: they hold whoever connects.
		{"-turn-allocations-per-ip", strconv.Itoa(8*players + 64)},
		{"-turn-tcp-conns-per-ip", strconv.Itoa(8*players + 64)},
		// Not raised, on purpose: -rooms-per-minute is per session (a host
		// makes one room per cycle, far below 10 a minute), -turn-max-allocations
		// per session (a host of 7 peers needs 14 of the default 40), and
		// -messages-per-second, -signals-per-second, -signal-burst are per
		// session. The failed-join budget per IP (signaling.Config.JoinFailureBurst)
		// has no flag: honest soak players never fail a join, and one that
		// does is counted as a failure anyway.
	}
}

// raisedPerIP are the per-IP flags serverFlags handles; any other per-IP
// flag the binary has is reported, since a limit the soak does not know
// about may refuse its players (pass it in SOAK_SERVER_ARGS).
var raisedPerIP = map[string]bool{ //nolint:gochecknoglobals // a read-only table
	"max-conns-per-ip": true, "joins-per-minute": true,
	"turn-allocations-per-ip": true, "turn-tcp-conns-per-ip": true,
}

func randomSecret() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// flagNames lists the flags bin accepts, from its -h output.
func flagNames(ctx context.Context, bin string) (map[string]bool, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-h") //nolint:gosec // our own binary
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -h: %w\n%s", bin, err, out.String())
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`).FindAllStringSubmatch(out.String(), -1) {
		names[m[1]] = true
	}
	return names, nil
}

// startHostrelay starts bin with args; logTo, if not nil, gets a copy of
// everything it logs.
func startHostrelay(ctx context.Context, bin string, args []string, logTo io.Writer) (*hostrelay, error) {
	cmd := exec.Command(bin, args...) //nolint:gosec // our own binary
	cmd.Env = append(os.Environ(), "HOSTRELAY_TURN_SECRET="+randomSecret())
	// The server must not outlive the soak, even if the soak is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	h := &hostrelay{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{}), warnings: map[string]int{},
		web: &http.Client{Timeout: 10 * time.Second}}
	ready := make(chan struct{})
	var r io.Reader = stderr
	if logTo != nil {
		r = io.TeeReader(stderr, logTo)
	}
	go h.readLog(r, ready)
	go func() {
		err := cmd.Wait()
		h.mu.Lock()
		h.exit = err
		h.mu.Unlock()
		close(h.done)
	}()
	select {
	case <-ready:
		return h, nil
	case <-h.done:
		return nil, fmt.Errorf("hostrelay exited during start: %w\n%s", h.exitErr(), h.output())
	case <-time.After(20 * time.Second):
		// Its exit status adds nothing to why it is being stopped.
		_ = h.stop()
		return nil, fmt.Errorf("hostrelay not listening within 20s:\n%s", h.output())
	case <-ctx.Done():
		_ = h.stop()
		return nil, ctx.Err()
	}
}

// readLog finds the listening line and counts warnings. It decodes only the
// lines it needs: at info level a soak logs every join and leave.
func (h *hostrelay) readLog(r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		h.mu.Lock()
		h.tail = append(h.tail, line)
		if len(h.tail) > 40 {
			h.tail = h.tail[len(h.tail)-40:]
		}
		h.mu.Unlock()
		switch {
		case strings.Contains(line, `"msg":"dropping slow consumer"`):
			h.mu.Lock()
			h.slowConsumers++
			h.mu.Unlock()
		case strings.Contains(line, `"msg":"dropping: ping timeout"`) && strings.Contains(line, "failed to wait for pong"):
			h.mu.Lock()
			h.pingTimeouts++
			h.mu.Unlock()
		}
		isWarn := strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`)
		isListen := ready != nil && strings.Contains(line, `"msg":"listening"`) && strings.Contains(line, `"component":"server"`)
		if !isWarn && !isListen {
			continue
		}
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		if isWarn {
			msg, _ := e["msg"].(string)
			h.mu.Lock()
			h.warnings[fmt.Sprint(e["level"], " ", msg)]++
			h.mu.Unlock()
			continue
		}
		hs, _ := e["http"].(string)
		dbg, _ := e["debug"].(string)
		if hs != "" && dbg != "" {
			h.http, h.debug = hs, dbg
			close(ready)
			ready = nil
		}
	}
}

func (h *hostrelay) output() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.tail, "\n")
}

func (h *hostrelay) exitErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exit
}

// stop sends SIGTERM, as an operator would, and reports how the process
// ended: a clean drain exits 0.
func (h *hostrelay) stop() error {
	select {
	case <-h.done:
		return h.exitErr()
	default:
	}
	_ = syscall.Kill(h.pid, syscall.SIGTERM)
	select {
	case <-h.done:
		return h.exitErr()
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(h.pid, syscall.SIGKILL)
		<-h.done
		return errors.New("did not exit within 30s of SIGTERM; killed")
	}
}

// serverFigures is one reading of the server process.
type serverFigures struct {
	RSS         int64
	Files       int
	Goroutines  int
	Sessions    int
	Rooms       int
	Allocations int
	Dropped     turnDrops     // relayed packets dropped since the server started
	CPU         time.Duration // utime+stime so far
}

// turnDrops is /healthz's turn.dropped.
type turnDrops struct {
	Policy    uint64 `json:"policy"`
	Stray     uint64 `json:"stray"`
	Overflow  uint64 `json:"overflow"`
	Bandwidth uint64 `json:"bandwidth"`
}

func (h *hostrelay) read(ctx context.Context) (serverFigures, error) {
	var f serverFigures
	var err error
	if f.RSS, err = loadgen.RSS(h.pid); err != nil {
		return f, err
	}
	if f.CPU, err = loadgen.CPUTime(h.pid); err != nil {
		return f, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", h.pid))
	if err != nil {
		return f, err
	}
	f.Files = len(fds)
	if f.Goroutines, err = h.goroutines(ctx); err != nil {
		return f, err
	}
	var hz struct {
		Lobby struct {
			Sessions int `json:"sessions"`
			Rooms    int `json:"rooms"`
		} `json:"lobby"`
		TURN *struct {
			Allocations int       `json:"allocations"`
			Dropped     turnDrops `json:"dropped"`
		} `json:"turn"`
	}
	if err := h.getJSON(ctx, "http://"+h.http+"/healthz", &hz); err != nil {
		return f, err
	}
	if hz.TURN == nil {
		return f, errors.New("/healthz has no turn.allocations: is bin/hostrelay older than the soak?")
	}
	f.Sessions, f.Rooms, f.Allocations, f.Dropped = hz.Lobby.Sessions, hz.Lobby.Rooms, hz.TURN.Allocations, hz.TURN.Dropped
	return f, nil
}

// goroutines reads the first line of pprof's goroutine profile:
// "goroutine profile: total N".
func (h *hostrelay) goroutines(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h.debug+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := h.web.Do(req)
	if err != nil {
		return 0, fmt.Errorf("goroutine profile: %w", err)
	}
	defer resp.Body.Close()
	first, _ := bufio.NewReader(resp.Body).ReadString('\n')
	var n int
	if _, err := fmt.Sscanf(first, "goroutine profile: total %d", &n); err != nil {
		return 0, fmt.Errorf("goroutine profile: %q: %w", first, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return n, nil
}

func (h *hostrelay) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := h.web.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// udpErrors reads the kernel's UDP receive and send buffer errors (packets
// dropped because a socket's buffer was full) from /proc/net/snmp. They
// count for the whole network namespace: other programs' drops show too.
func udpErrors() (rcvbuf, sndbuf uint64) {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return 0, 0
	}
	var names []string
	for line := range strings.SplitSeq(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "Udp: ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if i < len(f) {
				v, _ := strconv.ParseUint(f[i], 10, 64)
				switch n {
				case "RcvbufErrors":
					rcvbuf = v
				case "SndbufErrors":
					sndbuf = v
				}
			}
		}
		break
	}
	return rcvbuf, sndbuf
}
