package reports

import (
	"fmt"
	"strings"
	"time"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Explain says why a call fell short, in a few lines for a test's failure
// message: its outcome, each axis that did not pass with its findings, the
// root-cause buckets, and every event they cite, as the history holds it
// (h may be nil: then no events are listed). callprooftest and
// `callproof explain` (the pytest plugin's failures) print it.
func Explain(h *trace.History, s scorer.CallScore) string {
	var b strings.Builder
	fmt.Fprintf(&b, "call %s (scenario %s): %s", s.Call, s.Scenario, s.Outcome)
	if s.Reason != "" {
		fmt.Fprintf(&b, " (%s)", s.Reason)
	}
	b.WriteString("\n")
	cited := map[int]bool{}
	finding := func(f scorer.Finding) {
		fmt.Fprintf(&b, "      %s\n", f.Text) // the text names its events: [#38 tool.received, …]
		for _, seq := range f.Events {
			cited[seq] = true
		}
	}
	for _, a := range s.Axes {
		if a.Verdict == scorer.Pass {
			continue
		}
		fmt.Fprintf(&b, "  %s: %s\n", a.Axis, a.Verdict)
		for _, f := range a.Findings {
			finding(f)
		}
	}
	for _, hit := range s.Buckets {
		tag := ""
		if hit.Bucket == s.Primary {
			tag = " (primary)"
		}
		fmt.Fprintf(&b, "  bucket %s%s\n", hit.Bucket, tag)
		for _, f := range hit.Findings {
			finding(f)
		}
	}
	if h != nil && len(cited) > 0 {
		b.WriteString("  cited events:\n")
		for _, e := range h.Events {
			if cited[e.Seq] {
				fmt.Fprintf(&b, "    #%d %9.1fms %-8s %s %s\n", e.Seq, float64(e.At)/float64(time.Millisecond), e.Source, e.Kind, Describe(e))
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
