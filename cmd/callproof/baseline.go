package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/release"
	"github.com/callproof/callproof/scorer"
)

const baselineUsage = `usage: callproof baseline save [--out DIR] [--agent-version V] RUN_DIR
       callproof baseline show DIR

save records an accepted run as the baseline later gates compare with
(gate --baseline DIR): per scenario its trials, integrity and axes, with
the scenarios' content hashes. It writes DIR/baseline.json (default the run
directory itself). A run that is incomplete or broken is refused: a
baseline must be a run that proves something.
`

func cmdBaseline(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		c := newCLI("baseline", baselineUsage, stdout, stderr)
		if len(args) == 0 {
			c.Usage()
			return exitUsage
		}
		return c.help()
	}
	switch args[0] {
	case "save":
		return cmdBaselineSave(args[1:], stdout, stderr)
	case "show":
		return cmdBaselineShow(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "callproof baseline: unknown subcommand %q (save or show)\n", args[0])
	return exitUsage
}

func cmdBaselineSave(args []string, stdout, stderr io.Writer) int {
	c := newCLI("baseline save", baselineUsage, stdout, stderr)
	out := c.String("out", "", "where baseline.json is written (default RUN_DIR)")
	version := c.String("agent-version", "", "the agent's version or commit (default: the run's manifest)")
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	run, err := harness.LoadRun(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "callproof baseline save: %v\n", err)
		return exitUsage
	}
	warn(stderr, "baseline save", run.Warnings)
	if run.Meta == nil || run.Meta.PackHash == "" {
		fmt.Fprintf(stderr, "callproof baseline save: %s has no scenario content hashes in its manifest (a run from before they were recorded, or a bare file): re-run it\n", pos[0])
		return exitUsage
	}
	g, rel := harness.GateRelease(run, harness.Policy{}, harness.ReleaseOptions{AgentVersion: *version, Now: time.Now()})
	switch {
	case g.Incomplete != nil:
		fmt.Fprintf(stderr, "callproof baseline save: %s is incomplete (%s): finish it first\n", pos[0], strings.Join(g.Incomplete.Problems(), "; "))
		return exitIncomplete
	case g.Broken:
		fmt.Fprintf(stderr, "callproof baseline save: %s is a broken run (%s): re-place those calls first\n", pos[0], g.Reason)
		return exitBroken
	}
	dir := *out
	if dir == "" {
		dir = pos[0]
	}
	if err := release.Save(dir, rel.Current); err != nil {
		fmt.Fprintf(stderr, "callproof baseline save: %v\n", err)
		return exitBroken
	}
	b := rel.Current
	fmt.Fprintf(stdout, "baseline saved: %s/%s — %d scenarios, %d trial(s) each, integrity %d/%d, pack %.12s\n",
		dir, release.BaselineFile, len(b.Scenarios), b.K, b.Integrity, b.Calls, b.PackHash)
	if !g.Holds {
		fmt.Fprintf(stdout, "note: the gate does not hold on this run; later runs are judged against it as it is\n")
	}
	return exitOK
}

func cmdBaselineShow(args []string, stdout, stderr io.Writer) int {
	c := newCLI("baseline show", baselineUsage, stdout, stderr)
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	b, err := release.Load(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "callproof baseline show: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "baseline of %s (%s) on suite %s, saved %s, pack %.12s, %d trial(s) per scenario\n",
		b.Agent, orDash(b.AgentVersion), b.Suite, b.Created.Format(time.RFC3339), b.PackHash, b.K)
	fmt.Fprintf(stdout, "integrity %d/%d\n", b.Integrity, b.Calls)
	for _, s := range b.Scenarios {
		fmt.Fprintf(stdout, "  %-36s %d/%d\n", s.Scenario, s.Integrity, s.Trials)
	}
	return exitOK
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

const historyUsage = `usage: callproof history FILE

Prints the trend of a history file that gate --history appends to: one
row per gated run (time, agent version, pack, integrity, each axis, gate),
with the change against the previous run of the same agent and pack.
`

func cmdHistory(args []string, stdout, stderr io.Writer) int {
	c := newCLI("history", historyUsage, stdout, stderr)
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	lines, warnings, err := release.ReadHistory(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "callproof history: %v\n", err)
		return exitUsage
	}
	warn(stderr, "history", warnings)
	if err := release.WriteTrend(stdout, lines); err != nil {
		fmt.Fprintf(stderr, "callproof history: %v\n", err)
		return exitBroken
	}
	return exitOK
}

