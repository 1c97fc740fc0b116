package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/release"
	"github.com/callproof/callproof/scorer"
)

// sweepJSON is what sweep --json prints.
type sweepJSON struct {
	Scenario string                               `json:"scenario"`
	Points   []harness.SweepPoint                 `json:"points"`
	Windows  map[scorer.Bucket][][2]time.Duration `json:"windows"`
}

func runSweep(t *testing.T, agent, out string) (int, sweepJSON) {
	t.Helper()
	// Offsets well clear of 500 ms, where the correction's last word
	// (1 s of speech) ends just as the update commits (1.5 s): there the
	// order of the two is a coin toss for any agent.
	code, stdout, stderr := fxCLI(t, "sweep", filepath.Join("..", "..", "examples", "sweep", "correction-in-flight.yaml"),
		"--param", "correct.delay=0..2100/700", "--agent", agent, "--scale", "0.5", "--out", out, "--json")
	var s sweepJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &s), "sweep --json:\n%s\n%s", stdout, stderr)
	require.Len(t, s.Points, 4, stderr)
	return code, s
}

// TestSweepMapsRaceWindow: the correction's offset after the update
// reaches the backend, swept over 0..2.1 s. naive leaves the old date
// where the correction finds the update in flight (a window that opens at
// 0 and closes before the update's commit at 1.5 s), and is clean once
// the update has landed before the correction; careful is clean at every
// offset.
func TestSweepMapsRaceWindow(t *testing.T) {
	code, naive := runSweep(t, fxAgent(t, "naive"), t.TempDir())
	assert.Equal(t, exitGate, code, "a window was found")
	stale := append(naive.Windows[scorer.BucketStaleToolArgs], naive.Windows[scorer.BucketInflightNotCanceled]...)
	require.NotEmpty(t, stale, "naive's correction goes stale somewhere in the range: %+v", naive.Windows)
	for _, w := range stale {
		assert.Less(t, w[1], 1500*time.Millisecond, "stale only while the update is in flight")
	}
	assert.Zero(t, naive.Points[0].Pass, "at offset 0 the update is in flight")
	assert.Positive(t, naive.Points[0].Hits[scorer.BucketStaleToolArgs]+naive.Points[0].Hits[scorer.BucketInflightNotCanceled])
	last := naive.Points[len(naive.Points)-1]
	assert.Equal(t, last.Total, last.Pass, "at 2s the update landed first and naive writes again: clean")

	code, careful := runSweep(t, fxAgent(t, "careful"), t.TempDir())
	assert.Equal(t, exitOK, code)
	assert.Empty(t, careful.Windows, "careful is clean across the whole range")
	for _, pt := range careful.Points {
		assert.Equal(t, 1, pt.Total, "value %s scored", pt.Value)
		assert.Equal(t, pt.Total, pt.Pass, "value %s", pt.Value)
	}
}

// replayJSON is what replay --json prints.
type replayJSON struct {
	Recorded   harness.Reproduction   `json:"recorded"`
	Attempts   []harness.Reproduction `json:"attempts"`
	Reproduced bool                   `json:"reproduced"`
}

// TestReplayReproducesStaleWrite: naive's stale write of corr-02 (tool
// args built from the superseded order number) comes back on demand.
func TestReplayReproducesStaleWrite(t *testing.T) {
	agent := fxAgent(t, "naive")
	dir := t.TempDir()
	code, _, stderr := fxCLI(t, "run", "--agent", agent, "--only", "corr-02", "--scale", "0.1", "--out", dir)
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := fxCLI(t, "replay", dir, "corr-02", "--json")
	require.Equal(t, exitOK, code, "reproduced\n%s\n%s", stdout, stderr)
	var r replayJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	assert.True(t, r.Reproduced)
	assert.Contains(t, r.Recorded.Buckets, scorer.BucketStaleToolArgs)
	require.Len(t, r.Attempts, 1)
	assert.Equal(t, "corr-02.r1", r.Attempts[0].Call)
	assert.Contains(t, r.Attempts[0].Buckets, scorer.BucketStaleToolArgs)
	assert.True(t, r.Attempts[0].PrimarySeen)

	// --until-fail stops at the first failing attempt: here the first.
	code, stdout, _ = fxCLI(t, "replay", dir, "corr-02", "--until-fail", "5", "--json", "--out", t.TempDir())
	require.Equal(t, exitOK, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	assert.Len(t, r.Attempts, 1)

	// The attempt is a results directory of its own, shown like any run.
	code, stdout, stderr = fxCLI(t, "show", filepath.Join(dir, "replay", "corr-02"), "corr-02.r1")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "stale_tool_args")

	// Bad input: an unknown call, a bad --until-fail.
	code, _, stderr = fxCLI(t, "replay", dir, "corr-09")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `has no call "corr-09"`)
	code, _, _ = fxCLI(t, "replay", dir, "corr-02", "--until-fail", "0")
	assert.Equal(t, exitUsage, code)
	code, _, stderr = fxCLI(t, "replay", dir, "corr-02", "--until-fail", "1001")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--until-fail 1001: want 1..1000", "the documented bound")
}

