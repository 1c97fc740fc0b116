package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// loadRun reads a run file, a results directory, or - (stdin). What it
// had to leave out (a torn last line) and what the run lacks (planned
// calls, its completion marker) are printed as warnings: the calls that
// are there are still read.
func loadRun(p, name string, stderr io.Writer) (*harness.SavedRun, error) {
	var run *harness.SavedRun
	var err error
	if p == "-" {
		run, err = harness.DecodeRun(os.Stdin, "stdin")
	} else {
		run, err = harness.LoadRun(p)
	}
	if err != nil {
		return nil, err
	}
	warn(stderr, name, run.Warnings)
	return run, nil
}

// warnIncomplete prints why a run does not cover its plan, for the
// commands that read it without judging it.
func warnIncomplete(stderr io.Writer, name string, run *harness.SavedRun) {
	if run.Meta == nil {
		return
	}
	warn(stderr, name, harness.CheckCompleteness(run).Problems())
}

// loadScores reads scores from a scores file, a results directory, or -
// (stdin), in scenario order.
func loadScores(p, name string, stderr io.Writer) ([]scorer.CallScore, error) {
	var scores []scorer.CallScore
	var warnings []string
	var err error
	if p == "-" {
		scores, warnings, err = harness.DecodeScoresWarn(os.Stdin, "stdin")
	} else {
		if st, serr := os.Stat(p); serr == nil && st.IsDir() {
			p = filepath.Join(p, harness.ScoresFile)
		}
		scores, warnings, err = harness.ReadScoresWarn(p)
	}
	if err != nil {
		return nil, err
	}
	warn(stderr, name, warnings)
	harness.SortScores(scores)
	return scores, nil
}

func findCall(hs []*trace.History, id string) (*trace.History, error) {
	for _, h := range hs {
		if h.Call == id {
			return h, nil
		}
	}
	ids := make([]string, 0, len(hs))
	for _, h := range hs {
		ids = append(ids, h.Call)
	}
	return nil, fmt.Errorf("no call %q in the run (calls: %v)", id, ids)
}
