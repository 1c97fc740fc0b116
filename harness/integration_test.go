package harness_test

// Live-call integration tests: the built-in core suite against the
// reference agents, in process, on loopback, end to end (scenario loader,
// mock backend, WebSocket caller, agent, scorer, gate). Run them with
//
//	go test -race -run 'Integration|Flaw|Determin' ./harness/
//
// Helpers shared with flaws_test.go and bench_test.go are prefixed "live"
// so they cannot collide with other test files of the package.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// liveFastScale is the time scale of the quick runs: every scripted and
// agent-side duration is twenty times shorter than real time.
const liveFastScale = 0.05

// liveCore loads the core pack, compiled, plus each scenario's expected
// block by id (the oracle; the compiler and scorer never read it).
func liveCore(tb testing.TB) ([]*scenarios.Compiled, map[string]scenarios.Expected) {
	tb.Helper()
	name, cases, err := harness.LoadSuite("core")
	require.NoError(tb, err)
	require.Equal(tb, "core", name)
	require.Len(tb, cases, 30)
	pack, err := scenarios.Pack("core")
	require.NoError(tb, err)
	want := make(map[string]scenarios.Expected, len(pack))
	for _, s := range pack {
		want[s.ID] = s.Expected
	}
	for _, c := range cases {
		require.Contains(tb, want, c.Scenario.ID)
	}
	return cases, want
}

// liveRun is one finished suite run.
type liveRun struct {
	Results []harness.CallResult
	Dir     string // results directory, when saved
}

// Scores returns the call scores in suite order.
func (r liveRun) Scores() []scorer.CallScore {
	out := make([]scorer.CallScore, len(r.Results))
	for i, c := range r.Results {
		out[i] = c.Score
	}
	return out
}

// Gate applies the seed's release gate with no policy.
func (r liveRun) Gate() harness.GateResult {
	calls := make([]harness.Call, len(r.Results))
	for i, c := range r.Results {
		calls[i] = harness.Call{History: c.History, Score: c.Score}
	}
	return harness.Gate(calls, harness.Policy{})
}

// liveAgent serves cfg on loopback until the test ends.
func liveAgent(tb testing.TB, cfg agents.Config) string {
	return liveServe(tb, cfg).URL
}

// liveServe serves cfg on loopback until the test ends; its Agent's
// Lateness is what a runner in this process asks of it.
func liveServe(tb testing.TB, cfg agents.Config) *agents.Running {
	tb.Helper()
	running, err := agents.Start(context.Background(), cfg, "127.0.0.1:0")
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = running.Close() })
	return running
}

// liveEnv starts a mock backend on loopback until the test ends.
func liveEnv(tb testing.TB) *harness.Env {
	tb.Helper()
	env, err := harness.NewEnv(harness.EnvOptions{})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = env.Close() })
	return env
}

// liveSuite runs cases against a fresh agent cfg at the given scale and
// concurrency. When CALLPROOF_KEEP names a directory, every run is saved
// under it (for `callproof show DIR CALL`).
func liveSuite(tb testing.TB, env *harness.Env, cfg agents.Config, cases []*scenarios.Compiled, scale float64, conc int) liveRun {
	tb.Helper()
	return liveSuiteOf(tb, env, cfg, cases, scale, conc, false)
}

// liveMeasuredSuite is liveSuite with the agent's pace measured: the
// agent runs in this process, so the runner asks it how late its timers
// and words ran (Runner.AgentLateness), and a call whose agent was
// starved past the overload bound is marked overloaded, as one whose
// harness was. The tests make stress repeats use it.
func liveMeasuredSuite(tb testing.TB, env *harness.Env, cfg agents.Config, cases []*scenarios.Compiled, scale float64, conc int) liveRun {
	tb.Helper()
	return liveSuiteOf(tb, env, cfg, cases, scale, conc, true)
}