// TestRunTrials: --trials places every scenario k times under .tN ids,
// records k and the content hashes in the manifest, and a re-run of the
// failed calls keeps their trial ids.
func TestRunTrials(t *testing.T) {
	agent := fxAgent(t, "naive")
	dir := t.TempDir()
	hist := filepath.Join(t.TempDir(), "history.jsonl")
	code, _, stderr := fxCLI(t, "run", "--agent", agent, "--only", "corr-01,corr-02", "--trials", "2", "--scale", "0.1", "--out", dir,
		"--agent-version", "naive@test", "--history", hist)
	require.Equal(t, exitOK, code, stderr)
	lines, warnings, err := release.ReadHistory(hist)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	require.Len(t, lines, 1, "the run appended its line")
	assert.Equal(t, "naive@test", lines[0].AgentVersion)
	assert.Equal(t, 2, lines[0].K)
	assert.Equal(t, 4, lines[0].Calls)
	assert.Equal(t, 2, lines[0].Integrity, "naive passes corr-01 twice, fails corr-02 twice")
	assert.Equal(t, release.GateFails, lines[0].Gate)
	run, err := harness.LoadRun(dir)
	require.NoError(t, err)
	require.NotNil(t, run.Meta)
	assert.Equal(t, 2, run.Meta.Trials)
	assert.Equal(t, "naive@test", run.Meta.AgentVersion)
	assert.Equal(t, []string{"corr-01.t1", "corr-02.t1", "corr-01.t2", "corr-02.t2"}, run.Meta.Planned)
	assert.Len(t, run.Meta.ScenarioHashes, 2)
	assert.Equal(t, harness.PackHash(run.Meta.ScenarioHashes), run.Meta.PackHash)
	page, err := os.ReadFile(filepath.Join(dir, harness.ReportFile))
	require.NoError(t, err, "run writes the HTML report")
	assert.Contains(t, string(page), "corr-02.t2")
	var calls []string
	for _, h := range run.Sorted() {
		calls = append(calls, h.Call)
		assert.Equal(t, h.Call[:7], h.Start().ScenarioID)
		assert.Equal(t, int(h.Call[len(h.Call)-1]-'0'), h.Start().Trial)
	}
	slices.Sort(calls)
	assert.Equal(t, []string{"corr-01.t1", "corr-01.t2", "corr-02.t1", "corr-02.t2"}, calls)

	again := t.TempDir()
	code, _, stderr = fxCLI(t, "run", "--agent", agent, "--rerun-failed", dir, "--scale", "0.1", "--out", again)
	require.Equal(t, exitOK, code, stderr)
	rerun, err := harness.LoadRun(again)
	require.NoError(t, err)
	assert.Equal(t, []string{"corr-02.t1", "corr-02.t2"}, rerun.Meta.Planned, "naive fails corr-02 in both trials, passes corr-01")

	// A scenario edited since the run began: the resume refuses to mix
	// two versions under one manifest.
	meta := *run.Meta
	meta.ScenarioHashes = map[string]string{"corr-01": "edited", "corr-02": run.Meta.ScenarioHashes["corr-02"]}
	b, err := json.Marshal(meta)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, harness.MetaFile), b, 0o644))
	code, _, stderr = fxCLI(t, "run", "--resume", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "scenario corr-01 changed since the run started")

	code, _, stderr = fxCLI(t, "gate", "--trials", "101", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--trials 101: want 1..100")
	code, _, stderr = fxCLI(t, "run", "--agent", agent, "--trials", "0", "--out", t.TempDir())
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--trials 0: want 1..100")
}

// gateJSON is what gate --json prints with trials and a baseline.
type gateJSON struct {
	harness.GateResult
	Trials   *release.TrialReport `json:"trials"`
	Baseline *release.Comparison  `json:"baseline"`
}

func gateWith(t *testing.T, args ...string) (int, gateJSON) {
	t.Helper()
	code, stdout, stderr := fxCLI(t, append([]string{"gate", "--json"}, args...)...)
	var g gateJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &g), "gate --json:\n%s\n%s", stdout, stderr)
	return code, g
}

