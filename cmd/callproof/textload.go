package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
)

type textLoadArgs struct {
	calls        int
	suite, agent string
	scale        float64
	ramp         time.Duration
	json         bool
	noPreflight  bool // skip the check of an external --agent
}

// textLoadReport is what load --transport native --json prints.
type textLoadReport struct {
	harness.TextLoadResult
	Suite string `json:"suite"`
	// Agent: the reference agent load started, when it did.
	Agent *childUsage `json:"agent_process,omitempty"`
}

// childUsage is a child process's CPU and peak memory.
type childUsage struct {
	CPU          time.Duration `json:"cpu"`
	PeakRSSBytes int64         `json:"peak_rss_bytes"`
}

// loadText runs load --transport native.
func loadText(a textLoadArgs, stdout, stderr io.Writer) int {
	if a.calls < 1 || a.ramp < 0 {
		fmt.Fprintln(stderr, "callproof load: --calls must be positive and --ramp not negative")
		return exitUsage
	}
	if err := checkScale(a.scale); err != nil {
		fmt.Fprintf(stderr, "callproof load: %v\n", err)
		return exitUsage
	}
	name, cases, err := harness.LoadSuite(a.suite)
	if err != nil {
		fmt.Fprintf(stderr, "callproof load: --suite: %v\n", err)
		return exitUsage
	}
	if a.agent != "" {
		if err := checkAgentFor(transportNative, a.agent); err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitUsage
		}
		if !a.noPreflight && !preflight("load", audioFlags{transport: transportNative}, a.agent, stderr) {
			return exitNoAgent
		}
	}
	if n := fileLimitConcurrency("load", a.calls, stderr); n < a.calls {
		fmt.Fprintf(stderr, "callproof load: %d calls need more open files than the hard limit allows\n", a.calls)
		return exitUsage
	}
	ctx, stop := interruptible("load", stderr)
	defer stop()
	var agent *exec.Cmd
	url := a.agent
	if url == "" {
		if agent, url, err = startCareful(ctx); err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitBroken
		}
		defer func() {
			if agent.ProcessState == nil {
				_ = agent.Process.Kill()
				_ = agent.Wait()
			}
		}()
	}
	res, err := harness.RunTextLoad(ctx, harness.TextLoadOptions{Agent: url, Cases: cases, Calls: a.calls, Ramp: a.ramp, Scale: a.scale})
	if err != nil {
		fmt.Fprintf(stderr, "callproof load: %v\n", err)
		return exitBroken
	}
	rep := textLoadReport{TextLoadResult: res, Suite: name}
	if agent != nil {
		_ = agent.Process.Kill()
		_ = agent.Wait()
		if ru, ok := agent.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rep.Agent = &childUsage{CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), PeakRSSBytes: ru.Maxrss * 1024}
		}
	}
	if a.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		printTextLoad(stdout, rep, a)
	}
	if ctx.Err() != nil {
		return exitIncomplete
	}
	if res.Overloaded > 0 || res.Usual < res.Scored || len(res.Errors) > 0 {
		return 1
	}
	return exitOK
}

func printTextLoad(w io.Writer, r textLoadReport, a textLoadArgs) {
	fmt.Fprintf(w, "calls %d at once (suite %s, starts over %s, scale %g) · %s\n", r.Calls, r.Suite, a.ramp, a.scale, r.Duration.Round(time.Millisecond))
	var outs []string
	for o, n := range r.Outcomes {
		outs = append(outs, fmt.Sprintf("%s %d", o, n))
	}
	sort.Strings(outs)
	fmt.Fprintf(w, "outcomes: %s · overloaded %d · integrity %d\n", strings.Join(outs, ", "), r.Overloaded, r.Integrity)
	fmt.Fprintf(w, "verdicts: %d/%d scored calls got their scenario's usual verdicts\n", r.Usual, r.Scored)
	for _, d := range r.Differing {
		fmt.Fprintf(w, "  %s\n", d)
	}
	if l := r.Lateness; l != nil {
		fmt.Fprintf(w, "harness lateness (script time, each call's worst): p50 %s p99 %s max %s (%s)\n",
			l.P50.Round(time.Microsecond), l.P99.Round(time.Microsecond), l.Max.Round(time.Microsecond), l.WorstCall)
		if l.PressureCalls > 0 {
			fmt.Fprintf(w, "machine CPU pressure (share of each call's time some task waited for a CPU): p50 %.0f%% max %.0f%%\n",
				100*l.PressureP50, 100*l.PressureMax)
		}
		if l.Busy() {
			fmt.Fprintf(w, "busy machine: the median call ran with some task waiting for a CPU %.0f%% of the time (%.0f%% or more is busy): the agent was starved too; fewer calls at once, or the agent on its own machine\n",
				100*l.PressureP50, 100*reports.BusyPressure)
		}
	}
	fmt.Fprintf(w, "harness: CPU %s per call · peak RSS %d MiB (%d KiB per call)\n",
		r.CPUPerCall.Round(time.Microsecond), r.PeakRSSBytes>>20, r.RSSPerCallBytes>>10)
	if g := r.Agent; g != nil {
		fmt.Fprintf(w, "agent process: CPU %s (%s per call) · peak RSS %d MiB\n",
			g.CPU.Round(time.Millisecond), (g.CPU / time.Duration(max(r.Calls, 1))).Round(time.Microsecond), g.PeakRSSBytes>>20)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "harness error: %s\n", e)
	}
}

// startCareful runs `callproof agent careful` on a loopback port in a
// separate process and returns it with its URL.
func startCareful(ctx context.Context) (*exec.Cmd, string, error) {
	return startSelf(ctx, "the careful agent", []string{"agent", "careful", "--listen", "127.0.0.1:0"}, func(l string) (string, bool) {
		if _, u, ok := strings.Cut(l, " listening on "); ok && len(strings.Fields(u)) > 0 {
			return strings.Fields(u)[0], true
		}
		return "", false
	})
}

// startSelf runs this binary with args as a separate process and reads its
// first line of output, which url turns into the address it serves; it
// waits 10 s at most, and drains the rest of the output.
func startSelf(ctx context.Context, what string, args []string, url func(line string) (string, bool)) (*exec.Cmd, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.CommandContext(ctx, self, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, out)
	}()
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case l := <-line:
		if u, ok := url(l); ok {
			return cmd, u, nil
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", fmt.Errorf("%s said %q", what, l)
	case <-t.C:
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", fmt.Errorf("%s did not start within 10s", what)
	}
}
