package harness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// fxEnded is a good history whose call ended with outcome and reason.
func fxEnded(call string, o trace.Outcome, reason string) *trace.History {
	h := fxGood(call)
	h.Events[len(h.Events)-1].Data = &trace.CallEnd{Outcome: o, Reason: reason}
	return h
}

// fxDir writes hs through Results into a new results directory planning
// planned; finished says whether the run wrote its completion marker.
func fxDir(t *testing.T, planned []string, finished bool, hs ...*trace.History) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	res, err := harness.CreateResults(dir, harness.Meta{Agent: "ws://127.0.0.1:1/", Suite: "core", Calls: len(planned), Planned: planned})
	require.NoError(t, err)
	for _, h := range hs {
		require.NoError(t, res.Add(h, scorer.Score(h)))
	}
	if finished {
		require.NoError(t, res.Finish(nil))
	}
	require.NoError(t, res.Close())
	return dir
}

// fxTear appends the first half of h's lines to dir's run file, as a kill
// in the middle of its write leaves it.
func fxTear(t *testing.T, dir string, h *trace.History) {
	t.Helper()
	b := fxJSONL(t, []*trace.History{h})
	f, err := os.OpenFile(filepath.Join(dir, harness.RunFile), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(b[:len(b)/2])
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func fxCallIDs(hs []*trace.History) []string {
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.Call
	}
	return ids
}

func TestLoadRunDropsATornLastCall(t *testing.T) {
	dir := fxDir(t, []string{"a", "b", "c"}, false, fxGood("a"), fxGood("b"))
	fxTear(t, dir, fxGood("c"))

	run, err := harness.LoadRun(dir)
	require.NoError(t, err, "a torn last line never fails the whole run")
	assert.Equal(t, []string{"a", "b"}, fxCallIDs(run.Histories))
	assert.Equal(t, []string{"c"}, run.Dropped, "the torn call's complete lines are left out too")
	require.NotEmpty(t, run.Warnings)
	assert.Contains(t, run.Warnings[0], "torn last line")
	require.NotNil(t, run.Meta)
	assert.Nil(t, run.Done)

	// The run file alone finds the manifest beside it.
	byFile, err := harness.LoadRun(filepath.Join(dir, harness.RunFile))
	require.NoError(t, err)
	assert.Equal(t, run.Meta, byFile.Meta)

	c := harness.CheckCompleteness(run)
	assert.False(t, c.Complete())
	assert.Equal(t, []string{"c"}, c.Missing)
	assert.True(t, c.CutShort)
}

func TestCheckCompleteness(t *testing.T) {
	good := func(ids ...string) []*trace.History {
		var hs []*trace.History
		for _, id := range ids {
			hs = append(hs, fxGood(id))
		}
		return hs
	}
	for _, tc := range []struct {
		name     string
		planned  []string
		finished bool
		hs       []*trace.History
		want     harness.Completeness
	}{
		{"complete", []string{"a", "b"}, true, good("b", "a"),
			harness.Completeness{Planned: 2, Calls: 2}},
		{"empty", []string{"a"}, true, nil,
			harness.Completeness{Planned: 1, Empty: true, Missing: []string{"a"}}},
		{"killed at 1 of 3", []string{"a", "b", "c"}, false, good("a"),
			harness.Completeness{Planned: 3, Calls: 1, Missing: []string{"b", "c"}, CutShort: true}},
		{"all written, marker missing", []string{"a"}, false, good("a"),
			harness.Completeness{Planned: 1, Calls: 1, CutShort: true}},
		{"duplicated", []string{"a", "b"}, true, good("a", "b", "a"),
			harness.Completeness{Planned: 2, Calls: 3, Duplicated: []string{"a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := harness.LoadRun(fxDir(t, tc.planned, tc.finished, tc.hs...))
			require.NoError(t, err)
			c := harness.CheckCompleteness(run)
			assert.Equal(t, tc.want, c)
			complete := tc.name == "complete"
			assert.Equal(t, complete, c.Complete())
			assert.Equal(t, complete, len(c.Problems()) == 0, c.Problems())
			g := harness.GateRun(run, harness.Policy{})
			assert.Equal(t, complete, g.Incomplete == nil)
			if !complete {
				assert.False(t, g.Holds, "an incomplete run never holds")
			}
		})
	}
}

func TestCheckCompletenessCancelled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	res, err := harness.CreateResults(dir, harness.Meta{Suite: "core", Planned: []string{"a", "b"}})
	require.NoError(t, err)
	b := fxEnded("b", trace.OutcomeHarnessError, harness.ReasonCancelled)
	for _, h := range []*trace.History{fxGood("a"), b} {
		require.NoError(t, res.Add(h, scorer.Score(h)))
	}
	require.NoError(t, res.Finish([]string{"b"}))
	require.NoError(t, res.Close())
	run, err := harness.LoadRun(dir)
	require.NoError(t, err)
	c := harness.CheckCompleteness(run)
	assert.True(t, c.CutShort)
	assert.Equal(t, []string{"b"}, c.Cancelled)
	assert.Contains(t, c.Problems()[0], "run cancelled: 1 calls unfinished: b")
}

// Without a manifest (an older run, a bare file) missing calls cannot be
// told, but an empty run, duplicates and torn calls still can.
func TestCheckCompletenessWithoutManifest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	run, err := harness.LoadRun(path)
	require.NoError(t, err)
	assert.True(t, harness.CheckCompleteness(run).Empty, "an empty run.jsonl never holds")
	g := harness.GateRun(run, harness.Policy{})
	assert.False(t, g.Holds)
	assert.NotNil(t, g.Incomplete)

	require.NoError(t, os.WriteFile(path, fxJSONL(t, []*trace.History{fxGood("a")}), 0o644))
	run, err = harness.LoadRun(path)
	require.NoError(t, err)
	assert.True(t, harness.CheckCompleteness(run).Complete())
	assert.Nil(t, harness.GateRun(run, harness.Policy{}).Incomplete)
}