// writeTrials prints pass^k, the 95 % Wilson intervals and the flaky
// scenarios under the gate's verdict.
func writeTrials(w io.Writer, tr release.TrialReport) error {
	fmt.Fprintf(w, "\ntrials: %d per scenario, %d counted calls\n", tr.K, tr.Calls)
	fmt.Fprintf(w, "  %-30s %-9s %s\n", "", "passes", "95% interval")
	row := func(name string, t release.Tally) {
		fmt.Fprintf(w, "  %-30s %-9s [%.2f, %.2f]\n", name, fmt.Sprintf("%d/%d", t.Pass, t.N), t.Lo, t.Hi)
	}
	for _, a := range scorer.Axes() {
		row(string(a), tr.Axis(a).Tally)
	}
	row("end-to-end integrity", tr.Integrity)
	if tr.PassKScenarios > 0 {
		fmt.Fprintf(w, "  pass^%d (mean over %d scenarios)   %.3f\n", tr.K, tr.PassKScenarios, tr.PassK)
	}
	var low []string
	for _, s := range tr.Scenarios {
		if !s.Short && s.PassK < 1 {
			low = append(low, fmt.Sprintf("%s %.2f", s.Scenario, s.PassK))
		}
	}
	if len(low) > 0 {
		fmt.Fprintf(w, "  pass^%d below 1: %s\n", tr.K, strings.Join(low, ", "))
	}
	if len(tr.Flaky) > 0 {
		fmt.Fprintf(w, "  flaky (mixed verdicts across trials): %s\n", strings.Join(tr.Flaky, ", "))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// writeComparison prints regressions and fixes side by side, and every
// scenario that could not be compared.
func writeComparison(w io.Writer, dir string, c release.Comparison) error {
	fmt.Fprintf(w, "\nagainst baseline %s: %d scenarios compared, %d regressions, %d fixes, %d unchanged\n",
		dir, c.Compared, len(c.Regressions)+len(c.RateRegressions), len(c.Fixes), c.Unchanged)
	if c.PackChanged {
		fmt.Fprintf(w, "  the pack changed (%.12s → %.12s): only scenarios with equal content are compared\n", c.BasePack, c.Pack)
	}
	n := max(len(c.Regressions), len(c.Fixes))
	if n > 0 {
		fmt.Fprintf(w, "  %-44s %s\n", "regressions", "fixes")
	}
	for i := range n {
		left, right := "", ""
		if i < len(c.Regressions) {
			r := c.Regressions[i]
			left = fmt.Sprintf("%s %d/%d → %d/%d", r.Scenario, r.BaseIntegrity, r.BaseTrials, r.Integrity, r.Trials)
		}
		if i < len(c.Fixes) {
			f := c.Fixes[i]
			right = fmt.Sprintf("%s %d/%d → %d/%d", f.Scenario, f.BaseIntegrity, f.BaseTrials, f.Integrity, f.Trials)
		}
		fmt.Fprintf(w, "  %-44s %s\n", left, right)
	}
	for _, r := range c.RateRegressions {
		fmt.Fprintf(w, "  rate: %s %d/%d → %d/%d\n", r.Measure, r.Base.Pass, r.Base.N, r.Current.Pass, r.Current.N)
	}
	for _, l := range []struct {
		what string
		ids  []string
	}{{"changed since the baseline (not compared)", c.ChangedScenarios}, {"new (not in the baseline)", c.Added},
		{"gone (only in the baseline)", c.Removed}, {"without a content hash (not compared)", c.Unhashed}, {"no counted trial on a side", c.Unscored}} {
		if len(l.ids) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", l.what, strings.Join(l.ids, ", "))
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}
