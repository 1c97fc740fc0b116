package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/trace"
)

type textLoadArgs struct {
	calls        int
	suite, agent string
	scale        float64
	ramp         time.Duration
	json         bool
	noPreflight  bool // skip the check of an external --agent
	against      string
	atOnce       int
	// audio, when set, places the suite's calls over Twilio Media Streams
	// with the caller's voice and cache, recognizing the agent's speech.
	audio        *audioFlags
	voice, cache string
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
	transport := transportNative
	if a.audio != nil {
		transport = a.audio.name()
		if a.cache == "" {
			a.cache = harness.DefaultSpeechCache()
		}
		a.audio.voice, a.audio.cache = a.voice, a.cache
	}
	var against map[string]string
	if a.against != "" {
		var prev harness.TextLoadResult
		data, err := os.ReadFile(a.against)
		if err == nil {
			err = json.Unmarshal(data, &prev)
		}
		if err == nil && len(prev.Verdicts) == 0 {
			err = fmt.Errorf("no verdicts in it (a load --json output)")
		}
		if err != nil {
			fmt.Fprintf(stderr, "callproof load: --against %s: %v\n", a.against, err)
			return exitUsage
		}
		against = prev.Verdicts
	}
	if a.agent != "" {
		if err := checkAgentFor(transport, a.agent); err != nil {
			fmt.Fprintf(stderr, "callproof load: %v\n", err)
			return exitUsage
		}
		pf := audioFlags{transport: transport}
		if a.audio != nil {
			pf = *a.audio
		}
		if !a.noPreflight && !preflight("load", pf, a.agent, stderr) {
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
		args := []string{"agent", "careful", "--listen", "127.0.0.1:0"}
		if a.audio != nil {
			// The project's audio-only agent: it speaks and sends no
			// transcript, so every utterance is recognized.
			args = append(args, "--transport", "twilio", "--no-transcript", "--speech-cache", a.cache)
		}
		if agent, url, err = startCareful(ctx, args); err != nil {
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
	o := harness.TextLoadOptions{Agent: url, Cases: cases, Calls: a.calls, Ramp: a.ramp, Scale: a.scale, Against: against, Concurrency: a.atOnce}
	bar := newProgress(stderr)
	o.Progress = bar.update
	stopBar := func() {}
	if a.audio != nil {
		o.Setup = func(env *harness.Env) (*harness.Hearing, error) {
			h, err := a.audio.setUp(env, "")
			if err == nil {
				stopBar = bar.recognition(h)
			}
			return h, err
		}
	}
	res, err := harness.RunTextLoad(ctx, o)
	stopBar()
	bar.done()
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
	if res.Overloaded > 0 || res.Usual < res.Scored || len(res.Errors) > 0 || res.Outcomes[trace.OutcomeHarnessError] > 0 ||
		(against != nil && res.AgainstSame < res.Calls) {
		return 1
	}
	return exitOK
}

func printTextLoad(w io.Writer, r textLoadReport, a textLoadArgs) {
	transport := transportNative
	if a.audio != nil {
		transport = a.audio.name() + ", agent speech recognized"
	}
	atOnce := r.Calls
	if a.atOnce > 0 {
		atOnce = min(a.atOnce, r.Calls)
	}
	fmt.Fprintf(w, "calls %d, %d at once (suite %s, %s, starts over %s, scale %g, %d cores) · %s\n", r.Calls, atOnce, r.Suite, transport, a.ramp, a.scale, runtime.NumCPU(), r.Duration.Round(time.Millisecond))
	var outs []string
	for o, n := range r.Outcomes {
		outs = append(outs, fmt.Sprintf("%s %d", o, n))
	}
	sort.Strings(outs)
	fmt.Fprintf(w, "outcomes: %s · overloaded %d · integrity %d\n", strings.Join(outs, ", "), r.Overloaded, r.Integrity)
	fmt.Fprintf(w, "verdicts: %d/%d scored calls got their scenario's usual verdicts · axis 6 decided in %d\n", r.Usual, r.Scored, r.Decided)
	for _, d := range r.Differing {
		fmt.Fprintf(w, "  %s\n", d)
	}
	if a.against != "" {
		fmt.Fprintf(w, "against %s: %d/%d calls got its verdicts\n", a.against, r.AgainstSame, r.Calls)
		for _, d := range r.AgainstDiffering {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
	if r.FrameLatenessMax > 0 {
		fmt.Fprintf(w, "caller frames: worst %s late\n", r.FrameLatenessMax.Round(time.Microsecond))
	}
	if g := r.Recognition; g != nil {
		fmt.Fprintf(w, "recognition: %d calls, %d first decodes, %d cross-checks (%d decoder runs taken from identical ones); %d decoders at once at nice %d (%d once no call is in real time); decoders' CPU %s\n",
			g.Calls, g.Drafts, g.Checks, g.Remembered, g.PoolSize, g.Nice, g.PoolWide, r.ChildCPU.Round(time.Millisecond))
		fmt.Fprintf(w, "recognition time: per call p50 %s max %s · after the last call's script %s · calls' real time p50 %s max %s\n",
			g.PerCallP50.Round(time.Millisecond), g.PerCallMax.Round(time.Millisecond), g.After.Round(time.Millisecond),
			g.RealTimeP50.Round(time.Millisecond), g.RealTimeMax.Round(time.Millisecond))
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
	for _, e := range r.AgentErrors {
		fmt.Fprintf(w, "agent error: %s\n", e)
	}
}

// startCareful runs `callproof agent careful` on a loopback port in a
// separate process and returns it with its URL.
func startCareful(ctx context.Context, args []string) (*exec.Cmd, string, error) {
	return startSelf(ctx, "the careful agent", args, func(l string) (string, bool) {
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