func TestGateRunOrdersViolationsByScenario(t *testing.T) {
	bad := func(id string) *trace.History { return fxHist(id, fxCat(fxWrite("r1", ""), fxConfirm("a1"))...) }
	dir := fxDir(t, []string{"a", "b", "c"}, true, bad("c"), bad("a"), bad("b"))
	run, err := harness.LoadRun(dir)
	require.NoError(t, err)
	g := harness.GateRun(run, harness.Policy{})
	require.False(t, g.Holds)
	for _, r := range g.Rules {
		var calls []string
		for _, v := range r.Violations {
			calls = append(calls, v.Call)
		}
		assert.IsNonDecreasing(t, calls, "%s: violations follow scenario order, not completion order", r.Rule)
	}
}

func TestPrepareResume(t *testing.T) {
	planned := []string{"a", "b", "c", "d"}
	cancelled := fxEnded("b", trace.OutcomeHarnessError, harness.ReasonCancelled)
	dir := fxDir(t, planned, false, fxGood("a"), cancelled)
	fxTear(t, dir, fxGood("c"))

	plan, err := harness.PrepareResume(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "c", "d"}, plan.Todo, "cancelled, torn and never-placed calls are placed again")
	assert.Equal(t, 1, plan.Kept)
	assert.Equal(t, 1, plan.Moved)
	assert.Equal(t, planned, plan.Meta.Planned)

	run, err := harness.LoadRun(dir)
	require.NoError(t, err)
	assert.Empty(t, run.Warnings, "the torn line is gone from run.jsonl")
	assert.Equal(t, []string{"a"}, fxCallIDs(run.Histories))
	attempts, err := harness.ReadRun(filepath.Join(dir, harness.AttemptsFile))
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, fxCallIDs(attempts), "the cancelled attempt is kept as history")

	res, err := harness.OpenResults(dir)
	require.NoError(t, err)
	for _, id := range plan.Todo {
		h := fxGood(id)
		require.NoError(t, res.Add(h, scorer.Score(h)))
	}
	require.NoError(t, res.Finish(nil))
	require.NoError(t, res.Close())

	run, err = harness.LoadRun(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "d"}, fxCallIDs(run.Histories))
	assert.True(t, harness.CheckCompleteness(run).Complete())
	assert.Equal(t, 4, run.Done.Calls)
	scores, err := harness.ReadScores(filepath.Join(dir, harness.ScoresFile))
	require.NoError(t, err)
	assert.Equal(t, scorer.ScoreAll(run.Histories), scores, "scores follow the histories")
	assert.Nil(t, harness.GateRun(run, harness.Policy{}).Incomplete)

	// A directory without a manifest cannot be resumed.
	bare := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bare, harness.RunFile), nil, 0o644))
	_, err = harness.PrepareResume(bare)
	assert.ErrorContains(t, err, "no run manifest")
}

func TestMerge(t *testing.T) {
	failing := fxHist("a", fxCat(fxWrite("r1", ""), fxConfirm("a1"))...)
	// The first run was killed after two of three calls; a failed.
	first := fxDir(t, []string{"a", "b", "c"}, false, failing, fxGood("b"))
	// The re-run places a again, and c.
	second := fxDir(t, []string{"a", "c"}, true, fxGood("c"), fxGood("a"))

	out := filepath.Join(t.TempDir(), "merged")
	res, err := harness.Merge(out, []string{first, second})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Calls)
	assert.Equal(t, 1, res.Replaced)

	run, err := harness.LoadRun(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, fxCallIDs(run.Histories))
	assert.Equal(t, string(fxJSONL(t, []*trace.History{fxGood("a")})), string(fxJSONL(t, run.Histories[:1])), "the later attempt of a wins")
	assert.Equal(t, []string{"a", "b", "c"}, run.Meta.Planned)
	assert.Equal(t, []string{first, second}, run.Meta.Sources)
	assert.True(t, harness.CheckCompleteness(run).Complete())
	assert.Nil(t, harness.GateRun(run, harness.Policy{}).Incomplete)
	attempts, err := harness.ReadRun(filepath.Join(out, harness.AttemptsFile))
	require.NoError(t, err)
	require.Len(t, attempts, 1)
	assert.Equal(t, string(fxJSONL(t, []*trace.History{failing})), string(fxJSONL(t, attempts)), "the earlier attempt is kept")

	// Merging the merge with another re-run carries the attempts along.
	third := fxDir(t, []string{"b"}, true, fxGood("b"))
	again := filepath.Join(t.TempDir(), "again")
	res, err = harness.Merge(again, []string{out, third})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Replaced)

	// The first run alone, merged, is still missing c.
	alone := filepath.Join(t.TempDir(), "alone")
	_, err = harness.Merge(alone, []string{first})
	require.NoError(t, err)
	run, err = harness.LoadRun(alone)
	require.NoError(t, err)
	assert.Equal(t, []string{"c"}, harness.CheckCompleteness(run).Missing)
	assert.False(t, harness.GateRun(run, harness.Policy{}).Holds)

	// Runs of different suites are not one run.
	other := filepath.Join(t.TempDir(), "other")
	r, err := harness.CreateResults(other, harness.Meta{Suite: "extended", Planned: []string{"x"}})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	_, err = harness.Merge(filepath.Join(t.TempDir(), "x"), []string{first, other})
	assert.ErrorContains(t, err, "not the same run")
}
