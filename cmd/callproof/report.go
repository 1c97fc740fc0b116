package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/reports/htmlreport"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

func cmdReport(args []string, stdout, stderr io.Writer) int {
	c := newCLI("report", `usage: callproof report [--json] [--html FILE] SCORES.jsonl|DIR|-

Prints the suite table from scores (a results directory: its scores.jsonl).
With --html FILE (DIR only), re-scores DIR's histories and also writes them
to FILE as one self-contained HTML page: the table, and per call its
timeline in lanes, the findings linked to the events they cite, and the
final-state diff; the table printed is of those same scores.
`, stdout, stderr)
	asJSON := c.Bool("json", false, "print the figures as JSON")
	suite := c.String("suite", "", "suite name for the title")
	agent := c.String("agent", "", "agent name for the title")
	htmlFile := c.String("html", "", "write the run as one self-contained HTML `FILE` (needs a results directory)")
	pos, code, ok := c.positional(args, 1)
	if !ok {
		return code
	}
	var scores []scorer.CallScore
	var err error
	if *htmlFile != "" {
		if !isDir(pos[0]) {
			fmt.Fprintf(stderr, "callproof report: --html needs a results directory (its %s holds the histories): %s\n", harness.RunFile, pos[0])
			return exitUsage
		}
		run, err := loadRun(pos[0], "report", stderr)
		if err != nil {
			fmt.Fprintf(stderr, "callproof report: %v\n", err)
			return exitUsage
		}
		warnIncomplete(stderr, "report", run)
		if scores, err = writeHTMLReport(run, nil, nil, pos[0], *htmlFile, *suite, *agent); err != nil {
			fmt.Fprintf(stderr, "callproof report: %v\n", err)
			return exitBroken
		}
	} else {
		scores, err = loadScores(pos[0], "report", stderr)
		if err != nil {
			fmt.Fprintf(stderr, "callproof report: %v\n", err)
			return exitUsage
		}
		if st, err := os.Stat(pos[0]); err == nil && st.IsDir() {
			if run, err := harness.LoadRun(pos[0]); err == nil {
				warnIncomplete(stderr, "report", run)
			}
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

// writeHTMLReport writes a run's histories as one HTML page, with scores
// (of run.Sorted(), in that order) or, when nil, its own scoring of them;
// it returns the scores, in scenario order. The page goes to a temp file
// that replaces file once whole, so a failure leaves no half a page.
//
// load, when set, reads each history whole as its section is written (a
// run indexed by harness.IndexRun holds only each call's ends).
func writeHTMLReport(run *harness.SavedRun, scores []scorer.CallScore, load func(*trace.History) (*trace.History, error), dir, file, suite, agent string) ([]scorer.CallScore, error) {
	hs := run.Sorted()
	if scores == nil {
		scores = scorer.ScoreAll(hs)
	}
	if len(scores) != len(hs) {
		return nil, fmt.Errorf("%d scores for %d calls", len(scores), len(hs))
	}
	if m := run.Meta; m != nil {
		suite, agent = firstOf(suite, m.Suite), firstOf(agent, m.Agent)
	}
	if len(hs) > 0 {
		if st := hs[0].Start(); st != nil {
			suite, agent = firstOf(suite, st.Suite), firstOf(agent, st.Agent)
		}
	}
	var parts []string
	if suite != "" {
		parts = append(parts, "suite "+suite)
	}
	if agent != "" {
		parts = append(parts, "agent "+agent)
	}
	if len(parts) == 0 {
		parts = append(parts, filepath.Base(filepath.Clean(dir)))
	}
	// Straight to the file, one call's section at a time: a report of
	// thousands of calls is hundreds of megabytes, not worth holding.
	err := writeFileVia(file, func(w io.Writer) error {
		return htmlreport.Stream(w, strings.Join(parts, " · "), scores, func(each func(htmlreport.Call) error) error {
			for i, h := range hs {
				if load != nil {
					var err error
					if h, err = load(h); err != nil {
						return err
					}
				}
				if err := each(htmlreport.Call{History: h, Score: scores[i]}); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sorted := slices.Clone(scores)
	harness.SortScores(sorted)
	return sorted, nil
}

// firstOf returns the first non-empty string.
func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writeFileVia writes path through write, buffered, into a temp file
// beside it that then replaces path.
func writeFileVia(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