// liveMeasuredBound is the overload bound of the tests that compare
// verdicts across runs of the in-process agents (liveMeasuredSuite):
// 750 ms of script time, 75 ms real at liveMeasuredScale, instead of the
// default 2 s. Beside three other helpers' suites (load 5-10), the
// calls whose verdicts differed from their scenario's usual ones had run
// 0.89-2.0 s late (the worst of their timers, words, reads, sends and
// tool departures), half of the usual ones within 0.5 s; and a naive
// int-09 whose noise reached the agent after its answer had ended showed
// a read and a send of 22 and 36 ms real (1.16 s of script time
// together, AgentLateness.RoundTrip). The core suite's tightest windows
// are of that size: a cough 200 ms after the agent starts a 1.1 s answer
// (int-08 to int-10). At the default bound such calls were compared, not
// placed again (docs/PERFORMANCE.md, "Flakes").
const liveMeasuredBound = 750 * time.Millisecond

// liveMeasuredScale is the time scale of the runs that compare verdicts
// across placings (livePlaceScored): twice liveFastScale, so a hiccup of
// the machine's costs half as much script time and liveMeasuredBound is
// 75 ms real. At 0.05 (37.5 ms real) a machine at load 2-3 left nearly
// every call of the flaw matrix out as overloaded, and at the default 2 s
// bound tf-01's verdicts moved with a call 1.3 s late; at 0.1 both tests
// passed 3 of 3 at load 2-4 and 3 of 3 under make stress's CPU hog
// (docs/PERFORMANCE.md, "Flakes"). Every window of the core suite is in
// script time, so the scale changes no verdict, only how much real time
// each one gives the machine.
const liveMeasuredScale = 0.1

func liveSuiteOf(tb testing.TB, env *harness.Env, cfg agents.Config, cases []*scenarios.Compiled, scale float64, conc int, measured bool) liveRun {
	tb.Helper()
	agent := liveServe(tb, cfg)
	url := agent.URL
	r := env.Runner()
	r.Concurrency, r.TimeScale, r.Suite, r.Agent = conc, scale, "core", cfg.Name
	if measured {
		r.AgentLateness = agent.Agent().Lateness
		r.OverloadBound = liveMeasuredBound
	}
	run := liveRun{}
	if keep := os.Getenv("CALLPROOF_KEEP"); keep != "" {
		run.Dir = filepath.Join(keep, strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name()), fmt.Sprintf("%s-%d", cfg.Name, time.Now().UnixNano()))
		res, err := harness.CreateResults(run.Dir, harness.Meta{Agent: cfg.Name, Suite: "core", TimeScale: scale, Calls: len(cases), Transport: "native"})
		require.NoError(tb, err)
		r.Results = res
		defer func() { require.NoError(tb, res.Close()) }()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := r.Run(ctx, url, cases)
	require.NoError(tb, err)
	require.Len(tb, out, len(cases))
	run.Results = out
	return run
}

// liveJudged places cases against cfg the way every test that judges
// the in-process agents' verdicts must: measured (liveMeasuredSuite, at
// liveMeasuredScale and liveMeasuredBound), each call that comes back
// overloaded placed again (livePlaceScored). A call still overloaded
// after livePlacings fails the test as "cannot judge": its verdicts are
// the starved machine's, not the agent's. Unmeasured, at liveFastScale,
// these tests failed on verdicts a starved agent moved at load 6-11
// (docs/PERFORMANCE.md, "Flakes").
func liveJudged(t *testing.T, env *harness.Env, cfg agents.Config, cases []*scenarios.Compiled, conc int) liveRun {
	t.Helper()
	res := livePlaceScored(t, env, cfg, cases, conc, func(s scorer.CallScore) {
		t.Errorf("cannot judge %s with %s: still overloaded after %d placings (%s); the machine was too busy, and an overloaded call is ours, not the agent's",
			s.Call, cfg.Name, livePlacings, s.Reason)
	})
	return liveRun{Results: res}
}

// liveLogTimelines logs two histories of one call side by side in time:
// the first run's and the one that differs from it.
func liveLogTimelines(t *testing.T, a, b *trace.History) {
	t.Helper()
	for _, h := range []*trace.History{a, b} {
		var w strings.Builder
		if err := reports.WriteTimeline(&w, h, scorer.Score(h)); err != nil {
			t.Logf("timeline: %v", err)
			continue
		}
		t.Logf("%s\n%s", h.Call, w.String())
	}
}