func rule(g gateJSON, r harness.Rule) harness.RuleResult {
	for _, x := range g.Rules {
		if x.Rule == r {
			return x
		}
	}
	return harness.RuleResult{Rule: r, Holds: true}
}

// TestGateTrialsAndBaseline: a regression against the baseline blocks the
// gate and is named, a fix is reported as one, the CI files are written,
// the history grows a line per gate, a changed scenario is never compared
// silently, and too few trials break min_trials.
func TestGateTrialsAndBaseline(t *testing.T) {
	careful, naive := fxAgent(t, "careful"), fxAgent(t, "naive")
	place := func(agent, version string) string {
		dir := t.TempDir()
		code, _, stderr := fxCLI(t, "run", "--agent", agent, "--only", "corr-01,corr-02", "--trials", "2", "--scale", "0.1",
			"--out", dir, "--agent-version", version)
		require.Equal(t, exitOK, code, stderr)
		return dir
	}
	good, bad := place(careful, "v1"), place(naive, "v2")
	code, stdout, stderr := fxCLI(t, "baseline", "save", good)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "2 scenarios, 2 trial(s) each, integrity 4/4")

	ci := t.TempDir()
	hist := filepath.Join(ci, "history.jsonl")
	junit, md := filepath.Join(ci, "junit.xml"), filepath.Join(ci, "summary.md")
	code, g := gateWith(t, "--trials", "2", "--baseline", good, "--junit", junit, "--markdown", md, "--history", hist, bad)
	assert.Equal(t, exitGate, code)
	nr := rule(g, harness.RuleNoRegression)
	assert.False(t, nr.Holds)
	require.NotNil(t, g.Baseline)
	require.Len(t, g.Baseline.Regressions, 1, "corr-02 held in the baseline and fails now")
	assert.Equal(t, "corr-02", g.Baseline.Regressions[0].Scenario)
	assert.Contains(t, g.Baseline.Regressions[0].Axes, scorer.StaleWritePrevented)
	assert.Equal(t, 2, g.Baseline.Compared)
	require.NotNil(t, g.Trials)
	st, ok := g.Trials.Scenario("corr-02")
	require.True(t, ok)
	assert.Equal(t, 0.0, st.PassK)
	st, _ = g.Trials.Scenario("corr-01")
	assert.Equal(t, 1.0, st.PassK, "naive passes the early correction every time")
	assert.True(t, rule(g, harness.RuleTrials).Holds)

	x, err := os.ReadFile(junit)
	require.NoError(t, err)
	var js struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	require.NoError(t, xml.Unmarshal(x, &js))
	assert.Equal(t, 2, js.Tests, "one test case per scenario")
	assert.Equal(t, 1, js.Failures)
	m, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(m), "corr-02")
	assert.Contains(t, string(m), "| no_regression | **no** |")

	// The fix, the other way round: naive as the baseline, careful now.
	code, _, stderr = fxCLI(t, "baseline", "save", "--out", filepath.Join(ci, "naive-base"), bad)
	require.Equal(t, exitOK, code, stderr)
	code, g = gateWith(t, "--trials", "2", "--baseline", filepath.Join(ci, "naive-base"), "--history", hist, good)
	assert.Equal(t, exitOK, code)
	require.Len(t, g.Baseline.Fixes, 1)
	assert.Equal(t, "corr-02", g.Baseline.Fixes[0].Scenario)
	assert.Empty(t, g.Baseline.Regressions)

	code, stdout, stderr = fxCLI(t, "history", hist)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "v2")
	assert.Contains(t, stdout, "v1")
	assert.Contains(t, stdout, "fails")
	assert.Contains(t, stdout, "holds")

	// A scenario edited since the baseline is listed, never compared.
	b, err := release.Load(good)
	require.NoError(t, err)
	b.ScenarioHashes["corr-02"] = "edited"
	require.NoError(t, release.Save(good, b))
	code, g = gateWith(t, "--baseline", good, bad)
	assert.Equal(t, exitGate, code, "naive still fails the seed rules")
	assert.Equal(t, []string{"corr-02"}, g.Baseline.ChangedScenarios)
	assert.Empty(t, g.Baseline.Regressions)
	assert.True(t, rule(g, harness.RuleNoRegression).Holds, "corr-01 compared, held both times")

	// Three trials asked of a two-trial run.
	code, g = gateWith(t, "--trials", "3", good)
	assert.Equal(t, exitGate, code)
	mt := rule(g, harness.RuleTrials)
	assert.False(t, mt.Holds)
	assert.Len(t, mt.Violations, 3, "the run's trials, and each scenario short of 3")

	// Bad input: no baseline there.
	code, _, stderr = fxCLI(t, "gate", "--baseline", t.TempDir(), good)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "baseline save RUN_DIR")
}
