package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/callproof/callproof/calibrate"
	"github.com/callproof/callproof/scorer"
)

// exitFalsePass is calibrate's answer when the scorer passed an axis a
// human failed, or agreed less than --min-agreement: the verdicts cannot
// be trusted to gate a release.
const exitFalsePass = exitGate

func cmdCalibrate(args []string, stdout, stderr io.Writer) int {
	c := newCLI("calibrate", "usage: callproof calibrate [--json] [--min-agreement R] LABELS.yaml RUN_DIR|RUN.jsonl\n\n"+
		"Re-scores every call of the run and compares the verdicts with hand labels\n"+
		"(pass, fail or either per axis, and the expected primary bucket): per-axis\n"+
		"agreement, Cohen's kappa, false passes and false failures. Exits 1 on any\n"+
		"false pass, or when agreement is below --min-agreement.\n", stdout, stderr)
	asJSON := c.Bool("json", false, "print the report as JSON")
	minAgree := c.Float64("min-agreement", 0, "least share of agreeing axis cells and buckets (0..1); 1 demands every cell")
	pos, code, ok := c.positional(args, 2)
	if !ok {
		return code
	}
	if *minAgree < 0 || *minAgree > 1 || *minAgree != *minAgree {
		fmt.Fprintf(stderr, "callproof calibrate: --min-agreement %v is not in [0,1]\n", *minAgree)
		return exitUsage
	}
	labels, err := calibrate.Load(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "callproof calibrate: %v\n", err)
		return exitUsage
	}
	run, err := loadRun(pos[1], "calibrate", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "callproof calibrate: %v\n", err)
		return exitUsage
	}
	rep := calibrate.Compare(labels, scorer.ScoreAll(run.Sorted()))
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		_, err = io.WriteString(stdout, rep.Text())
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof calibrate: %v\n", err)
		return exitBroken
	}
	switch {
	case rep.FalsePasses > 0:
		fmt.Fprintf(stderr, "callproof calibrate: %d false pass(es): the scorer passed what the labels fail\n", rep.FalsePasses)
		return exitFalsePass
	case len(rep.Missing) > 0 && *minAgree > 0:
		fmt.Fprintf(stderr, "callproof calibrate: %d labelled call(s) missing from the run\n", len(rep.Missing))
		return exitFalsePass
	case *minAgree > 0 && (rep.Agreement() < *minAgree || ratioOf(rep.BucketAgree, rep.BucketCalls) < *minAgree):
		fmt.Fprintf(stderr, "callproof calibrate: agreement %.3f (buckets %d / %d) is below %.3f\n", rep.Agreement(), rep.BucketAgree, rep.BucketCalls, *minAgree)
		return exitFalsePass
	}
	return exitOK
}

func ratioOf(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}
