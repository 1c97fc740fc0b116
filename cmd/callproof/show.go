package main

import (
	"fmt"
	"io"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
)

func cmdShow(args []string, stdout, stderr io.Writer) int {
	c := newCLI("show", "usage: callproof show RUN.jsonl|DIR|- CALL\n\nPrints one call's timeline, event by event, and why each axis passed or failed.\n", stdout, stderr)
	pos, code, ok := c.positional(args, 2)
	if !ok {
		return code
	}
	run, err := loadRun(pos[0], "show", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "callproof show: %v\n", err)
		return exitUsage
	}
	h, err := findCall(run.Sorted(), pos[1])
	if err != nil {
		fmt.Fprintf(stderr, "callproof show: %v\n", err)
		return exitUsage
	}
	if err := reports.WriteTimeline(stdout, h, scorer.Score(h)); err != nil {
		fmt.Fprintf(stderr, "callproof show: %v\n", err)
		return exitBroken
	}
	return exitOK
}
