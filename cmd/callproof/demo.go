package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
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
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print per agent: calls, axis counts, integrity, buckets and gate, as JSON")
	out := fs.String("out", filepath.Join("out", "demo"), "where to save each agent's results directory")
	scale := fs.Float64("scale", 0.1, "time scale (0.1 = ten times faster than real time)")
	conc := fs.Int("concurrency", 8, "calls at once")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: callproof demo [--json] [--out DIR] [--scale F]\n\nRuns the built-in core suite against the reference agents naive and careful,\nall in-process on loopback, and prints their tables beside seed 001's.\n")
		fs.PrintDefaults()
	}
	if pos, err := parse(fs, args); err != nil || len(pos) > 0 {
		if err == nil {
			fs.Usage()
		}
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
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
		res, err := harness.CreateResults(dir, harness.Meta{Agent: agentName, Suite: name, TimeScale: scale, Calls: len(cases), Transport: "native"})
		if err != nil {
			running.Close()
			fmt.Fprintf(stderr, "callproof demo: %v\n", err)
			return nil, exitUsage
		}
		r := env.Runner()
		r.Concurrency, r.TimeScale, r.Suite, r.Agent, r.Results = conc, scale, name, agentName, res
		bar := newProgress(stderr)
		r.Progress = bar.update
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
		hs, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
		if err != nil {
			fmt.Fprintf(stderr, "callproof demo: %v\n", err)
			return nil, exitBroken
		}
		calls := harness.ScoreCalls(hs)
		results = append(results, demoAgent{Agent: agentName, Dir: dir, Summary: reports.Summarize(harness.Scores(calls)), Gate: harness.Gate(calls, harness.Policy{})})
	}
	return results, exitOK
}

func writeDemo(w io.Writer, results []demoAgent) {
	fmt.Fprintf(w, "callproof demo · suite core (30 calls: 10 corrections, 10 interruptions, 10 tool failures)\n\n")
	cols := make([]reports.Column, 0, len(results)+1)
	for _, r := range results {
		note := "holds"
		if r.Gate.Broken {
			note = "broken run"
		} else if !r.Gate.Holds {
			note = "FAILS"
		}
		cols = append(cols, reports.Column{Name: r.Agent, Summary: r.Summary, Note: note})
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
			break
		}
	}
}
