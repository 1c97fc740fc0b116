package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// runPath accepts a run file or a results directory holding one.
func runPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, harness.RunFile)
	}
	return p
}

// loadRun reads histories from a run file, a results directory, or - (stdin).
func loadRun(p string) ([]*trace.History, error) {
	if p == "-" {
		return trace.ReadJSONL(os.Stdin)
	}
	return harness.ReadRun(runPath(p))
}

// loadScores reads scores from a scores file, a results directory, or - (stdin).
func loadScores(p string) ([]scorer.CallScore, error) {
	if p == "-" {
		return harness.DecodeScores(os.Stdin, "stdin")
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		p = filepath.Join(p, harness.ScoresFile)
	}
	return harness.ReadScores(p)
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

// positional parses args and requires exactly n positional arguments,
// printing the usage when the count is wrong.
func positional(fs *flag.FlagSet, args []string, n int) ([]string, bool) {
	pos, err := parse(fs, args)
	if err != nil {
		return nil, false
	}
	if len(pos) != n {
		fs.Usage()
		return nil, false
	}
	return pos, true
}

// parse parses flags wherever they stand among the arguments ("gate DIR
// --policy F" as well as "gate --policy F DIR") and returns the
// positional arguments in order. A "--" ends flag parsing.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
