package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

const sweepUsage = `usage: callproof sweep SCENARIO --param STEP.FIELD=FROM..TO/BY --agent URL
                      [--suite core|extended|PATH] [--trials K] [--scale F] [--concurrency N] [--out DIR] [--json]
                      [--no-preflight]

Runs one scenario at every value of one timing of its script and prints
which values produce which root-cause buckets: the map of a race window.
SCENARIO is a scenario file, or an id in --suite. FIELD is delay (the
step's offset from its trigger event, e.g. a correction's offset after the
tool call reaches the backend), duration, fallback or timeout; values are
Go durations or plain milliseconds, in script time:
  callproof sweep examples/sweep/correction-in-flight.yaml \
    --param correct.delay=0..2000/100 --agent ws://127.0.0.1:8080/
Calls are written to --out (default out/sweep/SCENARIO, replaced).

exit: 0 every call kept end-to-end integrity; 1 some value broke it (the
window is printed); 2 bad usage or input; 3 a harness error; 5 no agent answers at --agent
(preflight; nothing placed)
`

func cmdSweep(args []string, stdout, stderr io.Writer) int {
	c := newCLI("sweep", sweepUsage, stdout, stderr)
	param := c.String("param", "", "STEP.FIELD=FROM..TO/BY (required)")
	agent := c.String("agent", "", "the agent's WebSocket URL (required)")
	suite := c.String("suite", "core", "where SCENARIO is looked up when it is not a file")
	trials := c.Int("trials", 1, "calls per value")
	scale := c.Float64("scale", 1.0, "time scale offered to the agent")
	conc := c.Int("concurrency", 4, "calls at once")
	out := c.String("out", "", "results directory (default out/sweep/SCENARIO, replaced)")
	asJSON := c.Bool("json", false, "print the map as JSON")
	noPreflight := c.Bool("no-preflight", false, noPreflightUsage)
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "callproof sweep: %v\n", err)
		return exitUsage
	}
	if *param == "" {
		return fail(fmt.Errorf("--param is required"))
	}
	p, err := harness.ParseSweepParam(*param)
	if err != nil {
		return fail(err)
	}
	if err := checkAgent(*agent); err != nil {
		return fail(err)
	}
	if err := checkScale(*scale); err != nil {
		return fail(err)
	}
	if *trials < 1 || *trials > harness.MaxTrials {
		return fail(fmt.Errorf("--trials %d: want 1..%d", *trials, harness.MaxTrials))
	}
	if *conc < 1 {
		return fail(fmt.Errorf("--concurrency %d: want at least 1", *conc))
	}
	sc, suiteName, err := sweepScenario(pos[0], *suite)
	if err != nil {
		return fail(err)
	}
	ps, at, err := harness.SweepPlacements(sc, p, *trials)
	if err != nil {
		return fail(err)
	}
	if *out == "" {
		*out = filepath.Join("out", "sweep", sc.Scenario.ID)
	}
	if !*noPreflight && !preflight("sweep", audioFlags{}, *agent, stderr) {
		return exitNoAgent
	}
	ctx, stop := interruptible("sweep", stderr)
	defer stop()
	pack, hashes := harness.Hashes([]*scenarios.Compiled{sc})
	pl := placement{agent: *agent, out: *out, suite: suiteName, scale: *scale, conc: *conc,
		meta: harness.Meta{Trials: *trials, PackHash: pack, ScenarioHashes: hashes}}
	res, err := pl.place(ctx, ps, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "callproof sweep: %v\n", err)
		return exitBroken
	}
	scores := make([]scorer.CallScore, len(res))
	for i, r := range res {
		scores[i] = r.Score
	}
	points := harness.SweepMap(at, scores)
	windows := sweepWindows(points)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			Scenario string                               `json:"scenario"`
			Param    string                               `json:"param"`
			Points   []harness.SweepPoint                 `json:"points"`
			Windows  map[scorer.Bucket][][2]time.Duration `json:"windows"`
			Out      string                               `json:"out"`
		}{sc.Scenario.ID, p.String(), points, windows, *out})
	} else {
		err = writeSweep(stdout, sc.Scenario.ID, p, *trials, *agent, points, windows)
		if err == nil {
			_, err = fmt.Fprintf(stdout, "\ncalls: %s (show one: %s show %s CALL)\n", *out, self(), *out)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof sweep: %v\n", err)
		return exitBroken
	}
	return sweepExit(ctx.Err() != nil, points)
}