// liveVector is a call's six verdicts in axis order, e.g.
// "pass pass fail pass pass fail".
func liveVector(s scorer.CallScore) string {
	vs := make([]string, 0, 6)
	for _, a := range scorer.Axes() {
		vs = append(vs, string(s.Axis(a).Verdict))
	}
	return strings.Join(vs, " ")
}

// liveExpectedVector is the vector the expected block asks for.
func liveExpectedVector(e scenarios.Expected) string {
	v := func(ok bool) string {
		if ok {
			return string(scorer.Pass)
		}
		return string(scorer.Fail)
	}
	return strings.Join([]string{
		v(e.Captured), v(e.ActiveStateCorrect), v(e.ToolArgsCorrect),
		v(e.StaleWritePrevented), v(e.BackendCorrect), v(e.ConfirmationMatchesBackend),
	}, " ")
}

// liveFingerprint is what must not change between runs of one call:
// outcome, verdict vector and primary bucket.
func liveFingerprint(s scorer.CallScore) string {
	return fmt.Sprintf("%s | %s | %s", s.Outcome, liveVector(s), s.Primary)
}

// liveFinalIntent is the caller's last intent (I*).
func liveFinalIntent(h *trace.History) *trace.Intent {
	var in *trace.Intent
	for _, e := range h.Events {
		switch d := e.Data.(type) {
		case *trace.CallerSpeech:
			if e.Kind == trace.KindCallerSpeechFinal && d.Intent != nil {
				in = d.Intent
			}
		case *trace.CallerDTMF:
			if d.Intent != nil {
				in = d.Intent
			}
		}
	}
	return in
}

// liveCommits are the call's ledger commits of consequential tools.
func liveCommits(h *trace.History) []*trace.ToolEvent {
	cons := map[string]bool{}
	for _, t := range h.Start().Tools {
		cons[t.Name] = t.Consequential
	}
	var out []*trace.ToolEvent
	for _, e := range h.Events {
		if d, ok := e.Data.(*trace.ToolEvent); ok && e.Kind == trace.KindToolCommitted && cons[d.Tool] {
			out = append(out, d)
		}
	}
	return out
}

// liveCommitMatches: the commit is intent's action and the record it left
// holds every slot of the intent (the key slot as the record key).
func liveCommitMatches(h *trace.History, c *trace.ToolEvent, in *trace.Intent) bool {
	if c.Tool != in.Action {
		return false
	}
	spec, ok := trace.Catalog(h.Start().Tools, in.Action)
	if !ok {
		return false
	}
	for k, v := range in.Slots {
		if k == spec.KeyArg {
			if c.Key != v {
				return false
			}
		} else if c.After[k] != v {
			return false
		}
	}
	return true
}

// liveCheckLedger: the write the expected block requires is in the ledger,
// and no write is when it says should_execute: false.
func liveCheckLedger(t *testing.T, res harness.CallResult, want scenarios.Expected) {
	t.Helper()
	h := res.History
	in := liveFinalIntent(h)
	require.NotNil(t, in, "%s: no caller intent recorded", h.Call)
	assert.Equal(t, want.ShouldExecute, in.Execute, "%s: the script's final intent disagrees with expected.should_execute", h.Call)
	commits := liveCommits(h)
	if !want.ShouldExecute {
		assert.Empty(t, commits, "%s: should_execute is false but the ledger has consequential commits", h.Call)
		return
	}
	// An earlier write may have committed before the caller changed the
	// request (then put right); the last one must be the required write.
	if assert.NotEmpty(t, commits, "%s: the required write %s %v never committed", h.Call, in.Action, in.Slots) {
		last := commits[len(commits)-1]
		assert.True(t, liveCommitMatches(h, last, in), "%s: the last commit %s %s/%s %v does not match the final intent %s %v",
			h.Call, last.Tool, last.Table, last.Key, last.After, in.Action, in.Slots)
	}
}

