package harness

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// TextLoadOptions set up a text-mode load run: Calls native-protocol calls
// at once against one agent, drawn round-robin from a suite's scenarios
// (call ids SCENARIO.cK, copy K), each scored as in a run.
type TextLoadOptions struct {
	Agent string
	Cases []*scenarios.Compiled
	Calls int
	// Concurrency is how many calls run at once (0: all of them); fewer
	// measures the verdicts a later run's Against compares with.
	Concurrency int
	// Ramp spreads the calls' starts over this long (default
	// DefaultTextLoadRamp), as a run's first wave would be.
	Ramp time.Duration
	// Scale is the time scale offered to the agent (default 1).
	Scale float64
	// OverloadBound is the Runner's (0: DefaultOverloadBound).
	OverloadBound time.Duration
	// Setup, when set, changes the run's environment before the first
	// call: an audio dialect's transport (load --transport twilio --suite)
	// and the run's recognizer, whose figures go into the result.
	Setup func(*Env) (*Hearing, error)
	// Against maps scenarios to the verdicts expected of every copy
	// (TextLoadResult.Verdicts of another run, e.g. one at 10 calls).
	Against map[string]string
	// Progress, when set, is called after each scored call.
	Progress func(done, total int, s scorer.CallScore)
}

// DefaultTextLoadRamp spreads a text load run's starts: a few thousand
// WebSocket handshakes in the same millisecond would measure the
// listener's accept queue, not the calls.
const DefaultTextLoadRamp = 2 * time.Second

// TextLoadResult is what a text load run measured.
type TextLoadResult struct {
	Calls    int                   `json:"calls"`
	Outcomes map[trace.Outcome]int `json:"outcomes"`
	// Overloaded calls are harness_error, ReasonOverloaded.
	Overloaded int `json:"overloaded"`
	// Usual counts the scored calls whose verdicts (outcome, six axes,
	// primary bucket) are their scenario's most common among the copies;
	// Differing names up to ten others, with what they got.
	Usual     int      `json:"usual"`
	Scored    int      `json:"scored"`
	Differing []string `json:"differing,omitempty"`
	Integrity int      `json:"integrity"`
	// Lateness: each call's worst harness lateness, over the calls.
	Lateness *reports.HarnessLate `json:"harness_lateness,omitempty"`
	Duration time.Duration        `json:"duration"`
	// CPUPerCall is the harness process's CPU time per call; RSS its
	// peak resident memory, and that peak less the memory before the
	// first call, per call.
	CPUPerCall      time.Duration `json:"cpu_per_call"`
	PeakRSSBytes    int64         `json:"peak_rss_bytes"`
	RSSPerCallBytes int64         `json:"rss_per_call_bytes"`
	Errors          []string      `json:"errors,omitempty"`       // harness errors other than overload, the first few
	AgentErrors     []string      `json:"agent_errors,omitempty"` // agent errors' reasons, the first few
	// Verdicts is each scenario's usual verdicts (verdictKey), for a
	// later run's Against.
	Verdicts map[string]string `json:"verdicts"`
	// Decided counts the scored calls whose axis 6 is pass or fail.
	Decided int `json:"decided_axis6"`
	// AgainstSame counts the calls whose verdicts are Against's (with
	// Against); AgainstDiffering names up to ten others.
	AgainstSame      int      `json:"against_same,omitempty"`
	AgainstDiffering []string `json:"against_differing,omitempty"`
	// ChildCPU is the CPU of the harness's finished child processes
	// (the recognizer's decoders).
	ChildCPU time.Duration `json:"child_cpu"`
	// FrameLatenessMax is the latest any caller frame of an audio call
	// went out.
	FrameLatenessMax time.Duration     `json:"frame_lateness_max,omitempty"`
	Recognition      *RecognitionStats `json:"recognition,omitempty"`
}

