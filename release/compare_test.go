package release

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

type scen struct {
	id    string
	hash  string // "" for none
	specs []string
}

// runOf builds a baseline from scenarios (see score for the specs); the
// pack hash is the SHA-256 of the scenario hashes in order.
func runOf(k int, ss ...scen) Baseline {
	m := BaselineMeta{Created: created, Agent: "a", Suite: "s", ScenarioHashes: map[string]string{}}
	var scores []scorer.CallScore
	hashes := ""
	for _, s := range ss {
		scores = append(scores, trialsOf(s.id, scorer.BucketStaleToolArgs, s.specs...)...)
		if s.hash != "" {
			m.ScenarioHashes[s.id] = s.hash
		}
		hashes += s.hash + ","
	}
	sum := sha256.Sum256([]byte(hashes))
	m.PackHash = hex.EncodeToString(sum[:])
	return NewBaseline(m, scores, k)
}

func many(n int, hash string, specs ...string) []scen {
	var out []scen
	for i := range n {
		out = append(out, scen{"s" + strconv.Itoa(10+i), hash, specs})
	}
	return out
}

// rep repeats one scenario's specs n times; seq names the result s10,
// s11, ... with hash "h", in order.
func rep(n int, specs []string) [][]string { return slices.Repeat([][]string{specs}, n) }

func seq(groups ...[][]string) []scen {
	var out []scen
	for _, g := range groups {
		for _, specs := range g {
			out = append(out, scen{"s" + strconv.Itoa(10+len(out)), "h", specs})
		}
	}
	return out
}

const ok6 = "PPPPPP"