// liveAssertCarefulRun is everything a careful run of core must show.
func liveAssertCarefulRun(t *testing.T, run liveRun, want map[string]scenarios.Expected) {
	t.Helper()
	integrity, passes := 0, 0
	for _, c := range run.Results {
		s := c.Score
		assert.Equal(t, trace.OutcomeScored, s.Outcome, "%s: outcome %s (%s)", s.Call, s.Outcome, s.Reason)
		for _, a := range s.Axes {
			assert.NotEqual(t, scorer.Unknown, a.Verdict, "%s: %s is unknown", s.Call, a.Axis)
			if a.Verdict == scorer.Pass {
				passes++
			}
		}
		if s.Integrity {
			integrity++
		}
		assert.Equal(t, liveExpectedVector(want[s.Scenario]), liveVector(s), "%s: verdicts differ from the expected block (primary %s)", s.Call, s.Primary)
		liveCheckLedger(t, c, want[s.Scenario])
	}
	assert.Equal(t, 30, integrity, "end-to-end integrity; failed: %v", harness.Failed(run.Scores()))
	assert.Equal(t, 180, passes, "axis passes")
	g := run.Gate()
	assert.False(t, g.Broken, g.Reason)
	assert.True(t, g.Holds, "the gate must hold for careful: %+v", g.Rules)
}

// TestIntegrationCarefulCore: careful passes every core call on every axis,
// leaves exactly the write the oracle requires, holds the gate, and its
// verdicts are the same at real time and at liveMeasuredScale.
func TestIntegrationCarefulCore(t *testing.T) {
	cases, want := liveCore(t)
	env := liveEnv(t)

	fast := liveJudged(t, env, agents.Careful(), cases, 30)
	t.Run("scaled", func(t *testing.T) { liveAssertCarefulRun(t, fast, want) })

	if testing.Short() {
		t.Skip("-short: skipping the real-time (scale 1.0) run")
	}
	start := time.Now()
	slow := liveSuite(t, env, agents.Careful(), cases, 1.0, 30)
	t.Logf("core against careful at scale 1.0, concurrency 30: %s", time.Since(start).Round(time.Millisecond))
	t.Run("scale1.0", func(t *testing.T) { liveAssertCarefulRun(t, slow, want) })

	for i := range cases {
		assert.Equal(t, liveVector(slow.Results[i].Score), liveVector(fast.Results[i].Score),
			"%s: verdicts at 1.0 and %g differ", cases[i].Scenario.ID, liveMeasuredScale)
	}
}

// TestIntegrationCarefulMatchesExpected: the expected block of every core
// scenario is the oracle, and careful meets it verdict for verdict.
func TestIntegrationCarefulMatchesExpected(t *testing.T) {
	cases, want := liveCore(t)
	run := liveJudged(t, liveEnv(t), agents.Careful(), cases, 30)
	for _, c := range run.Results {
		e := want[c.Score.Scenario]
		// Every core scenario expects a correct agent to pass all six.
		all := scenarios.Expected{Captured: true, ActiveStateCorrect: true, ToolArgsCorrect: true, StaleWritePrevented: true,
			BackendCorrect: true, ConfirmationMatchesBackend: true, ShouldExecute: e.ShouldExecute}
		assert.Equal(t, all, e, "%s: expected block", c.Score.Scenario)
		assert.Equal(t, liveExpectedVector(e), liveVector(c.Score), "%s", c.Score.Call)
	}
}

// liveSeedBuckets are the seven root causes of seed 001's naive run.
var liveSeedBuckets = []scorer.Bucket{
	scorer.BucketStaleToolArgs, scorer.BucketUnverifiedResult, scorer.BucketInflightNotCanceled,
	scorer.BucketNoiseBargeIn, scorer.BucketUnsafeRetry, scorer.BucketEarlyConfirmation,
	scorer.BucketMissingIdempotency,
}

// liveAxisPasses counts passes per axis.
func liveAxisPasses(scores []scorer.CallScore) map[scorer.Axis]int {
	n := map[scorer.Axis]int{}
	for _, s := range scores {
		for _, a := range s.Axes {
			if a.Verdict == scorer.Pass {
				n[a.Axis]++
			}
		}
	}
	return n
}

