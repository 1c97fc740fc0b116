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
	// Ramp spreads the calls' starts over this long (default
	// DefaultTextLoadRamp), as a run's first wave would be.
	Ramp time.Duration
	// Scale is the time scale offered to the agent (default 1).
	Scale float64
	// OverloadBound is the Runner's (0: DefaultOverloadBound).
	OverloadBound time.Duration
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
	Errors          []string      `json:"errors,omitempty"` // harness errors other than overload, the first few
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
	r := env.Runner()
	r.Concurrency, r.TimeScale, r.Ramp, r.OverloadBound = o.Calls, o.Scale, o.Ramp, o.OverloadBound
	r.Suite, r.Agent, r.DropHistories = "load", o.Agent, true
	ps := make([]Placement, o.Calls)
	for i := range ps {
		c := o.Cases[i%len(o.Cases)]
		ps[i] = Placement{Case: c, ID: c.Scenario.ID + ".c" + strconv.Itoa(i/len(o.Cases)+1)}
	}
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	baseRSS := rssBytes()
	start := time.Now()
	res, err := r.Place(ctx, o.Agent, ps)
	if err != nil {
		return TextLoadResult{}, err
	}
	out := TextLoadResult{Calls: o.Calls, Duration: time.Since(start)}
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	out.CPUPerCall = cpu / time.Duration(o.Calls)
	out.PeakRSSBytes = after.Maxrss * 1024
	out.RSSPerCallBytes = max(out.PeakRSSBytes-baseRSS, 0) / int64(o.Calls)

	scores := make([]scorer.CallScore, len(res))
	for i, c := range res {
		scores[i] = c.Score
	}
	sum := reports.Summarize(scores)
	out.Outcomes, out.Lateness, out.Integrity = sum.Outcomes, sum.Harness, sum.Integrity
	if sum.Harness != nil {
		out.Overloaded = sum.Harness.Overloaded
	}
	for _, s := range scores {
		if s.Outcome == trace.OutcomeHarnessError && !strings.HasPrefix(s.Reason, ReasonOverloaded+":") && len(out.Errors) < 5 {
			out.Errors = append(out.Errors, s.Call+": "+s.Reason)
		}
	}
	out.Scored, out.Usual, out.Differing = usualVerdicts(scores)
	return out, nil
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
