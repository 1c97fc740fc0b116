package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
)

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	agentURL := fs.String("agent", "", "the agent's WebSocket URL (ws://host:port/path)")
	suite := fs.String("suite", "core", "core, extended, or a scenario file or directory")
	out := fs.String("out", "", "results directory (required)")
	only := fs.String("only", "", "comma-separated scenario ids to run")
	seed := fs.Int64("seed", 0, "override every scenario's seed")
	rerun := fs.String("rerun-failed", "", "results directory of an earlier run: run only its failed calls")
	conc := fs.Int("concurrency", 8, "calls at once")
	scale := fs.Float64("scale", 1.0, "time scale offered to the agent (0.1 = ten times faster)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: callproof run --agent URL --out DIR [--suite core|extended|PATH] [--only IDS] [--seed N] [--rerun-failed DIR]\n\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nexit: 0 the run completed (verdicts are in the table), 2 bad usage or input, 3 broken run (a harness error)\n")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return exitUsage
	}
	if *agentURL == "" || *out == "" || len(pos) != 0 {
		fs.Usage()
		return exitUsage
	}
	if *scale <= 0 || *scale > 10 {
		fmt.Fprintf(stderr, "callproof run: --scale %v: want a value in (0, 10]\n", *scale)
		return exitUsage
	}
	name, cases, err := harness.LoadSuite(*suite)
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitUsage
	}
	var ids []string
	if *only != "" {
		ids = strings.Split(*only, ",")
	}
	if *rerun != "" {
		scores, err := loadScores(*rerun)
		if err != nil {
			fmt.Fprintf(stderr, "callproof run: --rerun-failed: %v\n", err)
			return exitUsage
		}
		ids = append(ids, harness.Failed(scores)...)
		if len(ids) == 0 {
			fmt.Fprintf(stdout, "no failed calls in %s: nothing to re-run\n", *rerun)
			return exitOK
		}
	}
	if cases, err = harness.Select(cases, ids); err != nil {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	env, err := harness.NewEnv(harness.EnvOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitBroken
	}
	defer env.Close()
	res, err := harness.CreateResults(*out, harness.Meta{Agent: *agentURL, Suite: name, Seed: *seed, TimeScale: *scale, Calls: len(cases), Transport: "native"})
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: %v\n", err)
		return exitUsage
	}
	r := env.Runner()
	r.Concurrency, r.TimeScale, r.Seed, r.Suite, r.Agent, r.Results = *conc, *scale, *seed, name, *agentURL, res
	bar := newProgress(stderr)
	r.Progress = bar.update
	results, err := r.Run(ctx, *agentURL, cases)
	bar.done()
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof run: writing results: %v\n", err)
		return exitBroken
	}
	scores := make([]scorer.CallScore, len(results))
	for i, c := range results {
		scores[i] = c.Score
	}
	sum := reports.Summarize(scores)
	reports.WriteTable(stdout, reports.Title{Suite: name, Agent: *agentURL}, sum)
	fmt.Fprintf(stdout, "\nresults: %s (show a call: %s show %s CALL)\n", *out, self(), *out)
	if sum.Outcomes["harness_error"] > 0 {
		fmt.Fprintf(stderr, "callproof run: %d calls ended in a harness error; the run is broken (re-run them with --rerun-failed %s)\n", sum.Outcomes["harness_error"], *out)
		return exitBroken
	}
	return exitOK
}
