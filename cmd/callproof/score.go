package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/callproof/callproof/scorer"
)

func cmdScore(args []string, stdout, stderr io.Writer) int {
	c := newCLI("score", "usage: callproof score RUN.jsonl|DIR|-\n\nScores every call's history and writes one JSON score per line, in scenario order.\n", stdout, stderr)
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	run, err := loadRun(pos[0], "score", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "callproof score: %v\n", err)
		return exitUsage
	}
	warnIncomplete(stderr, "score", run)
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	for _, s := range scorer.ScoreAll(run.Sorted()) {
		if err := enc.Encode(s); err != nil {
			fmt.Fprintf(stderr, "callproof score: %v\n", err)
			return exitBroken
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "callproof score: %v\n", err)
		return exitBroken
	}
	return exitOK
}
