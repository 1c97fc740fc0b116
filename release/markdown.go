package release

import (
	"bufio"
	"fmt"
	"github.com/callproof/callproof/internal/safetext"
	"io"
	"strings"

	"github.com/callproof/callproof/scorer"
)

// WriteMarkdown writes a run's summary for a CI job page or pull request:
// the gate verdict, the six axes and integrity with their intervals, pass^k,
// flaky scenarios and, when cmp is not nil, the comparison with the baseline.
func WriteMarkdown(w io.Writer, title string, gate string, trials TrialReport, cmp *Comparison) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "# %s\n\n", mdText(title))
	fmt.Fprintf(b, "**Release gate: %s**\n\n", mdText(gate))

	fmt.Fprintln(b, "| measure | passed | rate | 95 % interval |")
	fmt.Fprintln(b, "|---|---:|---:|---|")
	for _, a := range trials.Axes {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", a.Axis, passOf(a.Tally), pct(a.Rate()), interval(a.Tally))
	}
	t := trials.Integrity
	fmt.Fprintf(b, "| **end-to-end integrity** | **%s** | **%s** | %s |\n\n", passOf(t), pct(t.Rate()), interval(t))

	if short := len(trials.Scenarios) - trials.PassKScenarios; trials.PassKScenarios == 0 {
		fmt.Fprintf(b, "pass^%d: undefined, no scenario has %d counted trials.\n", trials.K, trials.K)
	} else if short > 0 {
		fmt.Fprintf(b, "pass^%d: **%.3f**, the mean over %s (%d with fewer than %d trials left out).\n",
			trials.K, trials.PassK, plural(trials.PassKScenarios, "scenario", "scenarios"), short, trials.K)
	} else {
		fmt.Fprintf(b, "pass^%d: **%.3f**, the mean over %s.\n", trials.K, trials.PassK, plural(trials.PassKScenarios, "scenario", "scenarios"))
	}
	if len(trials.HarnessErrors) > 0 {
		fmt.Fprintf(b, "\nHarness errors (not verdicts, re-run them): %s.\n", codeList(trials.HarnessErrors))
	}
	if len(trials.Excluded) > 0 {
		fmt.Fprintf(b, "\nExcluded (trigger missed, not verdicts): %s.\n", codeList(trials.Excluded))
	}

	fmt.Fprintln(b, "\n## Flaky scenarios")
	fmt.Fprintln(b)
	if len(trials.Flaky) == 0 {
		fmt.Fprintln(b, "None: every scenario's trials agree.")
	} else {
		fmt.Fprintln(b, "| scenario | integrity | trials disagree on |")
		fmt.Fprintln(b, "|---|---:|---|")
		for _, id := range trials.Flaky {
			st, _ := trials.Scenario(id)
			fmt.Fprintf(b, "| `%s` | %s | %s |\n", mdText(id), passOf(st.Integrity), mdText(strings.Join(st.FlakyOn, ", ")))
		}
	}
	if cmp != nil {
		writeComparison(b, cmp)
	}
	return b.Flush()
}

func writeComparison(b *bufio.Writer, c *Comparison) {
	fmt.Fprintln(b, "\n## Against the baseline")
	fmt.Fprintln(b)
	verdict := "does not block the release"
	if c.Blocks() {
		verdict = "**blocks the release**"
	}
	rates := ""
	if n := len(c.RateRegressions); n > 0 {
		rates = ", " + plural(n, "rate regression", "rate regressions")
	}
	fmt.Fprintf(b, "%s compared (baseline k=%d, now k=%d): %s%s, %s, %d unchanged; %s.\n",
		plural(c.Compared, "scenario", "scenarios"), c.BaseK, c.K, plural(len(c.Regressions), "regression", "regressions"), rates,
		plural(len(c.Fixes), "fix", "fixes"), c.Unchanged, verdict)
	if c.PackChanged {
		fmt.Fprintf(b, "\nThe scenario pack changed (%s → %s): only scenarios whose content is unchanged were compared.\n", shortHash(c.BasePack), shortHash(c.Pack))
	}
	if len(c.Regressions) > 0 || len(c.Fixes) > 0 {
		fmt.Fprintln(b)
		fmt.Fprintln(b, "| regressions | fixes |")
		fmt.Fprintln(b, "|---|---|")
		for i := 0; i < max(len(c.Regressions), len(c.Fixes)); i++ {
			var reg, fix string
			if i < len(c.Regressions) {
				r := c.Regressions[i]
				var calls []string
				for _, f := range r.Failing {
					calls = append(calls, f.Call)
				}
				reg = fmt.Sprintf("`%s` %d/%d → %d/%d; %s; %s", mdText(r.Scenario), r.BaseIntegrity, r.BaseTrials, r.Integrity, r.Trials, axesText(r.Axes), codeList(calls))
			}
			if i < len(c.Fixes) {
				f := c.Fixes[i]
				fix = fmt.Sprintf("`%s` %d/%d → %d/%d; was %s", mdText(f.Scenario), f.BaseIntegrity, f.BaseTrials, f.Integrity, f.Trials, axesText(f.Axes))
			}
			fmt.Fprintf(b, "| %s | %s |\n", reg, fix)
		}
	}
	if len(c.RateRegressions) > 0 {
		fmt.Fprintln(b, "\nRates that fell beyond their intervals (now's upper bound below the baseline's lower bound):")
		fmt.Fprintln(b)
		fmt.Fprintln(b, "| measure | baseline | now |")
		fmt.Fprintln(b, "|---|---|---|")
		for _, r := range c.RateRegressions {
			fmt.Fprintf(b, "| %s | %s %s | %s %s |\n", mdText(r.Measure), passOf(r.Base), interval(r.Base), passOf(r.Current), interval(r.Current))
		}
	}
	notCompared := []struct {
		what string
		ids  []string
	}{
		{"content changed", c.ChangedScenarios},
		{"new", c.Added},
		{"removed", c.Removed},
		{"no content hash", c.Unhashed},
		{"no counted trial", c.Unscored},
	}
	first := true
	for _, n := range notCompared {
		if len(n.ids) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(b, "\nNot compared:")
			fmt.Fprintln(b)
			first = false
		}
		fmt.Fprintf(b, "- %s: %s\n", n.what, codeList(n.ids))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func passOf(t Tally) string { return fmt.Sprintf("%d / %d", t.Pass, t.N) }

func pct(r float64) string { return fmt.Sprintf("%.1f %%", 100*r) }

func interval(t Tally) string {
	if t.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f–%.1f %%", 100*t.Lo, 100*t.Hi)
}

func axesText(as []scorer.Axis) string {
	if len(as) == 0 {
		return "no axis failed"
	}
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

func codeList(ids []string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = "`" + mdText(id) + "`"
	}
	return strings.Join(s, ", ")
}

// mdText keeps free text from breaking a table row or a code span, and
// shows any control or invisible character as an escape (safetext).
func mdText(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'").Replace(safetext.Escape(s))
}
