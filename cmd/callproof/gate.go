package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/release"
)

const gateUsage = `usage: callproof gate [--policy FILE] [--trials K] [--baseline DIR] [--junit FILE] [--markdown FILE]
                     [--history FILE] [--agent-version V] [--json] RUN.jsonl|DIR|-

Applies seed 001's release gate. With --trials K every scenario must have K
counted trials (run --trials K), and the verdict shows pass^k and 95 %
Wilson intervals; with --baseline DIR (callproof baseline save) a scenario
that held in every baseline trial and now fails in any, or a rate that fell
beyond both intervals, blocks the release. --junit and --markdown write CI
reports; --history appends the run's line to a history file
(callproof history FILE prints the trend). docs/GATING.md.

Exit 0: holds; 1: does not hold; 2: bad input; 3: broken run (a harness
error); 4: incomplete run (planned calls missing or duplicated, or the run
was cut short).
`

func cmdGate(args []string, stdout, stderr io.Writer) int {
	c := newCLI("gate", gateUsage, stdout, stderr)
	policyPath := c.String("policy", "", "policy file (YAML) that tightens the gate")
	asJSON := c.Bool("json", false, "print the verdict as JSON")
	trials := c.Int("trials", 0, fmt.Sprintf("counted trials every scenario must have (1..%d; 0: no requirement)", harness.MaxTrials))
	basePath := c.String("baseline", "", "baseline directory (callproof baseline save) to block regressions against")
	junitPath := c.String("junit", "", "write a JUnit XML report (one test case per scenario) to FILE")
	mdPath := c.String("markdown", "", "write a Markdown summary to FILE")
	histPath := c.String("history", "", "append the run's line to this history file (JSON lines)")
	version := c.String("agent-version", "", "the agent's version or commit (default: the run's manifest)")
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "callproof gate: %v\n", err)
		return exitUsage
	}
	if *trials < 0 || *trials > harness.MaxTrials {
		return fail(fmt.Errorf("--trials %d: want 1..%d", *trials, harness.MaxTrials))
	}
	var policy harness.Policy
	if *policyPath != "" {
		p, err := harness.LoadPolicy(*policyPath)
		if err != nil {
			return fail(err)
		}
		policy = p
	}
	opts := harness.ReleaseOptions{Trials: *trials, AgentVersion: *version, Now: time.Now()}
	if *basePath != "" {
		b, err := release.Load(*basePath)
		if err != nil {
			return fail(fmt.Errorf("--baseline: %w (save one from an accepted run: %s baseline save RUN_DIR)", err, self()))
		}
		opts.Baseline = &b
	}
	run, err := loadRun(pos[0], "gate", stderr)
	if err != nil {
		return fail(err)
	}
	if run.Meta == nil && pos[0] != "-" {
		fmt.Fprintf(stderr, "callproof gate: warning: %s has no run manifest (meta.json): missing calls cannot be told\n", pos[0])
	}
	g, rel := harness.GateRelease(run, policy, opts)
	if err := writeCIReports(run, g, rel, *junitPath, *mdPath, *histPath, opts); err != nil {
		fmt.Fprintf(stderr, "callproof gate: %v\n", err)
		return exitBroken
	}
	// Calls that never reached the agent are said first: their axes are
	// unknown for want of a call, not for anything the agent did.
	unreached := harness.FindUnreached(run.Histories)
	if *asJSON {
		writeUnreached(stderr, unreached)
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			harness.GateResult
			Trials    *release.TrialReport `json:"trials,omitempty"`
			Baseline  *release.Comparison  `json:"baseline,omitempty"`
			Unreached []string             `json:"unreached,omitempty"`
		}{g, trialsIfAsked(rel, opts), rel.Baseline, unreached.Calls})
	} else {
		writeUnreached(stdout, unreached)
		err = writeGateSkipping(stdout, g, unreached.Calls)
		if err == nil && (opts.Trials > 0 || rel.Trials.K > 1) {
			err = writeTrials(stdout, rel.Trials)
		}
		if err == nil && rel.Baseline != nil {
			err = writeComparison(stdout, *basePath, *rel.Baseline)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof gate: %v\n", err)
		return exitBroken
	}
	return gateExit(g)
}

// trialsIfAsked: the JSON verdict carries the trial figures when the run
// has trials or the gate asked for them.
func trialsIfAsked(rel harness.Release, o harness.ReleaseOptions) *release.TrialReport {
	if o.Trials > 0 || rel.Trials.K > 1 {
		return &rel.Trials
	}
	return nil
}

// writeCIReports writes the files a CI job publishes: each through a temp
// file and a rename, so a job never reads half a report.
func writeCIReports(run *harness.SavedRun, g harness.GateResult, rel harness.Release, junit, md, hist string, o harness.ReleaseOptions) error {
	word := release.GateWord(g.Holds, g.Broken, g.Incomplete != nil)
	suite := "callproof"
	if run.Meta != nil && run.Meta.Suite != "" {
		suite = run.Meta.Suite
	}
	if junit != "" {
		if err := writeFileAtomic(junit, func(w io.Writer) error {
			return release.WriteJUnitTimed(w, suite, rel.Scores, rel.Trials, callDurations(run))
		}); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if md != "" {
		title := "callproof: " + suite
		if run.Meta != nil && run.Meta.Agent != "" {
			title += " against " + run.Meta.Agent
		}
		if err := writeFileAtomic(md, func(w io.Writer) error {
			if err := release.WriteMarkdown(w, title, word, rel.Trials, rel.Baseline); err != nil {
				return err
			}
			return writeRulesMarkdown(w, g)
		}); err != nil {
			return fmt.Errorf("--markdown: %w", err)
		}
	}
	if hist != "" {
		line := release.NewHistoryLine(harness.RunRecord(run, o.AgentVersion, o.Now), rel.Trials, word, rel.Baseline)
		if err := release.AppendHistory(hist, line); err != nil {
			return fmt.Errorf("--history: %w", err)
		}
	}
	return nil
}

// callDurations is each call's length on the harness clock, for JUnit.
func callDurations(run *harness.SavedRun) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, h := range run.Histories {
		if n := len(h.Events); n > 0 {
			out[h.Call] = h.Events[n-1].At - h.Events[0].At
		}
	}
	return out
}

