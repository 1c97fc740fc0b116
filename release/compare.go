package release

import (
	"sort"

	"github.com/callproof/callproof/scorer"
)

// Comparison is a run judged against a baseline.
//
// Only scenarios whose content hash is known and equal on both sides are
// compared: a scenario that changed tests something else, and judging it
// against its old results would call that a regression or a fix. Every
// scenario that was not compared is listed, with the reason, so nothing
// drops out of the judgement silently.
type Comparison struct {
	BaseK       int    `json:"base_k"`
	K           int    `json:"k"`
	BasePack    string `json:"base_pack"`
	Pack        string `json:"pack"`
	PackChanged bool   `json:"pack_changed"`
	// Compared counts the scenarios judged: same hash, trials on both sides.
	Compared    int          `json:"compared"`
	Regressions []Regression `json:"regressions,omitempty"`
	// RateRegressions are suite rates (integrity and each axis) over the
	// compared scenarios that fell further than the intervals allow.
	RateRegressions []RateRegression `json:"rate_regressions,omitempty"`
	Fixes           []Fix            `json:"fixes,omitempty"`
	// Unchanged counts compared scenarios that neither regressed nor got
	// fixed (passing before and now, or failing in some trial both times).
	Unchanged int `json:"unchanged"`
	// Not compared: the content hash differs; only the current run has
	// the scenario; only the baseline has it; a side has no hash for it;
	// a side has no counted trial of it (only harness errors or exclusions).
	ChangedScenarios []string `json:"changed_scenarios,omitempty"`
	Added            []string `json:"added,omitempty"`
	Removed          []string `json:"removed,omitempty"`
	Unhashed         []string `json:"unhashed,omitempty"`
	Unscored         []string `json:"unscored,omitempty"`
}

// Regression is a scenario that passed every baseline trial and now fails
// integrity in at least one.
type Regression struct {
	Scenario      string `json:"scenario"`
	BaseTrials    int    `json:"base_trials"`
	BaseIntegrity int    `json:"base_integrity"`
	Trials        int    `json:"trials"`
	Integrity     int    `json:"integrity"`
	// Axes are the axes that did not pass in any failing trial, in order.
	Axes []scorer.Axis `json:"axes"`
	// Failing are the current trials without integrity.
	Failing []TrialOutcome `json:"failing"`
}

// Fix is a scenario that failed some baseline trial and now passes every one.
type Fix struct {
	Scenario      string `json:"scenario"`
	BaseTrials    int    `json:"base_trials"`
	BaseIntegrity int    `json:"base_integrity"`
	Trials        int    `json:"trials"`
	Integrity     int    `json:"integrity"`
	// Axes are the axes that did not pass in the baseline's failing trials.
	Axes []scorer.Axis `json:"axes"`
}

// RateRegression is a suite rate whose current interval lies wholly below
// the baseline's: current Wilson upper bound < baseline Wilson lower bound.
type RateRegression struct {
	Measure string `json:"measure"` // IntegrityMeasure or an axis name
	Base    Tally  `json:"base"`
	Current Tally  `json:"current"`
}

// Blocks says whether the comparison should stop a release: any scenario
// regression or any rate regression.
func (c Comparison) Blocks() bool {
	return len(c.Regressions) > 0 || len(c.RateRegressions) > 0
}

