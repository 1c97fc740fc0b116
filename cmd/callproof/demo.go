package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
)

// demoAgent is one agent's demo result, as printed by --json.
type demoAgent struct {
	Agent   string             `json:"agent"`
	Dir     string             `json:"dir"`
	Summary reports.Summary    `json:"summary"`
	Gate    harness.GateResult `json:"gate"`
}

func cmdDemo(args []string, stdout, stderr io.Writer) int {
	c := newCLI("demo", "usage: callproof demo [--json] [--out DIR] [--scale F] [--concurrency N]\n\nRuns the built-in core suite against the reference agents naive and careful,\nall in-process on loopback, and prints their tables beside seed 001's.\n", stdout, stderr)
	asJSON := c.Bool("json", false, "print per agent: calls, axis counts, integrity, buckets and gate, as JSON")
	out := c.String("out", filepath.Join("out", "demo"), "where to save each agent's results directory")
	scale := c.Float64("scale", 0.1, "time scale (0.1 = ten times faster than real time; at least 0.01)")
	conc := c.Int("concurrency", 8, "calls at once")
	if _, code, ok := c.positional(args, 0); !ok {
		return code
	}
	if err := checkScale(*scale); err != nil {
		fmt.Fprintf(stderr, "callproof demo: %v\n", err)
		return exitUsage
	}
	if *conc < 1 {
		fmt.Fprintf(stderr, "callproof demo: --concurrency %d: want at least 1\n", *conc)
		return exitUsage
	}
	ctx, stop := interruptible("demo", stderr)
	defer stop()
	results, code := runDemo(ctx, *out, *scale, *conc, stderr)
	if code != exitOK {
		return code
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"suite": "core", "agents": results, "seed_001": reports.SeedTable()})
	} else {
		writeDemo(stdout, results)
	}
	// The demo succeeds when both runs are whole: naive failing its gate
	// is the point, not an error.
	for _, r := range results {
		if r.Gate.Incomplete != nil {
			return exitIncomplete
		}
	}
	for _, r := range results {
		if r.Gate.Broken {
			return exitBroken
		}
	}
	return exitOK
}

// runDemo runs core against each reference agent, saves the results, then
// re-reads and re-scores the saved histories: the tables printed are
// exactly what `callproof score` and `callproof report` give on them.
func runDemo(ctx context.Context, out string, scale float64, conc int, stderr io.Writer) ([]demoAgent, int) {
	name, cases, err := harness.LoadSuite("core")
	if err != nil {
		fmt.Fprintf(stderr, "callproof demo: %v\n", err)
		return nil, exitBroken
	}
	env, err := harness.NewEnv(harness.EnvOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "callproof demo: %v\n", err)
		return nil, exitBroken
	}
	defer env.Close()
	var results []demoAgent
	for _, agentName := range []string{"careful", "naive"} {
		cfg, err := agents.Named(agentName)
		if err != nil {
			fmt.Fprintf(stderr, "callproof demo: %v\n", err)
			return nil, exitBroken
		}
		running, err := agents.Start(ctx, cfg, "127.0.0.1:0")
		if err != nil {
			fmt.Fprintf(stderr, "callproof demo: starting %s: %v\n", agentName, err)
			return nil, exitBroken
		}
		dir := filepath.Join(out, agentName)
		res, err := harness.CreateResults(dir, harness.Meta{Agent: agentName, Suite: name, TimeScale: scale, Calls: len(cases), Transport: "native", Planned: harness.Plan(cases)})
		if err != nil {
			running.Close()
			fmt.Fprintf(stderr, "callproof demo: %v\n", err)
			return nil, exitUsage
		}
		r := env.Runner()
		r.Concurrency, r.TimeScale, r.Suite, r.Agent, r.Results = conc, scale, name, agentName, res
		bar := newProgress(stderr)
		r.Progress = bar.update
		r.Warm.Progress = speechProgress(stderr, "demo")
		_, err = r.Run(ctx, running.URL, cases)
		bar.done()
		running.Close()
		if cerr := res.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(stderr, "callproof demo: %v\n", err)
			return nil, exitBroken
		}
		saved, err := harness.LoadRun(dir)
		if err != nil {
			fmt.Fprintf(stderr, "callproof demo: %v\n", err)
			return nil, exitBroken
		}
		if _, err := writeHTMLReport(saved, nil, nil, dir, filepath.Join(dir, harness.ReportFile), name, agentName); err != nil {
			fmt.Fprintf(stderr, "callproof demo: writing %s: %v\n", harness.ReportFile, err)
			return nil, exitBroken
		}
		calls := harness.ScoreCalls(saved.Sorted())
		results = append(results, demoAgent{Agent: agentName, Dir: dir, Summary: reports.Summarize(harness.Scores(calls)), Gate: harness.GateRun(saved, harness.Policy{})})
		if ctx.Err() != nil {
			break // interrupted: no point starting the next agent
		}
	}
	return results, exitOK
}

func writeDemo(w io.Writer, results []demoAgent) {
	fmt.Fprintf(w, "callproof demo · suite core (30 calls: 10 corrections, 10 interruptions, 10 tool failures)\n\n")
	cols := make([]reports.Column, 0, len(results)+1)
	for _, r := range results {
		cols = append(cols, reports.Column{Name: r.Agent, Summary: r.Summary, Note: gateVerdict(r.Gate)})
	}
	cols = append(cols, reports.Column{Name: "seed 001 (reference)", Summary: reports.SeedTable(), Note: "-"})
	reports.WriteSideBySide(w, cols)
	for _, r := range results {
		fmt.Fprintf(w, "\n── %s ──\n", r.Agent)
		reports.WriteTable(w, reports.Title{Suite: "core", Agent: r.Agent}, r.Summary)
		fmt.Fprintln(w)
		writeGate(w, r.Gate)
	}
	fmt.Fprintf(w, "\nThe seed column is the article's published run, shown for reference; it is not a target.\n")
	for _, r := range results {
		if len(r.Summary.Failed) > 0 {
			fmt.Fprintf(w, "Look at a failed call: %s show %s %s\n", self(), r.Dir, r.Summary.Failed[0].Call)
			fmt.Fprintf(w, "or open %s in a browser\n", filepath.Join(r.Dir, harness.ReportFile))
			break
		}
	}
}
