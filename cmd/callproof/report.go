package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/callproof/callproof/reports"
)

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	suite := fs.String("suite", "", "suite name for the title")
	agent := fs.String("agent", "", "agent name for the title")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: callproof report [--json] SCORES.jsonl|DIR|-\n\nPrints the suite table from scores.\n")
		fs.PrintDefaults()
	}
	pos, ok := positional(fs, args, 1)
	if !ok {
		return exitUsage
	}
	scores, err := loadScores(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "callproof report: %v\n", err)
		return exitUsage
	}
	sum := reports.Summarize(scores)
	if *asJSON {
		err = reports.WriteJSON(stdout, sum)
	} else {
		err = reports.WriteTable(stdout, reports.Title{Suite: *suite, Agent: *agent}, sum)
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof report: %v\n", err)
		return exitUsage
	}
	return exitOK
}
