package release

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/callproof/callproof/scorer"
)

func TestSplitTrial(t *testing.T) {
	for _, tc := range []struct {
		in    string
		id    string
		trial int
	}{
		{"corr-02.t3", "corr-02", 3},
		{"corr-02.t10", "corr-02", 10},
		{"corr-02", "corr-02", 0},
		{"corr-02.t0", "corr-02.t0", 0},
		{"corr-02.t03", "corr-02.t03", 0},
		{"corr-02.tx", "corr-02.tx", 0},
		{".t3", ".t3", 0},
	} {
		id, n := splitTrial(tc.in)
		if id != tc.id || n != tc.trial {
			t.Errorf("splitTrial(%q) = %q, %d; want %q, %d", tc.in, id, n, tc.id, tc.trial)
		}
	}
}

// TestTrials checks the fixture's figures, worked by hand (fixture()).
func TestTrials(t *testing.T) {
	type want struct {
		calls, harness, excluded []string
		c                        int
		passK                    float64
		short                    bool
		flakyOn                  []string
		axes                     [6]int
	}
	wants := map[string]want{
		"corr-01": {calls: []string{"corr-01.t1", "corr-01.t2", "corr-01.t3"}, c: 3, passK: 1, axes: [6]int{3, 3, 3, 3, 3, 3}},
		"corr-02": {calls: []string{"corr-02.t1", "corr-02.t2", "corr-02.t3"}, harness: []string{"corr-02.t4"}, c: 2, passK: 0,
			flakyOn: []string{"integrity", "tool_args_correct", "stale_write_prevented"}, axes: [6]int{3, 3, 2, 2, 3, 3}},
		"int-01": {calls: []string{"int-01.t1", "int-01.t3"}, harness: []string{"int-01.t2"}, c: 2, short: true, axes: [6]int{2, 2, 2, 2, 2, 2}},
		"tf-01":  {calls: []string{"tf-01.t1", "tf-01.t2", "tf-01.t3"}, c: 0, passK: 0, axes: [6]int{3, 3, 0, 0, 0, 0}},
		"tf-02": {calls: []string{"tf-02.t1", "tf-02.t2", "tf-02.t3"}, c: 1, passK: 0,
			flakyOn: []string{"integrity", "captured", "active_state_correct", "tool_args_correct", "stale_write_prevented", "backend_correct", "confirmation_matches_backend"},
			axes:    [6]int{2, 2, 2, 2, 2, 1}},
		"tf-03": {calls: []string{"tf-03.t2", "tf-03.t3"}, excluded: []string{"tf-03.t1"}, c: 2, short: true, axes: [6]int{2, 2, 2, 2, 2, 2}},
		"tf-04": {excluded: []string{"tf-04"}, c: 0, short: true},
	}
	r := Trials(fixture(), 3)
	if r.K != 3 || len(r.Scenarios) != len(wants) {
		t.Fatalf("k %d, %d scenarios; want 3, %d", r.K, len(r.Scenarios), len(wants))
	}
	for i, st := range r.Scenarios {
		if i > 0 && r.Scenarios[i-1].Scenario >= st.Scenario {
			t.Errorf("scenarios out of order at %s", st.Scenario)
		}
		w, ok := wants[st.Scenario]
		if !ok {
			t.Errorf("unexpected scenario %s", st.Scenario)
			continue
		}
		if !slices.Equal(st.Calls, w.calls) || !slices.Equal(st.HarnessErrors, w.harness) || !slices.Equal(st.Excluded, w.excluded) {
			t.Errorf("%s: calls %v harness %v excluded %v; want %v %v %v", st.Scenario, st.Calls, st.HarnessErrors, st.Excluded, w.calls, w.harness, w.excluded)
		}
		if st.Integrity.Pass != w.c || st.Integrity.N != len(w.calls) {
			t.Errorf("%s: integrity %d/%d, want %d/%d", st.Scenario, st.Integrity.Pass, st.Integrity.N, w.c, len(w.calls))
		}
		if lo, hi := Wilson(w.c, len(w.calls), Z95); st.Integrity.Lo != lo || st.Integrity.Hi != hi {
			t.Errorf("%s: integrity interval [%v,%v], want [%v,%v]", st.Scenario, st.Integrity.Lo, st.Integrity.Hi, lo, hi)
		}
		if st.Short != w.short || st.PassK != w.passK {
			t.Errorf("%s: short %v pass^3 %v; want %v %v", st.Scenario, st.Short, st.PassK, w.short, w.passK)
		}
		if st.Flaky != (len(w.flakyOn) > 0) || !slices.Equal(st.FlakyOn, w.flakyOn) {
			t.Errorf("%s: flaky %v on %v; want %v", st.Scenario, st.Flaky, st.FlakyOn, w.flakyOn)
		}
		for j, a := range scorer.Axes() {
			if got := st.Axis(a); got.Pass != w.axes[j] || got.N != len(w.calls) {
				t.Errorf("%s: %s %d/%d, want %d/%d", st.Scenario, a, got.Pass, got.N, w.axes[j], len(w.calls))
			}
		}
	}

	// Suite: 16 counted calls (3+3+2+3+3+2), 10 with integrity.
	if r.Calls != 16 || r.Integrity.Pass != 10 || r.Integrity.N != 16 {
		t.Errorf("suite integrity %d/%d over %d calls, want 10/16", r.Integrity.Pass, r.Integrity.N, r.Calls)
	}
	suite := map[scorer.Axis][3]int{ // pass, fail, unknown
		scorer.Captured:                   {15, 0, 1},
		scorer.ActiveStateCorrect:         {15, 0, 1},
		scorer.ToolArgsCorrect:            {11, 4, 1},
		scorer.StaleWritePrevented:        {11, 4, 1},
		scorer.BackendCorrect:             {12, 3, 1},
		scorer.ConfirmationMatchesBackend: {11, 3, 2},
	}
	for _, a := range scorer.Axes() {
		got, w := r.Axis(a), suite[a]
		if got.Pass != w[0] || got.Fail != w[1] || got.Unknown != w[2] || got.N != 16 {
			t.Errorf("suite %s: %d pass %d fail %d unknown of %d; want %v of 16", a, got.Pass, got.Fail, got.Unknown, got.N, w)
		}
	}
	// pass^3 over the four scenarios with three trials: (1+0+0+0)/4.
	if r.PassK != 0.25 || r.PassKScenarios != 4 {
		t.Errorf("suite pass^3 %v over %d scenarios, want 0.25 over 4", r.PassK, r.PassKScenarios)
	}
	if !slices.Equal(r.Flaky, []string{"corr-02", "tf-02"}) {
		t.Errorf("flaky %v", r.Flaky)
	}
	if !slices.Equal(r.HarnessErrors, []string{"corr-02.t4", "int-01.t2"}) || !slices.Equal(r.Excluded, []string{"tf-03.t1", "tf-04"}) {
		t.Errorf("harness errors %v excluded %v", r.HarnessErrors, r.Excluded)
	}
}

