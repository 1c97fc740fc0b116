package harness

import (
	"fmt"
	"strings"
	"time"

	"github.com/callproof/callproof/release"
	"github.com/callproof/callproof/scorer"
)

// The release-decision rules, switched on by the gate's flags.
const (
	RuleTrials       Rule = "min_trials"    // --trials K: every scenario has K counted trials
	RuleNoRegression Rule = "no_regression" // --baseline: nothing that held in the baseline fails now
)

// ReleaseOptions turn the gate into a release decision over repeated
// trials and against an accepted baseline.
type ReleaseOptions struct {
	// Trials, when > 0, is how many counted trials (scored or agent_error
	// calls) every planned scenario must have.
	Trials int
	// Baseline, when set, is the accepted run the gate compares with.
	Baseline *release.Baseline
	// AgentVersion overrides the manifest's for the run's baseline record.
	AgentVersion string
	// Now stamps the run's baseline record (a baseline saved from it).
	Now time.Time
}

// Release is what a release decision adds to the gate's verdict.
type Release struct {
	Trials   release.TrialReport `json:"trials"`
	Baseline *release.Comparison `json:"baseline,omitempty"`
	// Current is the run as a baseline would record it (what `baseline
	// save` writes).
	Current release.Baseline `json:"-"`
	// Scores are the run's calls as scored for the decision, in scenario
	// order (for the CI reports: the run is scored once).
	Scores []scorer.CallScore `json:"-"`
}

// GateRelease applies the gate (GateRun) and then the release rules: the
// trials every scenario needs, and no regression against the baseline.
// Scenarios whose content changed since the baseline are never compared;
// the comparison lists them.
func GateRelease(r *SavedRun, p Policy, o ReleaseOptions) (GateResult, Release) {
	calls := ScoreCalls(r.Sorted())
	g := gateCalls(r, calls, p)
	scores := Scores(calls)
	k := o.Trials
	if k <= 0 {
		k = 1
		if r.Meta != nil && r.Meta.Trials > 1 {
			k = r.Meta.Trials
		}
	}
	rel := Release{Trials: release.Trials(scores, k), Scores: scores}
	rel.Current = release.NewBaseline(RunRecord(r, o.AgentVersion, o.Now), scores, k)
	if o.Trials > 0 {
		addRule(&g, RuleResult{Rule: RuleTrials, Violations: trialViolations(r, rel.Trials, o.Trials)})
	}
	if o.Baseline != nil {
		cmp := release.Compare(*o.Baseline, rel.Current)
		rel.Baseline = &cmp
		addRule(&g, RuleResult{Rule: RuleNoRegression, Violations: regressionViolations(cmp)})
	}
	return g, rel
}

// RunRecord describes a saved run for a baseline or a history line.
func RunRecord(r *SavedRun, version string, now time.Time) release.BaselineMeta {
	m := release.BaselineMeta{Created: now.UTC(), AgentVersion: version}
	if r.Meta != nil {
		m.Agent, m.Suite, m.PackHash, m.ScenarioHashes = r.Meta.Agent, r.Meta.Suite, r.Meta.PackHash, r.Meta.ScenarioHashes
		if version == "" {
			m.AgentVersion = r.Meta.AgentVersion
		}
	}
	return m
}

func addRule(g *GateResult, rr RuleResult) {
	rr.Holds = len(rr.Violations) == 0
	if !rr.Holds {
		g.Holds = false
	}
	g.Rules = append(g.Rules, rr)
}

// trialViolations: a scenario of the plan with fewer than k counted
// trials (harness errors and exclusions are not trials), and a run placed
// with another number of trials than the gate asks for.
func trialViolations(r *SavedRun, tr release.TrialReport, k int) []Violation {
	var out []Violation
	if r.Meta != nil && max(r.Meta.Trials, 1) != k {
		out = append(out, Violation{Rule: RuleTrials, Text: fmt.Sprintf("the run placed %d trial(s) per scenario; the gate wants %d (run --trials %d)", max(r.Meta.Trials, 1), k, k)})
	}
	scenarios := map[string]bool{}
	var order []string
	for _, id := range r.Planned() {
		sc, _ := SplitCallID(id)
		if !scenarios[sc] {
			scenarios[sc] = true
			order = append(order, sc)
		}
	}
	for _, s := range tr.Scenarios {
		if !scenarios[s.Scenario] {
			scenarios[s.Scenario] = true
			order = append(order, s.Scenario)
		}
	}
	for _, sc := range order {
		st, _ := tr.Scenario(sc)
		if n := st.Trials(); n < k {
			out = append(out, Violation{Rule: RuleTrials, Call: sc, Text: fmt.Sprintf("%d counted trial(s) of %d", n, k)})
		}
	}
	return out
}

// regressionViolations: each regression of the comparison, and a baseline
// against which nothing could be compared (the check asked for did not
// happen: that never passes silently).
func regressionViolations(c release.Comparison) []Violation {
	var out []Violation
	for _, r := range c.Regressions {
		var calls []string
		for _, f := range r.Failing {
			calls = append(calls, f.Call)
		}
		out = append(out, Violation{Rule: RuleNoRegression, Call: r.Scenario,
			Text: fmt.Sprintf("held in all %d baseline trial(s), now %d of %d with integrity (failing: %s; %s)", r.BaseTrials, r.Integrity, r.Trials, axesList(r.Axes), strings.Join(calls, ", "))})
	}
	for _, r := range c.RateRegressions {
		out = append(out, Violation{Rule: RuleNoRegression,
			Text: fmt.Sprintf("%s fell from %d/%d [%.2f, %.2f] to %d/%d [%.2f, %.2f]: beyond both 95%% intervals", r.Measure,
				r.Base.Pass, r.Base.N, r.Base.Lo, r.Base.Hi, r.Current.Pass, r.Current.N, r.Current.Lo, r.Current.Hi)})
	}
	if c.Compared == 0 {
		out = append(out, Violation{Rule: RuleNoRegression, Text: "no scenario could be compared with the baseline (changed, added or unhashed scenarios only): save a new baseline from an accepted run"})
	}
	return out
}

func axesList(as []scorer.Axis) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}
