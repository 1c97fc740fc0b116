package reports

import (
	"encoding/json"
	"fmt"
	"github.com/callproof/callproof/internal/safetext"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Title labels a table.
type Title struct {
	Suite string
	Agent string
}

// WriteTable renders the suite table: each axis as k / N, end-to-end
// integrity, the root-cause buckets by count, then one line per failed call
// naming its first failing axis and its bucket.
func WriteTable(w io.Writer, t Title, s Summary) error {
	var b strings.Builder
	head := "callproof"
	if t.Suite != "" {
		head += " · suite " + t.Suite
	}
	if t.Agent != "" {
		head += " · agent " + t.Agent
	}
	fmt.Fprintf(&b, "%s · %d calls\n", head, s.Calls)
	if extra := outcomeLine(s); extra != "" {
		fmt.Fprintf(&b, "outcomes: %s\n", extra)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "axis\tpass\tunknown\n")
	for _, a := range s.Axes {
		fmt.Fprintf(tw, "%s\t%d / %d\t%d\n", a.Axis, a.Pass, s.Counted, a.Unknown)
	}
	fmt.Fprintf(tw, "end-to-end integrity\t%d / %d\t\n", s.Integrity, s.Counted)
	tw.Flush()
	if l := s.Latency; l.ResponseP50 > 0 || l.YieldP50 > 0 {
		// Diagnostics beside the axes, in script time: never verdicts.
		b.WriteString("\nlatency (script time)")
		if l.ResponseP50 > 0 {
			fmt.Fprintf(&b, "  response p50 %s p95 %s", round(l.ResponseP50), round(l.ResponseP95))
		}
		if l.YieldP50 > 0 {
			noun := "barge-ins"
			if l.Yields == 1 {
				noun = "barge-in"
			}
			fmt.Fprintf(&b, "  yield p50 %s p95 %s (%d %s)", round(l.YieldP50), round(l.YieldP95), l.Yields, noun)
		}
		b.WriteString("\n")
	}
	if a := s.Audio; a != nil {
		// Measured on the audio itself, real time: never verdicts.
		fmt.Fprintf(&b, "audio turn-taking (%d calls)  response p50 %s p95 %s  yield p50 %s p95 %s (%d of %d barge-ins)  false yields %d  worst frame lateness %s\n",
			a.Calls, round(a.ResponseP50), round(a.ResponseP95), round(a.YieldP50), round(a.YieldP95), a.Yields, a.BargeIns, a.FalseYields, round(a.WorstLateness))
	}
	if h := s.Harness; h != nil {
		// The harness's own timers against the script: how busy this
		// machine was, never a verdict on the agent.
		fmt.Fprintf(&b, "harness lateness (script time, each call's worst)  p50 %s p99 %s max %s (%s)",
			round(h.P50), round(h.P99), round(h.Max), h.WorstCall)
		if h.PressureCalls > 0 {
			fmt.Fprintf(&b, "  machine CPU pressure p50 %.0f%% max %.0f%%", 100*h.PressureP50, 100*h.PressureMax)
		}
		b.WriteString("\n")
		if h.Overloaded > 0 {
			fmt.Fprintf(&b, "overloaded: %d calls not scored (the harness ran over its bound): re-run them on a less busy machine or with less --concurrency\n", h.Overloaded)
		}
		if h.Busy() {
			fmt.Fprintf(&b, "busy machine: for half the calls some task waited for a CPU %.0f%% of the time or more; an agent on this machine was starved too, and verdicts that hang on its timing may read unknown\n", 100*h.PressureP50)
		}
	}
	if len(s.Buckets) > 0 {
		fmt.Fprintf(&b, "\nroot causes (primary, +secondary)\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, c := range s.Buckets {
			sec := ""
			if c.Secondary > 0 {
				sec = fmt.Sprintf("+%d", c.Secondary)
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", c.Bucket, c.Primary, sec)
		}
		tw.Flush()
	}
	if len(s.Failed) > 0 {
		fmt.Fprintf(&b, "\nfailed calls\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, f := range s.Failed {
			switch f.Outcome {
			case trace.OutcomeScored:
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Call, f.FirstAxis, f.Bucket)
			case trace.OutcomeAgentError:
				// Counted like a scored call: name its axis and bucket too,
				// so every bucket count above leads to a call here.
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s: %s\n", f.Call, f.FirstAxis, f.Bucket, f.Outcome, safetext.Escape(f.Reason))
			default:
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Call, f.Outcome, safetext.Escape(f.Reason))
			}
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, trimTrailing(b.String()))
	return err
}

// round keeps latencies readable: whole milliseconds, or microseconds
// below a millisecond.
func round(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

func outcomeLine(s Summary) string {
	var parts []string
	for _, o := range []trace.Outcome{trace.OutcomeScored, trace.OutcomeAgentError, trace.OutcomeHarnessError, trace.OutcomeExcluded} {
		if n := s.Outcomes[o]; n > 0 && !(o == trace.OutcomeScored && n == s.Calls) {
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	return strings.Join(parts, ", ")
}

// WriteJSON writes the summary as indented JSON.
func WriteJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// Column is one column of a side-by-side table.
type Column struct {
	Name    string
	Summary Summary
	// Note is printed under the column's figures (e.g. a gate verdict).
	Note string
}

// WriteSideBySide renders several summaries as columns: axes, integrity and
// buckets, each cell "k / N" (buckets: the primary count).
func WriteSideBySide(w io.Writer, cols []Column) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "axis")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s", c.Name)
	}
	fmt.Fprintln(tw)
	for _, ax := range scorer.Axes() {
		fmt.Fprintf(tw, "%s", ax)
		for _, c := range cols {
			fmt.Fprintf(tw, "\t%s", ratio(c.Summary.Axis(ax).Pass, c.Summary.Counted))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "end-to-end integrity")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s", ratio(c.Summary.Integrity, c.Summary.Counted))
	}
	fmt.Fprintln(tw)
	// Separator and heading rows carry a cell per column so that the whole
	// table stays one tabwriter block: bucket counts and gate notes line up
	// under the agent columns. Trailing blanks are trimmed below.
	blank := strings.Repeat("\t", len(cols)) + "\n"
	io.WriteString(tw, blank)
	fmt.Fprintf(tw, "root cause (primary)%s", blank)
	for _, bk := range scorer.Buckets() {
		seen := false
		for _, c := range cols {
			if c.Summary.PrimaryCount(bk) > 0 {
				seen = true
			}
		}
		if !seen {
			continue
		}
		fmt.Fprintf(tw, "  %s", bk)
		for _, c := range cols {
			fmt.Fprintf(tw, "\t%d", c.Summary.PrimaryCount(bk))
		}
		fmt.Fprintln(tw)
	}
	notes := false
	for _, c := range cols {
		if c.Note != "" {
			notes = true
		}
	}
	if notes {
		io.WriteString(tw, blank)
		fmt.Fprintf(tw, "release gate")
		for _, c := range cols {
			fmt.Fprintf(tw, "\t%s", c.Note)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	_, err := io.WriteString(w, trimTrailing(b.String()))
	return err
}

// trimTrailing removes the blanks tabwriter pads empty last cells with, so
// no line of a table ends in spaces.
func trimTrailing(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimRight(l, " \t\n")
		if nl {
			l += "\n"
		}
		lines[i] = l
	}
	return strings.Join(lines, "")
}

func ratio(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d / %d", k, n)
}