func TestCompare(t *testing.T) {
	type want struct {
		regressions, fixes, rates []string
		compared, unchanged       int
		changed, added, removed   []string
		unhashed, unscored        []string
		packChanged, blocks       bool
	}
	for _, tc := range []struct {
		name      string
		base, cur []scen
		want      want
	}{
		{"same run",
			[]scen{{"a", "h1", []string{ok6, ok6, ok6}}, {"b", "h2", []string{"PPFPPP", ok6, ok6}}},
			[]scen{{"a", "h1", []string{ok6, ok6, ok6}}, {"b", "h2", []string{"PPFPPP", ok6, ok6}}},
			want{compared: 2, unchanged: 2}},
		{"one failing trial is a regression",
			[]scen{{"a", "h1", []string{ok6, ok6, ok6}}},
			[]scen{{"a", "h1", []string{ok6, "PPFFPP", ok6}}},
			want{regressions: []string{"a"}, compared: 1, blocks: true}},
		{"an agent error is a regression",
			[]scen{{"a", "h1", []string{ok6, ok6, ok6}}},
			[]scen{{"a", "h1", []string{ok6, ok6, "E:PPPPPP"}}},
			want{regressions: []string{"a"}, compared: 1, blocks: true}},
		{"an unknown is a regression",
			[]scen{{"a", "h1", []string{ok6, ok6, ok6}}},
			[]scen{{"a", "h1", []string{ok6, "PPPPPU", ok6}}},
			want{regressions: []string{"a"}, compared: 1, blocks: true}},
		{"a harness error is not",
			[]scen{{"a", "h1", []string{ok6, ok6, ok6}}},
			[]scen{{"a", "h1", []string{ok6, "H", ok6}}},
			want{compared: 1, unchanged: 1}},
		{"fix",
			[]scen{{"b", "h2", []string{"PPFPPP", ok6, ok6}}},
			[]scen{{"b", "h2", []string{ok6, ok6, ok6}}},
			want{fixes: []string{"b"}, compared: 1}},
		{"still flaky is unchanged",
			[]scen{{"b", "h2", []string{"PPFPPP", ok6, ok6}}},
			[]scen{{"b", "h2", []string{ok6, "PPPPFP", "PPPPFP"}}},
			want{compared: 1, unchanged: 1}},
		{"changed content is never compared",
			[]scen{{"a", "h1", []string{ok6, ok6, ok6}}, {"b", "h2", []string{"PPFPPP", ok6, ok6}}},
			[]scen{{"a", "h1-new", []string{"FFFFFF", "FFFFFF", "FFFFFF"}}, {"b", "h2-new", []string{ok6, ok6, ok6}}},
			want{changed: []string{"a", "b"}, packChanged: true}},
		{"added and removed",
			[]scen{{"a", "h1", []string{ok6}}, {"b", "h2", []string{ok6}}},
			[]scen{{"a", "h1", []string{ok6}}, {"c", "h3", []string{"FFFFFF"}}},
			want{compared: 1, unchanged: 1, added: []string{"c"}, removed: []string{"b"}, packChanged: true}},
		{"no hash, no comparison",
			[]scen{{"a", "h1", []string{ok6}}, {"b", "", []string{ok6}}},
			[]scen{{"a", "", []string{"FFFFFF"}}, {"b", "", []string{"FFFFFF"}}},
			want{unhashed: []string{"a", "b"}, packChanged: true}},
		{"no counted trial, no comparison",
			[]scen{{"a", "h1", []string{ok6, ok6}}, {"b", "h2", []string{"H", "X"}}},
			[]scen{{"a", "h1", []string{"H", "H"}}, {"b", "h2", []string{ok6, ok6}}},
			want{unscored: []string{"a", "b"}}},
		// Every scenario flaky before (2/3) and failing now: no scenario
		// rule fires, but integrity fell from 20/30 [0.488, 0.808] to
		// 0/30 [0, 0.114], and tool_args_correct with it.
		{"rates fell beyond the intervals",
			many(10, "h", ok6, ok6, "PPFPPP"),
			many(10, "h", "PPFPPP", "PPFPPP", "PPFPPP"),
			want{rates: []string{"integrity", "tool_args_correct"}, compared: 10, unchanged: 10, blocks: true}},
		// 30/30 [0.886, 1] to 29/30 [0.833, 0.994]: the intervals overlap,
		// so only the scenario rule fires.
		{"a small drop stays within the intervals",
			many(10, "h", ok6, ok6, ok6),
			append(many(9, "h", ok6, ok6, ok6), scen{"s19", "h", []string{ok6, "PPPPFP", ok6}}),
			want{regressions: []string{"s19"}, compared: 10, unchanged: 9, blocks: true}},
		// The boundary: from 20/30 [0.4878, 0.8077] to 10/30 [0.1923,
		// 0.5122] the intervals still overlap; to 9/30 [0.1666, 0.4788]
		// they do not.
		{"a large drop that overlaps is not a rate regression",
			many(10, "h", ok6, ok6, "PPFPPP"),
			seq(rep(5, []string{ok6, ok6, "PPFPPP"}), rep(5, []string{"PPFPPP", "PPFPPP", "PPFPPP"})),
			want{compared: 10, unchanged: 10}},
		{"one pass fewer is",
			many(10, "h", ok6, ok6, "PPFPPP"),
			seq(rep(4, []string{ok6, ok6, "PPFPPP"}), rep(1, []string{ok6, "PPFPPP", "PPFPPP"}), rep(5, []string{"PPFPPP", "PPFPPP", "PPFPPP"})),
			want{rates: []string{"integrity", "tool_args_correct"}, compared: 10, unchanged: 10, blocks: true}},
		// Rates count compared scenarios only: a changed scenario's collapse
		// is not a rate regression.
		{"rates only over compared scenarios",
			append(many(1, "h", ok6, ok6, ok6), many(10, "old", ok6, ok6, ok6)[1:]...),
			append(many(1, "h", ok6, ok6, ok6), many(10, "new", "FFFFFF", "FFFFFF", "FFFFFF")[1:]...),
			want{compared: 1, unchanged: 1, changed: []string{"s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19"}, packChanged: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(runOf(3, tc.base...), runOf(3, tc.cur...))
			var got want
			for _, r := range c.Regressions {
				got.regressions = append(got.regressions, r.Scenario)
			}
			for _, f := range c.Fixes {
				got.fixes = append(got.fixes, f.Scenario)
			}
			for _, r := range c.RateRegressions {
				got.rates = append(got.rates, r.Measure)
			}
			got.compared, got.unchanged = c.Compared, c.Unchanged
			got.changed, got.added, got.removed, got.unhashed, got.unscored = c.ChangedScenarios, c.Added, c.Removed, c.Unhashed, c.Unscored
			got.packChanged, got.blocks = c.PackChanged, c.Blocks()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestCompareDetail checks what a regression, a fix and a rate regression
// carry.
func TestCompareDetail(t *testing.T) {
	base := runOf(3, scen{"a", "h1", []string{ok6, ok6, ok6}}, scen{"b", "h2", []string{"PPFPPP", ok6, "PPFFPP"}})
	cur := runOf(3, scen{"a", "h1", []string{ok6, "PPFFPP", "E:PPPPPU"}}, scen{"b", "h2", []string{ok6, ok6, ok6}})
	c := Compare(base, cur)
	wantReg := []Regression{{
		Scenario: "a", BaseTrials: 3, BaseIntegrity: 3, Trials: 3, Integrity: 1,
		Axes: []scorer.Axis{scorer.ToolArgsCorrect, scorer.StaleWritePrevented, scorer.ConfirmationMatchesBackend},
		Failing: []TrialOutcome{
			{Call: "a.t2", Outcome: trace.OutcomeScored, Failing: []scorer.Axis{scorer.ToolArgsCorrect, scorer.StaleWritePrevented}, Primary: scorer.BucketStaleToolArgs},
			{Call: "a.t3", Outcome: trace.OutcomeAgentError, Failing: []scorer.Axis{scorer.ConfirmationMatchesBackend}},
		},
	}}
	if !reflect.DeepEqual(c.Regressions, wantReg) {
		t.Errorf("regressions\n got %+v\nwant %+v", c.Regressions, wantReg)
	}
	wantFix := []Fix{{Scenario: "b", BaseTrials: 3, BaseIntegrity: 1, Trials: 3, Integrity: 3, Axes: []scorer.Axis{scorer.ToolArgsCorrect, scorer.StaleWritePrevented}}}
	if !reflect.DeepEqual(c.Fixes, wantFix) {
		t.Errorf("fixes\n got %+v\nwant %+v", c.Fixes, wantFix)
	}
	if c.BaseK != 3 || c.K != 3 || c.PackChanged || c.BasePack != runOf(1, scen{"x", "h1", []string{ok6}}, scen{"y", "h2", []string{ok6}}).PackHash {
		t.Errorf("header %+v", c)
	}

	r := Compare(runOf(3, many(10, "h", ok6, ok6, "PPFPPP")...), runOf(3, many(10, "h", "PPFPPP", "PPFPPP", "PPFPPP")...)).RateRegressions
	if len(r) != 2 || r[0].Base != NewTally(20, 30) || r[0].Current != NewTally(0, 30) || r[1].Measure != "tool_args_correct" {
		t.Errorf("rate regressions %+v", r)
	}
	if !(r[0].Current.Hi < r[0].Base.Lo) {
		t.Errorf("rule not met: %+v", r[0])
	}
}

// TestCompareKChange: baselines of different k still compare scenario by
// scenario (the rule needs no k), and say so.
func TestCompareKChange(t *testing.T) {
	c := Compare(runOf(1, scen{"a", "h", []string{ok6}}), runOf(5, scen{"a", "h", []string{ok6, ok6, ok6, ok6, "FPPPPP"}}))
	if c.BaseK != 1 || c.K != 5 || len(c.Regressions) != 1 || !slices.Equal(c.Regressions[0].Axes, []scorer.Axis{scorer.Captured}) {
		t.Errorf("%+v", c)
	}
}
