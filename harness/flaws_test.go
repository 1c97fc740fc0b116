package harness_test

// The flaw matrix: each failure mode of the reference engine, switched on or
// off alone, against core. It proves the harness attributes every root
// cause to the flaw that produces it, and that every core scenario catches
// at least one named flaw.

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// liveCause is one root cause as the flaw matrix tells them apart:
// stale_tool_args is split by how the stale write got to the backend.
type liveCause string

const (
	liveStaleSent     liveCause = "stale_tool_args/sent_after_onset" // built before the change, sent after the caller began it
	liveStaleInflight liveCause = "stale_tool_args/in_flight"        // sent before the change, left to commit after it
)

// liveCauseOf is a call's primary root cause, with stale_tool_args split:
// "sent after onset" when its consequential request reached the backend
// after the onset of the caller's challenge, else "in flight".
func liveCauseOf(h *trace.History, s scorer.CallScore) liveCause {
	if s.Primary != scorer.BucketStaleToolArgs {
		return liveCause(s.Primary)
	}
	onset := -1
	for _, e := range h.Events {
		if d, ok := e.Data.(*trace.CallerSpeech); ok && e.Kind == trace.KindCallerSpeechStart &&
			(d.Act == trace.ActCorrect || d.Act == trace.ActNegate || d.Act == trace.ActInterrupt) {
			onset = e.Seq
			break
		}
	}
	for _, b := range s.Buckets {
		if b.Bucket != scorer.BucketStaleToolArgs {
			continue
		}
		for _, f := range b.Findings {
			for _, seq := range f.Events {
				if e := h.BySeq(seq); e != nil && e.Kind == trace.KindToolReceived && onset > 0 && seq > onset {
					return liveStaleSent
				}
			}
		}
	}
	return liveStaleInflight
}

// liveFlawCauses maps each of naive's flaws to the root causes it produces
// on its own (careful with that flaw switched on shows only these), and
// liveFlawVanish to those that disappear when it alone is switched off in
// naive. Decided from observed runs of core at 0.05:
//
//   - keeps_built_calls: a call built before a correction or stop is sent
//     after the caller's onset: stale_tool_args, sent after onset
//     (corr-02/05/07/09, int-03/04).
//   - keeps_sent_calls: a held write is never cancelled and commits after
//     the change: stale_tool_args, in flight, when it carried a replaced
//     value (corr-03/06/08, int-06); inflight_not_cancelled when the action
//     was withdrawn (corr-10, int-05).
//   - trusts_tool_results: a wrong record is confirmed:
//     unverified_tool_result (tf-03). A 202 is not a result, so it leaves
//     202s alone (the flaws are orthogonal).
//   - any_sound_barges_in: noise_as_barge_in (int-08/09/10).
//   - unkeyed_retries: a retry after a bad answer commits again
//     (unsafe_retry: tf-02/07/08), a duplicated delivery commits twice
//     (missing_idempotency_key: tf-06), and after two 503s the single
//     unkeyed retry gives up (tf-10: gave_up_on_transient_error).
//   - confirms_on_accept: "Done" on a 202 before the commit:
//     early_confirmation (tf-05).
var liveFlawCauses = map[agents.Flaw][]liveCause{
	agents.KeepsBuiltCalls:   {liveStaleSent},
	agents.KeepsSentCalls:    {liveStaleInflight, liveCause(scorer.BucketInflightNotCanceled)},
	agents.TrustsToolResults: {liveCause(scorer.BucketUnverifiedResult)},
	agents.AnySoundBargesIn:  {liveCause(scorer.BucketNoiseBargeIn)},
	agents.UnkeyedRetries:    {liveCause(scorer.BucketUnsafeRetry), liveCause(scorer.BucketMissingIdempotency), liveCause(scorer.BucketGaveUp)},
	agents.ConfirmsOnAccept:  {liveCause(scorer.BucketEarlyConfirmation)},
}

var liveFlawVanish = map[agents.Flaw][]liveCause{
	agents.KeepsBuiltCalls:   {liveStaleSent},
	agents.KeepsSentCalls:    {liveStaleInflight, liveCause(scorer.BucketInflightNotCanceled)},
	agents.TrustsToolResults: {liveCause(scorer.BucketUnverifiedResult)},
	agents.AnySoundBargesIn:  {liveCause(scorer.BucketNoiseBargeIn)},
	agents.UnkeyedRetries:    {liveCause(scorer.BucketUnsafeRetry), liveCause(scorer.BucketMissingIdempotency), liveCause(scorer.BucketGaveUp)},
	agents.ConfirmsOnAccept:  {liveCause(scorer.BucketEarlyConfirmation)},
}

