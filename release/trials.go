package release

import (
	"sort"
	"strconv"
	"strings"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// IntegrityMeasure names end-to-end integrity wherever a list mixes it with
// the six axes (flaky measures, rate regressions).
const IntegrityMeasure = "integrity"

// AxisTally is one axis's passes over a set of calls. Fail and Unknown are
// kept apart because "not a pass" has two meanings: the agent did it wrong,
// or no evidence either way.
type AxisTally struct {
	Axis scorer.Axis `json:"axis"`
	Tally
	Fail    int `json:"fail"`
	Unknown int `json:"unknown"`
}

// ScenarioTrials is what a scenario's repeated calls show.
type ScenarioTrials struct {
	Scenario string `json:"scenario"`
	// Calls are the counted trials' call ids, in trial order.
	Calls []string `json:"calls"`
	// HarnessErrors are calls that prove nothing about the agent; Excluded
	// are calls whose trigger was missed, so the scenario did not happen.
	// Neither is a trial: never a pass, never a fail.
	HarnessErrors []string `json:"harness_errors,omitempty"`
	Excluded      []string `json:"excluded,omitempty"`
	// Integrity is c of n counted trials with integrity.
	Integrity Tally `json:"integrity"`
	// PassK is pass^k of the scenario; meaningless (0) when Short.
	PassK float64 `json:"pass_k"`
	// Short: fewer than k counted trials, so pass^k is undefined.
	Short bool        `json:"short,omitempty"`
	Axes  []AxisTally `json:"axes"` // six, in scorer.Axes() order
	// Flaky: the trials disagree on integrity or on some axis's verdict.
	Flaky bool `json:"flaky,omitempty"`
	// FlakyOn names what they disagree on: IntegrityMeasure and axes.
	FlakyOn []string `json:"flaky_on,omitempty"`
}

// Trials is the number of counted trials (n).
func (s ScenarioTrials) Trials() int { return len(s.Calls) }

// Axis returns one axis's tally.
func (s ScenarioTrials) Axis(a scorer.Axis) AxisTally { return findAxis(s.Axes, a) }

// TrialReport is a run's figures with its trials grouped by scenario.
type TrialReport struct {
	K         int              `json:"k"`
	Scenarios []ScenarioTrials `json:"scenarios"` // by scenario id
	// Calls is every call counted as a trial (N of the suite figures).
	Calls     int         `json:"calls"`
	Integrity Tally       `json:"integrity"`
	Axes      []AxisTally `json:"axes"`
	// PassK is the mean of pass^k over the scenarios with at least k
	// trials (PassKScenarios of them): the chance that a scenario drawn at
	// random passes k tries in a row. 0 when no scenario qualifies.
	PassK          float64  `json:"pass_k"`
	PassKScenarios int      `json:"pass_k_scenarios"`
	Flaky          []string `json:"flaky,omitempty"`
	HarnessErrors  []string `json:"harness_errors,omitempty"`
	Excluded       []string `json:"excluded,omitempty"`
}

// Scenario returns one scenario's trials.
func (r TrialReport) Scenario(id string) (ScenarioTrials, bool) {
	i := sort.Search(len(r.Scenarios), func(i int) bool { return r.Scenarios[i].Scenario >= id })
	if i < len(r.Scenarios) && r.Scenarios[i].Scenario == id {
		return r.Scenarios[i], true
	}
	return ScenarioTrials{}, false
}

// Axis returns one axis's suite tally.
func (r TrialReport) Axis(a scorer.Axis) AxisTally { return findAxis(r.Axes, a) }

func findAxis(ts []AxisTally, a scorer.Axis) AxisTally {
	for _, t := range ts {
		if t.Axis == a {
			return t
		}
	}
	return AxisTally{Axis: a, Tally: NewTally(0, 0)}
}

// counted says whether a call is a trial. Agent errors count (the agent
// failed its caller); harness errors and excluded calls do not, matching
// the suite figures of package reports.
func counted(o trace.Outcome) bool {
	return o != trace.OutcomeHarnessError && o != trace.OutcomeExcluded
}

// Trials groups scores by scenario and computes pass^k, Wilson intervals and
// flakiness. k below 1 is taken as 1.
func Trials(scores []scorer.CallScore, k int) TrialReport {
	k = max(k, 1)
	axes := scorer.Axes()
	ids, groups := groupScores(scores)

	r := TrialReport{K: k}
	suitePass := make([]int, len(axes))
	suiteFail := make([]int, len(axes))
	suiteUnknown := make([]int, len(axes))
	suiteIntegrity := 0
	passKSum := 0.0
	for _, id := range ids {
		calls := groups[id]
		st := ScenarioTrials{Scenario: id}
		pass := make([]int, len(axes))
		fail := make([]int, len(axes))
		unknown := make([]int, len(axes))
		integrity := 0
		var first *scorer.CallScore
		mixed := make([]bool, len(axes))
		mixedIntegrity := false
		for i := range calls {
			c := &calls[i]
			switch {
			case c.Outcome == trace.OutcomeHarnessError:
				st.HarnessErrors = append(st.HarnessErrors, c.Call)
				continue
			case !counted(c.Outcome):
				st.Excluded = append(st.Excluded, c.Call)
				continue
			}
			st.Calls = append(st.Calls, c.Call)
			if c.Integrity {
				integrity++
			}
			if first == nil {
				first = c
			} else if c.Integrity != first.Integrity {
				mixedIntegrity = true
			}
			for j, a := range axes {
				v := c.Axis(a).Verdict
				switch v {
				case scorer.Pass:
					pass[j]++
				case scorer.Fail:
					fail[j]++
				default:
					unknown[j]++
				}
				if first != c && v != first.Axis(a).Verdict {
					mixed[j] = true
				}
			}
		}
		n := len(st.Calls)
		st.Integrity = NewTally(integrity, n)
		if n < k {
			st.Short = true
		} else {
			st.PassK = PassK(integrity, n, k)
			passKSum += st.PassK
			r.PassKScenarios++
		}
		if mixedIntegrity {
			st.FlakyOn = append(st.FlakyOn, IntegrityMeasure)
		}
		for j, a := range axes {
			st.Axes = append(st.Axes, AxisTally{Axis: a, Tally: NewTally(pass[j], n), Fail: fail[j], Unknown: unknown[j]})
			suitePass[j] += pass[j]
			suiteFail[j] += fail[j]
			suiteUnknown[j] += unknown[j]
			if mixed[j] {
				st.FlakyOn = append(st.FlakyOn, string(a))
			}
		}
		st.Flaky = len(st.FlakyOn) > 0
		if st.Flaky {
			r.Flaky = append(r.Flaky, id)
		}
		r.Calls += n
		suiteIntegrity += integrity
		r.HarnessErrors = append(r.HarnessErrors, st.HarnessErrors...)
		r.Excluded = append(r.Excluded, st.Excluded...)
		r.Scenarios = append(r.Scenarios, st)
	}
	r.Integrity = NewTally(suiteIntegrity, r.Calls)
	for j, a := range axes {
		r.Axes = append(r.Axes, AxisTally{Axis: a, Tally: NewTally(suitePass[j], r.Calls), Fail: suiteFail[j], Unknown: suiteUnknown[j]})
	}
	if r.PassKScenarios > 0 {
		r.PassK = passKSum / float64(r.PassKScenarios)
	}
	return r
}

// groupScores groups copies of the scores by scenario, each group in trial
// order, and lists the scenario ids in order.
func groupScores(scores []scorer.CallScore) ([]string, map[string][]scorer.CallScore) {
	groups := map[string][]scorer.CallScore{}
	for _, s := range scores {
		id := scenarioOf(s)
		groups[id] = append(groups[id], s)
	}
	ids := make([]string, 0, len(groups))
	for id, calls := range groups {
		ids = append(ids, id)
		sortTrials(id, calls)
	}
	sort.Strings(ids)
	return ids, groups
}

// scenarioOf is the scenario a call belongs to: its score's label, or, when
// the history never said (a harness error before call.start), the call id
// with any trial suffix taken off.
func scenarioOf(s scorer.CallScore) string {
	if s.Scenario != "" {
		return s.Scenario
	}
	id, _ := splitTrial(s.Call)
	return id
}

// splitTrial splits "corr-02.t3" into ("corr-02", 3); an id without a
// well-formed ".tN" suffix is trial 0 of itself.
func splitTrial(call string) (string, int) {
	i := strings.LastIndex(call, ".t")
	if i <= 0 {
		return call, 0
	}
	digits := call[i+2:]
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 || strconv.Itoa(n) != digits {
		return call, 0
	}
	return call[:i], n
}

// sortTrials puts a scenario's calls in trial order (t2 before t10), then
// by call id, so every output is independent of the order calls finished.
func sortTrials(scenario string, calls []scorer.CallScore) {
	trial := func(c scorer.CallScore) int {
		if id, n := splitTrial(c.Call); id == scenario {
			return n
		}
		return 0
	}
	sort.SliceStable(calls, func(i, j int) bool {
		ti, tj := trial(calls[i]), trial(calls[j])
		if ti != tj {
			return ti < tj
		}
		return calls[i].Call < calls[j].Call
	})
}