// RunTextLoad places o.Calls calls at once and measures the harness.
func RunTextLoad(ctx context.Context, o TextLoadOptions) (TextLoadResult, error) {
	if o.Calls < 1 || len(o.Cases) == 0 || o.Agent == "" {
		return TextLoadResult{}, fmt.Errorf("load: need calls, a suite and an agent")
	}
	if o.Ramp <= 0 {
		o.Ramp = DefaultTextLoadRamp
	}
	if o.Scale <= 0 {
		o.Scale = 1
	}
	env, err := NewEnv(EnvOptions{})
	if err != nil {
		return TextLoadResult{}, err
	}
	defer env.Close()
	var hear *Hearing
	if o.Setup != nil {
		if hear, err = o.Setup(env); err != nil {
			return TextLoadResult{}, err
		}
	}
	r := env.Runner()
	r.Progress = o.Progress
	r.Concurrency, r.TimeScale, r.Ramp, r.OverloadBound = o.Calls, o.Scale, o.Ramp, o.OverloadBound
	if o.Concurrency > 0 {
		r.Concurrency = min(o.Concurrency, o.Calls)
	}
	r.Suite, r.Agent, r.DropHistories = "load", o.Agent, true
	ps := make([]Placement, o.Calls)
	for i := range ps {
		c := o.Cases[i%len(o.Cases)]
		ps[i] = Placement{Case: c, ID: c.Scenario.ID + ".c" + strconv.Itoa(i/len(o.Cases)+1)}
	}
	var before, kidsBefore syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kidsBefore)
	baseRSS := rssBytes()
	start := time.Now()
	res, err := r.Place(ctx, o.Agent, ps)
	if err != nil {
		return TextLoadResult{}, err
	}
	out := TextLoadResult{Calls: o.Calls, Duration: time.Since(start)}
	var after, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	out.ChildCPU = time.Duration(kids.Utime.Nano() + kids.Stime.Nano() - kidsBefore.Utime.Nano() - kidsBefore.Stime.Nano())
	if hear != nil {
		st := hear.Stats()
		out.Recognition = &st
	}
	out.CPUPerCall = cpu / time.Duration(o.Calls)
	out.PeakRSSBytes = after.Maxrss * 1024
	out.RSSPerCallBytes = max(out.PeakRSSBytes-baseRSS, 0) / int64(o.Calls)

	scores := make([]scorer.CallScore, len(res))
	for i, c := range res {
		scores[i] = c.Score
	}
	sum := reports.Summarize(scores)
	out.Outcomes, out.Lateness, out.Integrity = sum.Outcomes, sum.Harness, sum.Integrity
	if sum.Audio != nil {
		out.FrameLatenessMax = sum.Audio.WorstLateness
	}
	if sum.Harness != nil {
		out.Overloaded = sum.Harness.Overloaded
	}
	for _, s := range scores {
		if s.Outcome == trace.OutcomeHarnessError && !strings.HasPrefix(s.Reason, ReasonOverloaded+":") && len(out.Errors) < 5 {
			out.Errors = append(out.Errors, s.Call+": "+s.Reason)
		}
		if s.Outcome == trace.OutcomeAgentError && len(out.AgentErrors) < 5 {
			out.AgentErrors = append(out.AgentErrors, s.Call+": "+s.Reason)
		}
	}
	out.Scored, out.Usual, out.Differing = usualVerdicts(scores)
	out.Verdicts = map[string]string{}
	byScenario := map[string][]scorer.CallScore{}
	for _, s := range scores {
		if s.Outcome != trace.OutcomeHarnessError {
			byScenario[s.Scenario] = append(byScenario[s.Scenario], s)
		}
		if v := s.Axis(scorer.ConfirmationMatchesBackend).Verdict; v == scorer.Pass || v == scorer.Fail {
			out.Decided++
		}
	}
	for sc, ss := range byScenario {
		out.Verdicts[sc] = commonKey(ss)
	}
	if o.Against != nil {
		for _, s := range scores {
			want, k := o.Against[s.Scenario], verdictKey(s)
			if k == want {
				out.AgainstSame++
			} else if len(out.AgainstDiffering) < 10 {
				out.AgainstDiffering = append(out.AgainstDiffering, fmt.Sprintf("%s: %s (expected %s)", s.Call, k, want))
			}
		}
	}
	return out, nil
}

// commonKey is the most common verdicts among one scenario's calls.
func commonKey(ss []scorer.CallScore) string {
	n := map[string]int{}
	best := ""
	for _, s := range ss {
		k := verdictKey(s)
		n[k]++
		if n[k] > n[best] || (n[k] == n[best] && k < best) {
			best = k
		}
	}
	return best
}

// usualVerdicts compares each scored call's verdicts with the most common
// among its scenario's scored copies.
func usualVerdicts(scores []scorer.CallScore) (scored, usual int, differing []string) {
	byScenario := map[string]map[string]int{}
	for _, s := range scores {
		if s.Outcome == trace.OutcomeHarnessError {
			continue
		}
		if byScenario[s.Scenario] == nil {
			byScenario[s.Scenario] = map[string]int{}
		}
		byScenario[s.Scenario][verdictKey(s)]++
	}
	common := map[string]string{}
	for sc, keys := range byScenario {
		best, n := "", -1
		for k, c := range keys {
			if c > n || (c == n && k < best) {
				best, n = k, c
			}
		}
		common[sc] = best
	}
	var odd []string
	for _, s := range scores {
		if s.Outcome == trace.OutcomeHarnessError {
			continue
		}
		scored++
		if k := verdictKey(s); k == common[s.Scenario] {
			usual++
		} else {
			odd = append(odd, fmt.Sprintf("%s: %s (usually %s)", s.Call, k, common[s.Scenario]))
		}
	}
	sort.Strings(odd)
	if len(odd) > 10 {
		odd = odd[:10]
	}
	return scored, usual, odd
}

// verdictKey is a call's verdicts in one comparable line.
func verdictKey(s scorer.CallScore) string {
	var b strings.Builder
	b.WriteString(string(s.Outcome))
	for _, ax := range scorer.Axes() {
		b.WriteString(" " + string(s.Axis(ax).Verdict))
	}
	if s.Primary != "" {
		b.WriteString(" " + string(s.Primary))
	}
	return b.String()
}