// liveCauses counts primary causes over a run.
func liveCauses(run liveRun) map[liveCause]int {
	n := map[liveCause]int{}
	for _, c := range run.Results {
		if c.Score.Primary != "" {
			n[liveCauseOf(c.History, c.Score)]++
		}
	}
	return n
}

// TestFlawMatrixNaive switches each of naive's flaws off alone: the root
// causes that flaw produces disappear as primary.
func TestFlawMatrixNaive(t *testing.T) {
	cases, _ := liveCore(t)
	env := liveEnv(t)
	full := agents.Naive()
	require.Len(t, full.FlawList(), len(liveFlawCauses), "naive's flaws changed: update liveFlawCauses")
	base := liveJudged(t, env, full, cases, 30)
	baseCauses := liveCauses(base)
	t.Logf("naive: primary causes %v", baseCauses)
	for _, f := range full.FlawList() {
		require.Contains(t, liveFlawVanish, f, "no mapping for naive's flaw %s", f)
		for _, c := range liveFlawVanish[f] {
			assert.Positive(t, baseCauses[c], "with every flaw on, %s (from %s) is never primary", c, f)
		}
	}
	check := func(t *testing.T, cfg agents.Config, gone []liveCause) {
		run := liveJudged(t, env, cfg, cases, 30)
		scores := run.Scores()
		t.Logf("%s: integrity %d/30, primary causes %v", cfg.Name, liveIntegrity(scores), liveCauses(run))
		for _, c := range run.Results {
			s := c.Score
			assert.Equal(t, trace.OutcomeScored, s.Outcome, "%s: %s", s.Call, s.Reason)
			if s.Primary == "" {
				continue
			}
			cause := liveCauseOf(c.History, s)
			assert.NotContains(t, gone, cause, "%s: primary cause %s remains in %s (%s)", s.Call, cause, cfg.Name, liveWhy(s))
		}
	}
	for _, f := range full.FlawList() {
		t.Run(string(f), func(t *testing.T) {
			cfg := full.With(f, false)
			cfg.Name = "naive-without-" + string(f)
			check(t, cfg, liveFlawVanish[f])
		})
	}
	t.Run("joint", func(t *testing.T) {
		cfg := full.With(agents.ConfirmsOnAccept, false).With(agents.TrustsToolResults, false)
		cfg.Name = "naive-without-confirms_on_accept-and-trusts_tool_results"
		check(t, cfg, []liveCause{liveCause(scorer.BucketEarlyConfirmation), liveCause(scorer.BucketUnverifiedResult)})
	})
}

// liveConsistentAxes: the axes on which a scenario of each kind is meant
// to catch a flaw (from the core descriptions).
func liveConsistentAxes(category, setupStage string) []string {
	switch {
	case setupStage == "background_noise":
		return []string{string(scorer.Captured)}
	case category == "tool_failure":
		return []string{string(scorer.Captured), string(scorer.StaleWritePrevented), string(scorer.BackendCorrect), string(scorer.ConfirmationMatchesBackend)}
	}
	return []string{string(scorer.Captured), string(scorer.ActiveStateCorrect), string(scorer.ToolArgsCorrect), string(scorer.StaleWritePrevented)}
}

