package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
)

func cmdShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: callproof show RUN.jsonl|DIR CALL\n\nPrints one call's timeline, event by event, and why each axis passed or failed.\n")
	}
	pos, ok := positional(fs, args, 2)
	if !ok {
		return exitUsage
	}
	hs, err := loadRun(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "callproof show: %v\n", err)
		return exitUsage
	}
	h, err := findCall(hs, pos[1])
	if err != nil {
		fmt.Fprintf(stderr, "callproof show: %v\n", err)
		return exitUsage
	}
	if err := reports.WriteTimeline(stdout, h, scorer.Score(h)); err != nil {
		fmt.Fprintf(stderr, "callproof show: %v\n", err)
		return exitUsage
	}
	return exitOK
}