// livePrimaries counts calls per primary bucket.
func livePrimaries(scores []scorer.CallScore) map[scorer.Bucket]int {
	n := map[scorer.Bucket]int{}
	for _, s := range scores {
		if s.Primary != "" {
			n[s.Primary]++
		}
	}
	return n
}

// TestIntegrationNaiveCore: naive shows the seed's shape — it hears the
// caller (dialog axes high) but acts on stale or unverified results
// (action axes low), mostly for stale tool args, across the seed's buckets.
func TestIntegrationNaiveCore(t *testing.T) {
	cases, _ := liveCore(t)
	run := liveJudged(t, liveEnv(t), agents.Naive(), cases, 30)
	scores := run.Scores()
	for _, s := range scores {
		assert.Equal(t, trace.OutcomeScored, s.Outcome, "%s: %s", s.Call, s.Reason)
		if !s.Integrity {
			assert.NotEmpty(t, s.Primary, "%s: a failed call always has a primary bucket", s.Call)
		}
	}

	g := run.Gate()
	assert.False(t, g.Broken, g.Reason)
	assert.False(t, g.Holds, "the gate must fail for naive")

	pass := liveAxisPasses(scores)
	t.Logf("naive axis passes: %v", pass)
	for _, a := range []scorer.Axis{scorer.Captured, scorer.ActiveStateCorrect} {
		assert.GreaterOrEqual(t, pass[a], 20, "dialog-level axis %s", a)
	}
	for _, a := range []scorer.Axis{scorer.ToolArgsCorrect, scorer.StaleWritePrevented, scorer.BackendCorrect, scorer.ConfirmationMatchesBackend} {
		assert.LessOrEqual(t, pass[a], 20, "action-level axis %s", a)
	}

	prim := livePrimaries(scores)
	t.Logf("naive primary buckets: %v", prim)
	for b, n := range prim {
		if b != scorer.BucketStaleToolArgs {
			assert.Less(t, n, prim[scorer.BucketStaleToolArgs], "%s (%d) rivals stale_tool_args (%d) as the largest primary bucket", b, n, prim[scorer.BucketStaleToolArgs])
		}
	}

	seen := map[scorer.Bucket]bool{}
	for _, s := range scores {
		if s.Primary != "" {
			seen[s.Primary] = true
		}
		for _, b := range s.Secondary {
			seen[b] = true
		}
	}
	var present, missing []scorer.Bucket
	for _, b := range liveSeedBuckets {
		if seen[b] {
			present = append(present, b)
		} else {
			missing = append(missing, b)
		}
	}
	assert.GreaterOrEqual(t, len(present), 6, "seed buckets present: %v, missing: %v", present, missing)
}

// TestDeterminismCore: five runs of core at concurrency 64 and scale 0.1
// (liveMeasuredScale)
// give every call the same outcome, verdict vector and primary bucket, for
// both reference agents. A call marked overloaded — its harness, or its
// agent (in this process, liveMeasuredSuite), ran more than
// liveMeasuredBound late — is no verdict: it is placed again (livePlaceScored, up to
// livePlacings times in all), and one still overloaded after that is
// logged with its reason and left out of the comparison. The test fails
// for left-out calls only where it cannot judge: a scenario left with
// fewer than two scored runs has nothing to compare, and the failure says
// so (docs/PERFORMANCE.md, "Flakes").
func TestDeterminismCore(t *testing.T) {
	cases, _ := liveCore(t)
	env := liveEnv(t)
	const runs = 5
	for _, cfg := range []agents.Config{agents.Careful(), agents.Naive()} {
		t.Run(cfg.Name, func(t *testing.T) {
			// The first run's verdicts per call, and its history to show
			// beside a run that differs.
			first := map[string]string{}
			firstH := map[string]*trace.History{}
			compared := map[string]int{}
			left := map[string][]string{} // scenario -> why each left-out run was
			for i := 0; i < runs; i++ {
				results := livePlaceScored(t, env, cfg, cases, 64, func(s scorer.CallScore) {
					left[s.Scenario] = append(left[s.Scenario], fmt.Sprintf("run %d: %s", i+1, s.Reason))
					t.Logf("%s, run %d, left out after %d placings: %s", s.Call, i+1, livePlacings, s.Reason)
				})
				liveLogPace(t, i+1, liveRun{Results: results})
				for _, c := range results {
					s, h := c.Score, c.History
					// A call the harness could not keep on time, or whose
					// agent was starved, is no verdict (left, above).
					if liveOverloaded(s) {
						continue
					}
					compared[s.Call]++
					fp := liveFingerprint(s)
					if _, ok := first[s.Call]; !ok {
						first[s.Call], firstH[s.Call] = fp, h
						continue
					}
					if !assert.Equal(t, first[s.Call], fp, "%s: run %d differs from the first (outcome | verdicts | primary); agent lateness then %s, now %s", s.Call, i+1, liveAgentLate(firstH[s.Call]), liveAgentLate(h)) {
						liveLogTimelines(t, firstH[s.Call], h)
					}
				}
			}
			n := 0
			for _, ws := range left {
				n += len(ws)
			}
			t.Logf("left out %d of %d calls as overloaded after %d placings each", n, runs*len(cases), livePlacings)
			var unjudged []string
			for _, c := range cases {
				id := c.Scenario.ID
				if compared[id] < 2 {
					unjudged = append(unjudged, fmt.Sprintf("%s (scored in %d of %d runs; left out: %s)", id, compared[id], runs, strings.Join(left[id], "; ")))
				}
			}
			require.Empty(t, unjudged, "cannot judge determinism: the machine was too busy for these scenarios to be scored in two runs, even placed %d times each (overloaded calls are ours, not the agent's)", livePlacings)
		})
	}
}

