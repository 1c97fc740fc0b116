package harness_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

func fxIDs(cases []*scenarios.Compiled) []string {
	var out []string
	for _, c := range cases {
		out = append(out, c.Scenario.ID)
	}
	return out
}

func TestLoadSuiteCore(t *testing.T) {
	name, cases, err := harness.LoadSuite("core")
	require.NoError(t, err)
	assert.Equal(t, "core", name)
	require.Len(t, cases, 30)
	seen := map[string]bool{}
	for _, c := range cases {
		// Compiled means runnable: a script, a catalogue and starting records.
		assert.NotEmpty(t, c.Script.Steps, c.Scenario.ID)
		assert.NotEmpty(t, c.Tools, c.Scenario.ID)
		assert.NotEmpty(t, c.Records, c.Scenario.ID)
		assert.NotZero(t, c.Seed, c.Scenario.ID)
		assert.False(t, seen[c.Scenario.ID], "duplicate id %s", c.Scenario.ID)
		seen[c.Scenario.ID] = true
	}
	assert.Equal(t, "corr-01", cases[0].Scenario.ID, "file order")
	assert.Equal(t, "tf-10", cases[29].Scenario.ID)
}

func TestLoadSuiteExtended(t *testing.T) {
	name, cases, err := harness.LoadSuite("extended")
	require.NoError(t, err)
	assert.Equal(t, "extended", name)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		assert.NotEmpty(t, c.Script.Steps, c.Scenario.ID)
	}
}

func TestLoadSuiteDirectory(t *testing.T) {
	dir := filepath.Join("testdata", "suite_dir")
	name, cases, err := harness.LoadSuite(dir)
	require.NoError(t, err)
	assert.Equal(t, dir, name)
	assert.Equal(t, []string{"my-corr", "my-tf"}, fxIDs(cases), "sorted by file name")
	assert.Equal(t, "correction", string(cases[0].Scenario.Category))
}

// A lone file is a case, not a pack: seed 001's shape (no description)
// must run as it is.
func TestLoadSuiteSingleFile(t *testing.T) {
	file := filepath.Join("testdata", "suite_lone", "seed001_corr-02.json")
	name, cases, err := harness.LoadSuite(file)
	require.NoError(t, err)
	assert.Equal(t, file, name)
	require.Len(t, cases, 1)
	assert.Equal(t, "corr-02", cases[0].Scenario.ID)
	assert.NotEmpty(t, cases[0].Script.Steps)

	// A YAML file works too.
	_, cases, err = harness.LoadSuite(filepath.Join("testdata", "suite_dir", "b-tf.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []string{"my-tf"}, fxIDs(cases))
}

func TestLoadSuiteBadPath(t *testing.T) {
	_, _, err := harness.LoadSuite("no-such-pack")
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, `"no-such-pack"`)
	assert.Contains(t, msg, "core", "lists the built-in packs")
	assert.Contains(t, msg, "extended")
	assert.Contains(t, msg, "neither a built-in pack")
}

func TestLoadSuiteBrokenScenario(t *testing.T) {
	dir := filepath.Join("testdata", "suite_broken")
	for _, spec := range []string{dir, filepath.Join(dir, "bad.yaml")} {
		t.Run(spec, func(t *testing.T) {
			_, cases, err := harness.LoadSuite(spec)
			require.Error(t, err)
			assert.Nil(t, cases, "no partial suite on error")
			assert.Contains(t, err.Error(), filepath.Join(dir, "bad.yaml")+":4: colour: unknown field")
			var se *scenarios.Error
			require.True(t, errors.As(err, &se), "the problem is a *scenarios.Error")
			assert.Equal(t, 4, se.Line)
		})
	}
	// Pack rules still hold for directories: a duplicate id is an error.
	_, _, err := harness.LoadSuite(filepath.Join("testdata", "suite_dup"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `duplicate scenario id "my-tf"`)
}

func TestSelect(t *testing.T) {
	_, cases, err := harness.LoadSuite("core")
	require.NoError(t, err)

	all, err := harness.Select(cases, nil)
	require.NoError(t, err)
	assert.Len(t, all, 30)

	// Suite order, not the order asked; blanks and repeats are harmless.
	got, err := harness.Select(cases, []string{"tf-07", " corr-02", "int-05", "", "tf-07"})
	require.NoError(t, err)
	assert.Equal(t, []string{"corr-02", "int-05", "tf-07"}, fxIDs(got))

	_, err = harness.Select(cases, []string{"corr-02", "nope-1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nope-1")
	assert.NotContains(t, err.Error(), "corr-02", "only the missing ids are named")
}

func TestFailed(t *testing.T) {
	mk := func(id string, o trace.Outcome, integrity bool) scorer.CallScore {
		return scorer.CallScore{Call: id + ".t1", Scenario: id, Outcome: o, Integrity: integrity}
	}
	got := harness.Failed([]scorer.CallScore{
		mk("tf-02", trace.OutcomeScored, false),
		mk("corr-01", trace.OutcomeScored, true),
		mk("int-03", trace.OutcomeAgentError, false),
		mk("corr-09", trace.OutcomeHarnessError, false),
		mk("tf-01", trace.OutcomeExcluded, false), // excluded: nothing to re-run
	})
	// Call ids (what --rerun-failed places again: a failed trial stays
	// that trial), sorted.
	assert.Equal(t, []string{"corr-09.t1", "int-03.t1", "tf-02.t1"}, got)
	assert.Empty(t, harness.Failed(nil))
}