// sweepExit: an interrupted sweep or a harness error proves nothing (3);
// else 1 when any value broke integrity.
func sweepExit(cut bool, points []harness.SweepPoint) int {
	broke := false
	for _, pt := range points {
		if pt.Other[string(trace.OutcomeHarnessError)] > 0 {
			return exitBroken
		}
		broke = broke || pt.Pass < pt.Total
	}
	switch {
	case cut:
		return exitIncomplete
	case broke:
		return exitGate
	}
	return exitOK
}

// sweepScenario reads SCENARIO: a file, or an id in the suite.
func sweepScenario(arg, suite string) (*scenarios.Compiled, string, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		name, cases, err := harness.LoadSuite(arg)
		if err != nil {
			return nil, "", err
		}
		if len(cases) != 1 {
			return nil, "", fmt.Errorf("%s holds %d scenarios: sweep takes one", arg, len(cases))
		}
		return cases[0], name, nil
	}
	name, cases, err := harness.LoadSuite(suite)
	if err != nil {
		return nil, "", err
	}
	sel, err := harness.Select(cases, []string{arg})
	if err != nil {
		return nil, "", fmt.Errorf("%s is neither a scenario file nor a scenario of suite %s", arg, name)
	}
	return sel[0], name, nil
}

// sweepWindows maps every bucket found to the ranges of values it showed at.
func sweepWindows(points []harness.SweepPoint) map[scorer.Bucket][][2]time.Duration {
	out := map[scorer.Bucket][][2]time.Duration{}
	for _, pt := range points {
		for b := range pt.Hits {
			if _, ok := out[b]; !ok {
				out[b] = harness.Windows(points, b)
			}
		}
	}
	return out
}

func writeSweep(w io.Writer, id string, p harness.SweepParam, trials int, agent string, points []harness.SweepPoint, windows map[scorer.Bucket][][2]time.Duration) error {
	fmt.Fprintf(w, "sweep of %s: %s.%s from %s to %s by %s, %d call(s) each, against %s\n\n", id, p.Step, p.Field, p.From, p.To, p.By, trials, agent)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s.%s\tintegrity\tbuckets\n", p.Step, p.Field)
	for _, pt := range points {
		var bs []string
		for b, n := range pt.Hits {
			if n > 0 {
				bs = append(bs, fmt.Sprintf("%s %d/%d", b, n, pt.Total))
			}
		}
		sort.Strings(bs)
		for o, n := range pt.Other {
			bs = append(bs, fmt.Sprintf("[%s %d]", o, n))
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\n", pt.Value, pt.Pass, pt.Total, strings.Join(bs, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(windows) == 0 {
		_, err := fmt.Fprintf(w, "\nno bucket at any value: clean across the whole range\n")
		return err
	}
	fmt.Fprintf(w, "\nwindows (values at which each bucket was found):\n")
	names := make([]string, 0, len(windows))
	for b := range windows {
		names = append(names, string(b))
	}
	sort.Strings(names)
	for _, n := range names {
		var rs []string
		for _, r := range windows[scorer.Bucket(n)] {
			if r[0] == r[1] {
				rs = append(rs, r[0].String())
			} else {
				rs = append(rs, r[0].String()+".."+r[1].String())
			}
		}
		fmt.Fprintf(w, "  %-28s %s\n", n, strings.Join(rs, ", "))
	}
	return nil
}
