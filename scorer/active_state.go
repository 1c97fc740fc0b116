package scorer

import "github.com/callproof/callproof/trace"

// activeState: after the challenge, does the agent's working state match
// what the caller wants? Self-reports may fail this axis but never pass it
// against the agent's own later acts (docs/SCORING.md, axis 2).
func (v *view) activeState() AxisResult {
	res := AxisResult{Axis: ActiveStateCorrect}
	if v.final == nil {
		res.Verdict = Unknown
		res.Findings = append(res.Findings, Finding{Text: "the caller never stated an intent"})
		return res
	}
	anchor := v.anchor()
	if f, ok := v.adoptedFaulty(anchor); ok {
		res.Verdict = Fail
		res.Findings = append(res.Findings, f)
		return res
	}
	last := 0
	for _, s := range v.states {
		if s > anchor {
			last = s
		}
	}
	if last == 0 {
		seq, j := v.firstAct(anchor, func(e *trace.Event) int { return v.judge(e, v.final, nil) })
		switch j {
		case actPass:
			res.Verdict = Pass
			res.Findings = append(res.Findings, v.find("no agent.state after the challenge; first revealing act matches the caller's intent", anchor, seq))
		case actFail:
			res.Verdict = Fail
			res.Findings = append(res.Findings, v.find("no agent.state after the challenge; first revealing act shows other values", anchor, seq))
		default:
			res.Verdict = Unknown
			res.Findings = append(res.Findings, v.find("no agent.state and no revealing act after the challenge", anchor))
		}
		return res
	}
	if st, ok := v.ev(last).Data.(*trace.AgentState); ok && v.final.in.Execute && st.Pending == "" && !v.sentFinal() && !v.claimsDoneAfter(last) {
		res.Verdict = Fail
		res.Findings = append(res.Findings, v.find("last self-report has nothing pending, but the caller still wants the action and no call carried it", last, v.finalSeq))
		return res
	}
	if v.judge(v.ev(last), v.final, nil) == actFail {
		res.Verdict = Fail
		res.Findings = append(res.Findings, v.find("last self-report does not match the caller's final intent", last, v.finalSeq))
		return res
	}
	for i := range v.h.Events {
		e := &v.h.Events[i]
		if e.Seq <= anchor {
			continue
		}
		if f, ok := v.contradicts(e, anchor); ok {
			res.Verdict = Fail
			res.Findings = append(res.Findings, f)
			return res
		}
	}
	res.Verdict = Pass
	res.Findings = append(res.Findings, v.find("last self-report matches the caller's final intent and no later act contradicts it", anchor, last))
	return res
}

// contradicts reports an act initiated after anchor that shows values other
// than the intent in force when it was made: a tool-intent notice, a tool
// call announced after anchor, or a done-claim. A call built before the
// challenge is judged by tool_args_correct instead.
func (v *view) contradicts(e *trace.Event, anchor int) (Finding, bool) {
	m := v.markBefore(e.Seq)
	if m == nil {
		return Finding{}, false
	}
	switch e.Kind {
	case trace.KindAgentToolIntent:
		if v.judge(e, m, nil) == actFail {
			return v.find("a later tool-intent notice shows other values", e.Seq, m.seq), true
		}
	case trace.KindToolReceived:
		// Only writes state a working value: a read of another record
		// (checking whether a cancelled write landed, say) is not a claim.
		r := v.byRef[e.Data.(*trace.ToolEvent).Ref]
		if r != nil && r.consequential() && !r.compensation() && r.initiated > anchor && v.judge(e, m, nil) == actFail {
			return v.find("a tool call started after the challenge was received with other values", e.Seq, m.seq), true
		}
	case trace.KindAgentSpeechStart:
		if u := v.uttByStart[e.Seq]; u != nil && u.f.claim == claimDone && !u.f.already && v.judge(e, m, nil) == actFail {
			return v.find("a later done-claim names other values", e.Seq, m.seq), true
		}
	}
	return Finding{}, false
}

// adoptedFaulty finds a self-report or utterance after a wrong-record
// answer that repeats that record's values.
func (v *view) adoptedFaulty(anchor int) (Finding, bool) {
	for _, r := range v.reqs {
		bad := v.badValues(r)
		if len(bad) == 0 {
			continue
		}
		from := max(r.moment(), anchor)
		for i := range v.h.Events {
			e := &v.h.Events[i]
			if e.Seq > from && (e.Kind == trace.KindAgentState || e.Kind == trace.KindAgentSpeechStart) && v.adopted(e, bad) {
				return v.find("agent adopted values from the wrong record returned to "+r.tool, r.moment(), e.Seq), true
			}
		}
	}
	return Finding{}, false
}

// sentFinal reports whether a consequential request matching the final
// intent ever reached the backend.
func (v *view) sentFinal() bool {
	for _, r := range v.reqs {
		if r.consequential() && r.recv > 0 && r.rejected == 0 && matches(r.tool, r.args, v.final) {
			return true
		}
	}
	return false
}

// claimsDoneAfter reports a completed done-claim after seq: an agent that
// believes the action done has it out of its pending work (whether the
// belief is true is axis 6's question).
func (v *view) claimsDoneAfter(seq int) bool {
	for _, u := range v.utts {
		if u.start > seq && u.completed() && u.f.claim == claimDone {
			return true
		}
	}
	return false
}
