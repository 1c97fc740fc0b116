package reports

import (
	"fmt"
	"github.com/callproof/callproof/internal/safetext"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// WriteTimeline renders one call event by event (seq, time, source, kind,
// what happened), then each axis's verdict with the findings and the seq
// numbers behind it, then the root-cause buckets.
func WriteTimeline(w io.Writer, h *trace.History, s scorer.CallScore) error {
	var b strings.Builder
	fmt.Fprintf(&b, "call %s · scenario %s", h.Call, s.Scenario)
	if s.Category != "" {
		fmt.Fprintf(&b, " (%s)", s.Category)
	}
	fmt.Fprintf(&b, " · outcome %s", s.Outcome)
	if s.Reason != "" {
		fmt.Fprintf(&b, " (%s)", s.Reason)
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, e := range h.Events {
		fmt.Fprintf(tw, "%4d\t%s\t%s\t%s\t%s\n", e.Seq, ms(e.At), e.Source, e.Kind, Describe(e))
	}
	tw.Flush()
	b.WriteString("\naxes\n")
	for _, a := range s.Axes {
		fmt.Fprintf(&b, "  %-30s %s\n", a.Axis, a.Verdict)
		for _, f := range a.Findings {
			fmt.Fprintf(&b, "      %s%s\n", f.Text, seqs(f.Text, f.Events))
		}
	}
	integ := "no"
	if s.Integrity {
		integ = "yes"
	}
	fmt.Fprintf(&b, "  %-30s %s\n", "end-to-end integrity", integ)
	if d := s.Diag; d.ResponseLatency > 0 || d.YieldLatency > 0 {
		// Diagnostics beside the axes, never verdicts.
		b.WriteString("\ndiagnostics\n")
		if d.ResponseLatency > 0 {
			fmt.Fprintf(&b, "  response latency  %s (caller's first final words to the agent's next speech)\n", strings.TrimSpace(ms(d.ResponseLatency)))
		}
		if d.YieldLatency > 0 {
			fmt.Fprintf(&b, "  yield latency     %s (caller's barge-in onset to the agent stopping)\n", strings.TrimSpace(ms(d.YieldLatency)))
		}
	}
	if a := s.Diag.Audio; a != nil {
		b.WriteString("\naudio (measured on the frames, real time)\n")
		fmt.Fprintf(&b, "  caller frames     %d, lateness p50 %s p99 %s max %s\n", a.Frames, a.LatenessP50, a.LatenessP99, a.LatenessMax.Round(time.Millisecond))
		fmt.Fprintf(&b, "  responses         %s\n", durations(a.Responses))
		fmt.Fprintf(&b, "  yields            %s (%d barge-ins)\n", durations(a.Yields), a.BargeIns)
		fmt.Fprintf(&b, "  false yields      %d\n", a.FalseYields)
		if a.Recording != "" {
			fmt.Fprintf(&b, "  recording         %s (caller left, agent right)\n", a.Recording)
		}
	}
	if len(s.Buckets) > 0 {
		b.WriteString("\nroot causes\n")
		for _, hit := range s.Buckets {
			tag := "secondary"
			if hit.Bucket == s.Primary {
				tag = "primary"
			}
			fmt.Fprintf(&b, "  %s (%s)\n", hit.Bucket, tag)
			for _, f := range hit.Findings {
				fmt.Fprintf(&b, "      %s%s\n", f.Text, seqs(f.Text, f.Events))
			}
		}
	}
	if len(s.Diff) > 0 {
		b.WriteString("\nfinal state vs the caller's last intent\n")
		for _, d := range s.Diff {
			field := d.Field
			if field == "" {
				field = "(record)"
			}
			fmt.Fprintf(&b, "  %s/%s %s: want %q, got %q\n", d.Table, d.Key, field, d.Want, d.Got)
		}
	}
	_, err := io.WriteString(w, trimTrailing(b.String()))
	return err
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%9.1fms", float64(d)/float64(time.Millisecond))
}

func seqs(text string, ev []int) string {
	if len(ev) == 0 || strings.Contains(text, "[#") {
		return ""
	}
	parts := make([]string, len(ev))
	for i, s := range ev {
		parts[i] = fmt.Sprintf("#%d", s)
	}
	return "  [" + strings.Join(parts, " ") + "]"
}

// Describe is a one-line summary of an event's payload. It holds agent
// text, so it is escaped whole (safetext.Escape): no control, line break
// or bidi override of the agent's reaches a terminal, log or page.
func Describe(e trace.Event) string { return safetext.Escape(describe(e)) }

func describe(e trace.Event) string {
	switch d := e.Data.(type) {
	case *trace.CallStart:
		return fmt.Sprintf("scenario %s, seed %d, scale %g, %d steps, %d tools, %d records", d.ScenarioID, d.Seed, d.TimeScale, len(d.Script.Steps), len(d.Tools), len(d.Records))
	case *trace.CallEnd:
		s := string(d.Outcome)
		if s == "" {
			s = "completed"
		}
		if d.Reason != "" {
			s += ": " + d.Reason
		}
		return s
	case *trace.TriggerNote:
		s := "step " + d.Step
		if d.On != "" {
			s += " on " + d.On
		}
		if d.Cause != 0 {
			s += fmt.Sprintf(" (by #%d)", d.Cause)
		}
		if d.Reason != "" {
			s += ": " + d.Reason
		}
		return s
	case *trace.Snapshot:
		parts := make([]string, 0, len(d.Records))
		for _, r := range d.Records {
			parts = append(parts, fmt.Sprintf("%s/%s v%d %s", r.Table, r.Key, r.Version, kv(r.Fields)))
		}
		return strings.Join(parts, "; ")
	case *trace.Note:
		return d.Text
	case *trace.CallerSpeech:
		s := fmt.Sprintf("[%s] %q", d.Act, d.Text)
		if e.Kind == trace.KindCallerSpeechStart {
			s = fmt.Sprintf("[%s] onset", d.Act)
		}
		if d.Intent != nil && e.Kind == trace.KindCallerSpeechFinal {
			s += fmt.Sprintf(" intent v%d %s execute=%v %s", d.Intent.Version, d.Intent.Action, d.Intent.Execute, kv(d.Intent.Slots))
		}
		if d.Invalidates {
			s += " (invalidates)"
		}
		return s
	case *trace.CallerNoise:
		return d.Sound
	case *trace.CallerDTMF:
		return d.Digits
	case *trace.AgentSpeech:
		if d.Text == "" {
			return d.Utterance
		}
		return fmt.Sprintf("%s %q", d.Utterance, d.Text)
	case *trace.AgentToolIntent:
		return d.Tool + " " + kv(d.Args)
	case *trace.AgentState:
		s := fmt.Sprintf("v%d %s", d.Version, kv(d.Slots))
		if d.Pending != "" {
			s += " pending " + d.Pending
		}
		return s
	case *trace.ToolEvent:
		return describeTool(e.Kind, d)
	}
	return ""
}

func describeTool(k trace.Kind, d *trace.ToolEvent) string {
	s := d.Ref + " " + d.Tool
	switch k {
	case trace.KindToolReceived:
		s += " " + kv(d.Args)
		if d.IdempotencyKey != "" {
			s += " key=" + d.IdempotencyKey
		} else {
			s += " (no key)"
		}
		if d.BuiltFrom != nil {
			s += fmt.Sprintf(" built-from=v%d", *d.BuiltFrom)
		}
	case trace.KindToolCommitted:
		if d.Deleted {
			s += fmt.Sprintf(" %s/%s v%d %s -> deleted", d.Table, d.Key, d.VersionBefore, kv(d.Before))
			break
		}
		s += fmt.Sprintf(" %s/%s v%d->v%d %s -> %s", d.Table, d.Key, d.VersionBefore, d.VersionAfter, kv(d.Before), kv(d.After))
	case trace.KindToolResponded, trace.KindToolRejected:
		s += fmt.Sprintf(" %d", d.Status)
		if d.Dropped {
			s += " (dropped)"
		}
		if d.Error != "" {
			s += " " + d.Error
		}
	case trace.KindFaultApplied:
		s += " " + d.Fault
	case trace.KindToolReplayed:
		s += " replay of " + d.ReplayOf
	}
	if d.Hold != "" {
		s += " hold=" + d.Hold
	}
	if d.Reason != "" {
		s += " (" + d.Reason + ")"
	}
	return s
}

func kv(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	parts := make([]string, 0, len(m))
	for _, k := range trace.SortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// durations lists durations in milliseconds, "none" for none.
func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Round(time.Millisecond).String()
	}
	return strings.Join(parts, " ")
}
