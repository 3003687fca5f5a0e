package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The pong and endless-message flooders run in a process of their own, at
// -flood-nice for every thread. In the soak's process they shared its Go
// runtime (scheduler, GC, timers) with the players' pion stacks, so the
// players' game latency moved with the flooders' own work even when the
// server held them off (issue 24's soak: the game's p99 19 % over with the
// server's extra work at 0.03 cores). A real attacker's CPU is its own
// machine's; a separate niced process is as close as one machine gets.

// floodChildArg, first on the command line, runs the soak binary as the
// flooders' process (see runFloodChild).
const floodChildArg = "-flood-child"

// floodChildCounts is what the flooders' process reports on its stdout
// when it ends: its counters, one per flooding kind, and its first notes.
type floodChildCounts struct {
	Kinds [attackBurst]kindCounts `json:"kinds"`
	Notes []string                `json:"notes"`
}

type kindCounts struct {
	Conns, DialFailed, Closed1008, ClosedBare, ClosedElse, ServedLong, Frames int64
}

func (k *kindCounters) counts() kindCounts {
	return kindCounts{k.conns.Load(), k.dialFailed.Load(), k.closed1008.Load(), k.closedBare.Load(),
		k.closedElse.Load(), k.servedLong.Load(), k.frames.Load()}
}

func (k *kindCounters) add(c kindCounts) {
	k.conns.Add(c.Conns)
	k.dialFailed.Add(c.DialFailed)
	k.closed1008.Add(c.Closed1008)
	k.closedBare.Add(c.ClosedBare)
	k.closedElse.Add(c.ClosedElse)
	k.servedLong.Add(c.ServedLong)
	k.frames.Add(c.Frames)
}

// floodProcess is the flooders' process as the soak sees it.
type floodProcess struct {
	cmd    *exec.Cmd
	stdout io.ReadCloser
	began  time.Time
}

// startFloodProcess starts the soak's own binary as the flooders' process,
// under nice(1) so that every thread it ever has runs at -flood-nice.
func (s *soak) startFloodProcess(ctx context.Context) (*floodProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the flooders' process: %w", err)
	}
	args := []string{exe, floodChildArg,
		"-url", s.url,
		"-start", strconv.FormatInt(s.start.UnixNano(), 10),
		"-duration", s.cfg.duration.String(),
		"-warmup", s.cfg.warmup.String(),
		"-floods", strconv.Itoa(s.cfg.floods),
		"-flood-phases", strconv.Itoa(s.cfg.floodPhases),
		"-flood-redial", s.cfg.floodRedial.String(),
		"-flood-kinds", kindsArg(s.cfg.floodKinds),
	}
	if s.cfg.floodNice != 0 {
		nice, err := exec.LookPath("nice")
		if err != nil {
			return nil, fmt.Errorf("-flood-nice %d needs nice(1): %w", s.cfg.floodNice, err)
		}
		args = append([]string{nice, "-n", strconv.Itoa(s.cfg.floodNice)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...) //nolint:gosec,noctx // our own binary and flags; ctx is handled below
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("the flooders' process: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("the flooders' process: %w", err)
	}
	// The flooders end with their last window; when ctx ends (the load's
	// end, or an interrupted soak) SIGTERM ends their windows at once, and
	// they still report. Not CommandContext: its Wait says ctx.Err()
	// instead of the report.
	context.AfterFunc(ctx, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
	return &floodProcess{cmd: cmd, stdout: stdout, began: time.Now()}, nil
}

// wait reads the flooders' report, adds it to s.fc, and returns the cores
// the process used on average.
func (p *floodProcess) wait(s *soak) (float64, error) {
	var got floodChildCounts
	decodeErr := json.NewDecoder(io.LimitReader(p.stdout, 1<<20)).Decode(&got)
	waitErr := p.cmd.Wait()
	if err := errors.Join(decodeErr, waitErr); err != nil {
		return 0, fmt.Errorf("the flooders' process: %w", err)
	}
	for k := range got.Kinds {
		s.fc.kinds[k].add(got.Kinds[k])
	}
	for _, n := range got.Notes {
		s.fc.note("%s", n)
	}
	st := p.cmd.ProcessState
	return (st.UserTime() + st.SystemTime()).Seconds() / time.Since(p.began).Seconds(), nil
}

// runFloodChild is the flooders' process: the pong and endless-message
// attackers among -floods, in each flood window counted from -start; it
// prints its counters as JSON on stdout when the last window ends or on
// SIGTERM.
func runFloodChild(args []string, out io.Writer) error {
	var cfg config
	var url string
	var startNanos int64
	fs := flag.NewFlagSet("soak "+floodChildArg, flag.ContinueOnError)
	fs.StringVar(&url, "url", "", "the server's lobby WebSocket URL")
	fs.Int64Var(&startNanos, "start", 0, "when the soak's load began (Unix nanoseconds)")
	fs.DurationVar(&cfg.duration, "duration", 0, "the soak's -duration")
	fs.DurationVar(&cfg.warmup, "warmup", 0, "the soak's -warmup")
	fs.IntVar(&cfg.floods, "floods", 0, "the soak's -floods")
	fs.IntVar(&cfg.floodPhases, "flood-phases", 2, "the soak's -flood-phases")
	fs.DurationVar(&cfg.floodRedial, "flood-redial", 100*time.Millisecond, "the soak's -flood-redial")
	kinds := fs.String("flood-kinds", "pongs,endless,bursts", "the soak's -flood-kinds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if url == "" || startNanos == 0 || cfg.floods < 1 {
		return errors.New("-url, -start and -floods are required")
	}
	var err error
	if cfg.floodKinds, err = parseKinds(*kinds); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &soak{cfg: cfg, url: url, start: time.Unix(0, startNanos)}
	var wg sync.WaitGroup
	for i := range cfg.floods {
		if cfg.kindOf(i) == attackBurst {
			continue // the soak's own: see floods
		}
		wg.Go(func() { s.attackInWindows(ctx, cfg.kindOf(i), i) })
	}
	wg.Wait()
	// The soak sends SIGTERM when its load ends, which is when the last
	// window ends here too: once the attackers are done, the signal must
	// not kill the process before it has reported (Ignore outlasts stop).
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	var got floodChildCounts
	for k := range got.Kinds {
		got.Kinds[k] = s.fc.kinds[k].counts()
	}
	s.fc.mu.Lock()
	got.Notes = s.fc.notes
	s.fc.mu.Unlock()
	if err := json.NewEncoder(out).Encode(got); err != nil {
		return fmt.Errorf("writing the counters: %w", err)
	}
	return nil
}