// liveOverloaded: the call was marked overloaded (its harness or its
// in-process agent ran later than the bound), so it carries no verdict.
func liveOverloaded(s scorer.CallScore) bool {
	return s.Outcome == trace.OutcomeHarnessError && strings.HasPrefix(s.Reason, harness.ReasonOverloaded+":")
}

// liveAgentLate is a call's in-process agent lateness for a message:
// its latest timer and its speech's drift, real time.
func liveAgentLate(h *trace.History) string {
	end := h.End()
	if end == nil || end.AgentLateness == nil {
		return "unknown"
	}
	a := end.AgentLateness
	return fmt.Sprintf("timers %s, speech %s, reads %s, sends %s, tools %s (worst %s of script time)", a.Timers.Max.Round(time.Millisecond), a.Speech.Max.Round(time.Millisecond),
		a.Reads.Max.Round(time.Millisecond), a.Sends.Max.Round(time.Millisecond), a.Tools.Max.Round(time.Millisecond), a.Worst.Round(time.Millisecond))
}

// liveLogPace logs a run's harness lateness and its in-process agent's
// (each call's latest timer and its speech's drift, real time), and the
// CPU pressure.
func liveLogPace(t *testing.T, run int, r liveRun) {
	t.Helper()
	var timers, speech, reads, sends, tools []time.Duration
	for _, c := range r.Results {
		if end := c.History.End(); end != nil && end.AgentLateness != nil {
			a := end.AgentLateness
			timers = append(timers, a.Timers.Max)
			speech = append(speech, a.Speech.Max)
			reads = append(reads, a.Reads.Max)
			sends = append(sends, a.Sends.Max)
			tools = append(tools, a.Tools.Max)
		}
	}
	dist := func(ds []time.Duration) string {
		if len(ds) == 0 {
			return "none"
		}
		slices.Sort(ds)
		at := func(q float64) time.Duration {
			return ds[min(len(ds)-1, int(q*float64(len(ds))))].Round(time.Millisecond)
		}
		return fmt.Sprintf("p50 %s p99 %s max %s", at(0.5), at(0.99), at(1))
	}
	if h := reports.Summarize(r.Scores()).Harness; h != nil {
		t.Logf("run %d: harness lateness p50 %s p99 %s max %s (%s, script time); agent timers %s, speech drift %s, reads %s, sends %s, tool departures %s (real time, %d calls); CPU pressure p50 %.0f%%",
			run, h.P50, h.P99, h.Max, h.WorstCall, dist(timers), dist(speech), dist(reads), dist(sends), dist(tools), len(timers), 100*h.PressureP50)
	}
}
