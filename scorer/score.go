package scorer

import "github.com/callproof/callproof/trace"

// Score judges one call. It is pure: the same history always gives the
// same score, and the history is not modified.
func Score(h *trace.History) CallScore {
	cs := CallScore{Call: h.Call, Outcome: trace.OutcomeScored}
	start := h.Start()
	end := h.End()
	if start != nil {
		cs.Scenario, cs.Category = start.ScenarioID, start.Category
	}
	if end != nil {
		cs.Reason = end.Reason
		cs.Diag = Diagnostics{ResponseLatency: end.ResponseLatency, YieldLatency: end.YieldLatency, TimeScale: end.TimeScale, Audio: end.Audio, Lateness: end.Lateness}
		switch end.Outcome {
		case trace.OutcomeAgentError, trace.OutcomeHarnessError, trace.OutcomeExcluded:
			cs.Outcome = end.Outcome
		}
	}
	if start == nil {
		cs.Outcome, cs.Reason = trace.OutcomeHarnessError, "history does not open with call.start"
	} else if end == nil {
		cs.Outcome, cs.Reason = trace.OutcomeHarnessError, "history has no call.end"
	}
	if cs.Outcome != trace.OutcomeHarnessError && cs.Outcome != trace.OutcomeExcluded {
		if why := inconsistency(h, start); why != "" {
			cs.Outcome, cs.Reason = trace.OutcomeHarnessError, "inconsistent history: "+why
		}
	}
	if cs.Outcome == trace.OutcomeHarnessError || cs.Outcome == trace.OutcomeExcluded {
		cs.Axes = unknownAxes("not scored: " + string(cs.Outcome))
		return cs
	}
	v := index(h, start, end)
	cs.Challenge = v.ch.kind
	cs.Axes = []AxisResult{v.captured(), v.activeState(), v.toolArgs(), v.staleWrite(), v.backendCorrect(), v.confirmation()}
	cs.Diff = v.diff
	failed := false
	cs.Integrity = cs.Outcome == trace.OutcomeScored
	for _, a := range cs.Axes {
		if a.Verdict != Pass {
			cs.Integrity = false
		}
		if a.Verdict == Fail {
			failed = true
		}
	}
	if failed {
		cs.Buckets = v.buckets()
		cs.Primary = cs.Buckets[0].Bucket
		for _, b := range cs.Buckets[1:] {
			cs.Secondary = append(cs.Secondary, b.Bucket)
		}
	}
	return cs
}

// ScoreAll scores each history in order.
func ScoreAll(hs []*trace.History) []CallScore {
	out := make([]CallScore, len(hs))
	for i, h := range hs {
		out[i] = Score(h)
	}
	return out
}

func unknownAxes(why string) []AxisResult {
	out := make([]AxisResult, 0, 6)
	for _, a := range Axes() {
		out = append(out, AxisResult{Axis: a, Verdict: Unknown, Findings: []Finding{{Text: why}}})
	}
	return out
}