// TestTrialsK: the suite's pass^k for several k, worked by hand.
func TestTrialsK(t *testing.T) {
	for _, tc := range []struct {
		k         int
		passK     float64
		scenarios int
	}{
		// k=1: c/n per scenario, 1, 2/3, 1, 0, 1/3, 1 (tf-04 has no trial).
		{1, 4.0 / 6, 6},
		// k=2: 1, C(2,2)/C(3,2)=1/3, 1, 0, 0, 1.
		{2, (1 + 1.0/3 + 1 + 0 + 0 + 1) / 6, 6},
		{3, 0.25, 4},
		{4, 0, 0},       // every scenario short
		{0, 4.0 / 6, 6}, // k below 1 is k=1
	} {
		r := Trials(fixture(), tc.k)
		if math.Abs(r.PassK-tc.passK) > 1e-12 || r.PassKScenarios != tc.scenarios {
			t.Errorf("k=%d: pass^k %v over %d, want %v over %d", tc.k, r.PassK, r.PassKScenarios, tc.passK, tc.scenarios)
		}
	}
}

// TestTrialsOrder: the report does not depend on the order calls finished
// in, trial numbers sort numerically, and the input is left alone.
func TestTrialsOrder(t *testing.T) {
	in := fixture()
	in = append(in, trialsOf("many", "", "PPPPPP", "PPPPPP", "PPPPPP", "PPPPPP", "PPPPPP", "PPPPPP", "PPPPPP", "PPPPPP", "PPPPPP", "PPPPPP")...)
	rev := slices.Clone(in)
	slices.Reverse(rev)
	keep := slices.Clone(rev)
	a, b := Trials(in, 3), Trials(rev, 3)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("report depends on input order")
	}
	if !reflect.DeepEqual(rev, keep) {
		t.Errorf("Trials reordered its input")
	}
	st, _ := a.Scenario("many")
	if st.Calls[1] != "many.t2" || st.Calls[9] != "many.t10" {
		t.Errorf("trial order %v", st.Calls)
	}
}

// TestTrialsNoScenarioLabel: a call scored without a call.start has no
// scenario label; it is grouped by its call id.
func TestTrialsNoScenarioLabel(t *testing.T) {
	s := score("corr-01.t2", "H", "")
	s.Scenario = ""
	r := Trials(append(trialsOf("corr-01", "", "PPPPPP"), s), 2)
	st, ok := r.Scenario("corr-01")
	if !ok || !slices.Equal(st.HarnessErrors, []string{"corr-01.t2"}) || !st.Short {
		t.Errorf("got %+v", st)
	}
	if _, ok := r.Scenario("nope"); ok {
		t.Errorf("found a scenario that is not there")
	}
}

// TestTrialsJSON: a report always marshals (no NaN reaches it, even for
// scenarios too short for pass^k).
func TestTrialsJSON(t *testing.T) {
	for k := 1; k <= 5; k++ {
		if _, err := json.Marshal(Trials(fixture(), k)); err != nil {
			t.Errorf("k=%d: %v", k, err)
		}
	}
}