// TestFlawMatrixCoverage switches each named flaw on alone in careful:
// every core scenario is failed (integrity false, some axis failing) by at
// least one flaw, on an axis its description is about; and each of naive's
// flaws alone produces only the root causes mapped to it. A call marked
// overloaded (harness or in-process agent over the bound) is no verdict:
// it is placed again, up to livePlacings times, and one still overloaded
// after that is left out. Left-out calls fail the test only where it
// cannot judge — a scenario no scored call caught while some of its calls
// were left out, a naive flaw caught nowhere while some of its calls were
// — and the failure says so (docs/PERFORMANCE.md, "Flakes").
func TestFlawMatrixCoverage(t *testing.T) {
	cases, _ := liveCore(t)
	env := liveEnv(t)
	caughtBy := map[string]map[string]bool{} // scenario -> failed axes over all flaws
	names := map[string][]string{}
	excluded := map[string][]string{} // scenario -> flaws whose call stayed overloaded
	for _, f := range agents.AllFlaws() {
		cfg := agents.Careful().With(f, true)
		cfg.Name = "careful-with-" + string(f)
		results := livePlaceScored(t, env, cfg, cases, 30, func(s scorer.CallScore) {
			excluded[s.Scenario] = append(excluded[s.Scenario], string(f))
			t.Logf("%s with %s, left out: %s", s.Call, f, s.Reason)
		})
		var failed []string
		for _, c := range results {
			s := c.Score
			if liveOverloaded(s) {
				continue
			}
			assert.NotEqual(t, trace.OutcomeHarnessError, s.Outcome, "%s with %s: %s", s.Call, f, s.Reason)
			axes := liveFailedAxes(s)
			if s.Integrity || len(axes) == 0 {
				continue // passed, or excluded / unknown: not caught
			}
			failed = append(failed, s.Scenario)
			if caughtBy[s.Scenario] == nil {
				caughtBy[s.Scenario] = map[string]bool{}
			}
			for _, a := range axes {
				caughtBy[s.Scenario][a] = true
			}
			names[s.Scenario] = append(names[s.Scenario], string(f)+": "+strings.Join(axes, ","))
			if allowed, naive := liveFlawCauses[f]; naive {
				assert.Contains(t, allowed, liveCauseOf(c.History, s), "%s with %s alone: unexpected primary cause (%s)", s.Call, f, liveWhy(s))
			}
		}
		sort.Strings(failed)
		t.Logf("careful + %s fails %d: %v", f, len(failed), failed)
		if _, naive := liveFlawCauses[f]; naive && len(failed) == 0 {
			var out []string
			for id, fs := range excluded {
				if slices.Contains(fs, string(f)) {
					out = append(out, id)
				}
			}
			sort.Strings(out)
			if len(out) > 0 {
				t.Errorf("cannot judge naive's flaw %s: caught by none of the core scenarios scored, and %v were left out as overloaded after %d placings (the machine was too busy; overloaded calls are ours, not the agent's)", f, out, livePlacings)
			} else {
				t.Errorf("naive's flaw %s is caught by no core scenario", f)
			}
		}
		// ignores_barge_in is caught by none: every core read-back ends
		// within the 1.5 s yield bound of the caller's onset anyway.
	}
	left := 0
	for _, fs := range excluded {
		left += len(fs)
	}
	t.Logf("left out %d of %d calls as overloaded after %d placings", left, len(cases)*len(agents.AllFlaws()), livePlacings)
	for _, c := range cases {
		id := c.Scenario.ID
		stage, _ := c.Scenario.Setup["interrupt_stage"].(string)
		ok := false
		for _, a := range liveConsistentAxes(string(c.Scenario.Category), stage) {
			ok = ok || caughtBy[id][a]
		}
		switch {
		case ok:
		case len(excluded[id]) > 0:
			// A left-out call might have caught it: no verdict either way.
			t.Errorf("cannot judge %s (%q): failed by no single flaw on a consistent axis among the calls scored (caught by %v), and its calls with %v were left out as overloaded after %d placings (the machine was too busy; overloaded calls are ours, not the agent's)", id, c.Scenario.Description, names[id], excluded[id], livePlacings)
		default:
			t.Errorf("%s (%q) is failed by no single flaw on a consistent axis; caught by %v", id, c.Scenario.Description, names[id])
		}
	}
}

// livePlacings is how many times livePlaceScored places a call that
// comes back overloaded.
const livePlacings = 3

// livePlaceScored runs cases against cfg at liveMeasuredScale and places again,
// up to livePlacings times in all, the calls that came back overloaded
// (the harness or its in-process agent later than the bound: no
// verdict); left is told of each call still overloaded after the last.
// The results are in cases' order, each the call's last placing.
func livePlaceScored(t *testing.T, env *harness.Env, cfg agents.Config, cases []*scenarios.Compiled, conc int, left func(scorer.CallScore)) []harness.CallResult {
	t.Helper()
	out := make([]harness.CallResult, len(cases))
	todo := make([]int, len(cases))
	for i := range todo {
		todo[i] = i
	}
	for placing := 1; len(todo) > 0; placing++ {
		batch := make([]*scenarios.Compiled, len(todo))
		for k, i := range todo {
			batch[k] = cases[i]
		}
		run := liveMeasuredSuite(t, env, cfg, batch, liveMeasuredScale, conc)
		var again []int
		for k, i := range todo {
			out[i] = run.Results[k]
			if s := out[i].Score; liveOverloaded(s) {
				if placing == livePlacings {
					left(s)
					continue
				}
				t.Logf("%s with %s, placing %d: %s; placing it again", s.Call, cfg.Name, placing, s.Reason)
				again = append(again, i)
			}
		}
		todo = again
	}
	return out
}

func liveIntegrity(scores []scorer.CallScore) int {
	n := 0
	for _, s := range scores {
		if s.Integrity {
			n++
		}
	}
	return n
}

func liveFailedAxes(s scorer.CallScore) []string {
	var out []string
	for _, a := range s.Axes {
		if a.Verdict == scorer.Fail {
			out = append(out, string(a.Axis))
		}
	}
	return out
}

// liveWhy is a one-line reason for a failure message.
func liveWhy(s scorer.CallScore) string {
	for _, b := range s.Buckets {
		if b.Bucket == s.Primary && len(b.Findings) > 0 {
			return b.Findings[0].Text
		}
	}
	return liveVector(s)
}