// writeFileAtomic writes path through a temp file in its directory.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// gateExit: an incomplete run first (it is not the run that was planned),
// then a broken one (it proves nothing), then the rules.
func gateExit(g harness.GateResult) int {
	switch {
	case g.Incomplete != nil:
		return exitIncomplete
	case g.Broken:
		return exitBroken
	case !g.Holds:
		return exitGate
	}
	return exitOK
}

// gateVerdict is the gate's one-word verdict, as the demo table shows it.
func gateVerdict(g harness.GateResult) string {
	switch {
	case g.Incomplete != nil:
		return "incomplete"
	case g.Broken:
		return "broken run"
	case !g.Holds:
		return "FAILS"
	}
	return "holds"
}

func writeGate(w io.Writer, g harness.GateResult) error { return writeGateSkipping(w, g, nil) }

// writeGateSkipping is writeGate without the violations of the calls
// skip lists (already explained: they never reached the agent).
func writeGateSkipping(w io.Writer, g harness.GateResult, skip []string) error {
	verdict := "HOLDS"
	switch {
	case g.Incomplete != nil:
		verdict = "INCOMPLETE RUN"
	case g.Broken:
		verdict = "BROKEN RUN (" + g.Reason + ")"
	case !g.Holds:
		verdict = "DOES NOT HOLD"
	}
	if _, err := fmt.Fprintf(w, "release gate: %s\n", verdict); err != nil {
		return err
	}
	if g.Incomplete != nil {
		for _, p := range g.Incomplete.Problems() {
			fmt.Fprintf(w, "  %s\n", p)
		}
		if g.Broken {
			fmt.Fprintf(w, "  broken run too (%s)\n", g.Reason)
		}
	}
	for _, r := range g.Rules {
		mark := "ok  "
		if !r.Holds {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s", mark, r.Rule)
		if n := len(r.Violations); n > 0 {
			fmt.Fprintf(w, " (%d)", n)
		}
		fmt.Fprintln(w)
		var vs []harness.Violation
		skipped := 0
		for _, v := range r.Violations {
			if v.Call != "" && slices.Contains(skip, v.Call) {
				skipped++
				continue
			}
			vs = append(vs, v)
		}
		harness.SortViolations(vs)
		if skipped > 0 {
			fmt.Fprintf(w, "       %d of the calls that never reached the agent (above)\n", skipped)
		}
		for i, v := range vs {
			if i == 5 {
				fmt.Fprintf(w, "       … %d more\n", len(vs)-5)
				break
			}
			call := v.Call
			if call == "" {
				call = "suite"
			}
			fmt.Fprintf(w, "       %s: %s\n", call, v.Text)
		}
	}
	return nil
}

// writeUnreached says how many calls never reached the agent and why
// (their end reasons); nothing when every call did.
func writeUnreached(w io.Writer, u harness.UnreachedCalls) {
	n := len(u.Calls)
	if n == 0 {
		return
	}
	if n == u.Total {
		fmt.Fprintf(w, "no call reached the agent: all %d calls ended agent_error with nothing said, heard or requested\n", n)
	} else {
		fmt.Fprintf(w, "%d of %d calls never reached the agent: they ended agent_error with nothing said, heard or requested\n", n, u.Total)
	}
	for i, r := range u.Reasons {
		if i == 3 {
			fmt.Fprintf(w, "  … %d other reasons\n", len(u.Reasons)-3)
			break
		}
		fmt.Fprintf(w, "  %d × %s\n", r.N, r.Reason)
	}
	fmt.Fprintf(w, "  their axes are unknown for want of a call: start the agent (or correct --agent) and place them again\n\n")
}

// writeRulesMarkdown lists the gate's rules under the Markdown summary:
// why it does not hold, with a few violations each.
func writeRulesMarkdown(w io.Writer, g harness.GateResult) error {
	fmt.Fprintf(w, "\n## Gate rules\n\n| rule | holds | violations |\n|---|---|---|\n")
	for _, r := range g.Rules {
		holds := "yes"
		if !r.Holds {
			holds = "**no**"
		}
		vs := append([]harness.Violation(nil), r.Violations...)
		harness.SortViolations(vs)
		var cells []string
		for i, v := range vs {
			if i == 3 {
				cells = append(cells, fmt.Sprintf("… %d more", len(vs)-3))
				break
			}
			call := v.Call
			if call == "" {
				call = "suite"
			}
			cells = append(cells, "`"+call+"`: "+mdCell(v.Text))
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", r.Rule, holds, strings.Join(cells, "<br>"))
	}
	if g.Incomplete != nil {
		fmt.Fprintf(w, "\nIncomplete run: %s\n", mdCell(strings.Join(g.Incomplete.Problems(), "; ")))
	}
	if g.Broken {
		fmt.Fprintf(w, "\nBroken run: %s\n", mdCell(g.Reason))
	}
	return nil
}

// mdCell keeps text inside one Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
}
