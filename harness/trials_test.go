package harness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
)

func TestCallIDRoundTrip(t *testing.T) {
	for _, c := range []struct {
		id       string
		scenario string
		trial    int
	}{
		{"corr-02", "corr-02", 0},
		{"corr-02.t1", "corr-02", 1},
		{"corr-02.t12", "corr-02", 12},
		{"ext-06-negate-held-ship-then-fail.t3", "ext-06-negate-held-ship-then-fail", 3},
		// Not trial suffixes: kept whole, so a foreign id is never split.
		{"corr-02.t0", "corr-02.t0", 0},
		{"corr-02.t01", "corr-02.t01", 0},
		{"corr-02.tx", "corr-02.tx", 0},
		{".t2", ".t2", 0},
		{"a.t2.t3", "a.t2", 3},
	} {
		sc, tr := harness.SplitCallID(c.id)
		assert.Equal(t, c.scenario, sc, c.id)
		assert.Equal(t, c.trial, tr, c.id)
		if c.trial > 0 {
			assert.Equal(t, c.id, harness.CallID(sc, tr))
		}
	}
	assert.Equal(t, "corr-02", harness.CallID("corr-02", 0))
}

func TestPlacementsTrialByTrial(t *testing.T) {
	_, cases, err := harness.LoadSuite("core")
	require.NoError(t, err)
	cases = cases[:3]
	assert.Equal(t, fxIDs(cases), harness.CallIDs(harness.Placements(cases, 1)), "one trial: the scenario ids")
	assert.Equal(t, fxIDs(cases), harness.CallIDs(harness.Placements(cases, 0)))
	assert.Equal(t, []string{
		"corr-01.t1", "corr-02.t1", "corr-03.t1",
		"corr-01.t2", "corr-02.t2", "corr-03.t2",
	}, harness.CallIDs(harness.Placements(cases, 2)), "every scenario's first trial before any second")

	ps, err := harness.SelectCalls(cases, []string{"corr-02.t2", "corr-01", " corr-02.t2 ", ""})
	require.NoError(t, err)
	require.Len(t, ps, 2, "duplicates and blanks dropped")
	assert.Equal(t, "corr-02.t2", ps[0].CallID())
	assert.Equal(t, 2, ps[0].Trial)
	assert.Equal(t, "corr-01", ps[1].CallID())
	_, err = harness.SelectCalls(cases, []string{"corr-09.t1", "tf-01"})
	assert.EqualError(t, err, "no scenario for call corr-09.t1, tf-01 in the suite")
}

func TestScenarioHash(t *testing.T) {
	_, a, err := harness.LoadSuite("core")
	require.NoError(t, err)
	_, b, err := harness.LoadSuite("core")
	require.NoError(t, err)
	packA, hashA := harness.Hashes(a)
	packB, hashB := harness.Hashes(b)
	assert.Equal(t, packA, packB, "loading twice hashes the same")
	assert.Equal(t, hashA, hashB)
	assert.Len(t, hashA, 30)
	assert.NotEqual(t, hashA["corr-01"], hashA["corr-02"])

	// A label changes no call; a seed or a fault does.
	b[0].Scenario.Description = "reworded"
	assert.Equal(t, hashA["corr-01"], harness.ScenarioHash(b[0]))
	b[0].Seed++
	assert.NotEqual(t, hashA["corr-01"], harness.ScenarioHash(b[0]))
	b[0].Seed--
	b[0].Script.Steps[0].Text += " please"
	assert.NotEqual(t, hashA["corr-01"], harness.ScenarioHash(b[0]))
	_, hashB = harness.Hashes(b)
	assert.NotEqual(t, packA, harness.PackHash(hashB), "one scenario changed: the pack's hash changes")
}

// TestMergeRefusesTwoVersions: one scenario placed with two contents is
// not one run; equal or disjoint hashes merge, and the merged manifest
// carries the union and its pack hash.
func TestMergeRefusesTwoVersions(t *testing.T) {
	mk := func(hashes map[string]string) string {
		dir := t.TempDir()
		res, err := harness.CreateResults(dir, harness.Meta{Suite: "core", ScenarioHashes: hashes, PackHash: harness.PackHash(hashes)})
		require.NoError(t, err)
		require.NoError(t, res.Finish(nil))
		require.NoError(t, res.Close())
		return dir
	}
	a := mk(map[string]string{"corr-01": "aaa", "corr-02": "bbb"})
	b := mk(map[string]string{"corr-02": "bbb", "corr-03": "ccc"})
	c := mk(map[string]string{"corr-02": "BBB"})
	out := t.TempDir()
	_, err := harness.Merge(out, []string{a, b})
	require.NoError(t, err)
	meta, err := harness.ReadMeta(out)
	require.NoError(t, err)
	want := map[string]string{"corr-01": "aaa", "corr-02": "bbb", "corr-03": "ccc"}
	assert.Equal(t, want, meta.ScenarioHashes)
	assert.Equal(t, harness.PackHash(want), meta.PackHash)

	_, err = harness.Merge(t.TempDir(), []string{a, c})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scenario corr-02 changed between")
}
