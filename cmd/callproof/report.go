package main

import (
	"fmt"
	"io"
	"os"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
)

func cmdReport(args []string, stdout, stderr io.Writer) int {
	c := newCLI("report", "usage: callproof report [--json] SCORES.jsonl|DIR|-\n\nPrints the suite table from scores (a results directory: its scores.jsonl).\n", stdout, stderr)
	asJSON := c.Bool("json", false, "print the figures as JSON")
	suite := c.String("suite", "", "suite name for the title")
	agent := c.String("agent", "", "agent name for the title")
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	scores, err := loadScores(pos[0], "report", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "callproof report: %v\n", err)
		return exitUsage
	}
	if st, err := os.Stat(pos[0]); err == nil && st.IsDir() {
		if run, err := harness.LoadRun(pos[0]); err == nil {
			warnIncomplete(stderr, "report", run)
		}
	}
	sum := reports.Summarize(scores)
	if *asJSON {
		err = reports.WriteJSON(stdout, sum)
	} else {
		err = reports.WriteTable(stdout, reports.Title{Suite: *suite, Agent: *agent}, sum)
	}
	if err != nil {
		fmt.Fprintf(stderr, "callproof report: %v\n", err)
		return exitBroken
	}
	return exitOK
}