// Compare judges cur against base (see Comparison for which scenarios).
//
// Scenario rule: a regression needs a baseline where every counted trial
// had integrity, and one current trial without it — one failure is enough,
// since the baseline showed the agent can always get it right. A fix needs
// a baseline failure and every current trial passing.
//
// Rate rule: over the compared scenarios, a rate regressed when the current
// 95 % Wilson interval lies entirely below the baseline's (current upper
// bound < baseline lower bound). Overlapping intervals are what two runs of
// an unchanged agent produce by chance, so they never block.
func Compare(base Baseline, cur Baseline) Comparison {
	c := Comparison{BaseK: base.K, K: cur.K, BasePack: base.PackHash, Pack: cur.PackHash, PackChanged: base.PackHash != cur.PackHash}
	curBy := map[string]ScenarioResult{}
	for _, s := range cur.Scenarios {
		curBy[s.Scenario] = s
	}
	baseBy := map[string]bool{}
	type side struct{ n, pass int }
	measures := append([]string{IntegrityMeasure}, axisNames()...)
	baseRate, curRate := map[string]*side{}, map[string]*side{}
	for _, m := range measures {
		baseRate[m], curRate[m] = &side{}, &side{}
	}
	add := func(r map[string]*side, s ScenarioResult) {
		for _, m := range measures {
			r[m].n += s.Trials
		}
		r[IntegrityMeasure].pass += s.Integrity
		for a, v := range s.Axes {
			r[string(a)].pass += v
		}
	}
	for _, b := range base.Scenarios {
		id := b.Scenario
		baseBy[id] = true
		now, ok := curBy[id]
		bh, ch := base.ScenarioHashes[id], cur.ScenarioHashes[id]
		switch {
		case !ok:
			c.Removed = append(c.Removed, id)
			continue
		case bh == "" || ch == "":
			c.Unhashed = append(c.Unhashed, id)
			continue
		case bh != ch:
			c.ChangedScenarios = append(c.ChangedScenarios, id)
			continue
		case b.Trials == 0 || now.Trials == 0:
			c.Unscored = append(c.Unscored, id)
			continue
		}
		c.Compared++
		add(baseRate, b)
		add(curRate, now)
		switch {
		case b.Integrity == b.Trials && now.Integrity < now.Trials:
			failing := failedTrials(now)
			c.Regressions = append(c.Regressions, Regression{Scenario: id, BaseTrials: b.Trials, BaseIntegrity: b.Integrity,
				Trials: now.Trials, Integrity: now.Integrity, Axes: unionAxes(failing), Failing: failing})
		case b.Integrity < b.Trials && now.Integrity == now.Trials:
			c.Fixes = append(c.Fixes, Fix{Scenario: id, BaseTrials: b.Trials, BaseIntegrity: b.Integrity,
				Trials: now.Trials, Integrity: now.Integrity, Axes: unionAxes(failedTrials(b))})
		default:
			c.Unchanged++
		}
	}
	for _, s := range cur.Scenarios {
		if !baseBy[s.Scenario] {
			c.Added = append(c.Added, s.Scenario)
		}
	}
	for _, m := range measures {
		bt, ct := NewTally(baseRate[m].pass, baseRate[m].n), NewTally(curRate[m].pass, curRate[m].n)
		if bt.N > 0 && ct.N > 0 && ct.Hi < bt.Lo {
			c.RateRegressions = append(c.RateRegressions, RateRegression{Measure: m, Base: bt, Current: ct})
		}
	}
	for _, l := range [][]string{c.ChangedScenarios, c.Added, c.Removed, c.Unhashed, c.Unscored} {
		sort.Strings(l)
	}
	sort.Slice(c.Regressions, func(i, j int) bool { return c.Regressions[i].Scenario < c.Regressions[j].Scenario })
	sort.Slice(c.Fixes, func(i, j int) bool { return c.Fixes[i].Scenario < c.Fixes[j].Scenario })
	return c
}

func axisNames() []string {
	var out []string
	for _, a := range scorer.Axes() {
		out = append(out, string(a))
	}
	return out
}

// failedTrials lists a scenario's counted trials without integrity.
func failedTrials(s ScenarioResult) []TrialOutcome {
	var out []TrialOutcome
	for _, o := range s.Outcomes {
		if counted(o.Outcome) && !o.Integrity {
			out = append(out, o)
		}
	}
	return out
}

// unionAxes lists, in axis order, every axis failing in some trial.
func unionAxes(ts []TrialOutcome) []scorer.Axis {
	seen := map[scorer.Axis]bool{}
	for _, t := range ts {
		for _, a := range t.Failing {
			seen[a] = true
		}
	}
	var out []scorer.Axis
	for _, a := range scorer.Axes() {
		if seen[a] {
			out = append(out, a)
		}
	}
	return out
}
