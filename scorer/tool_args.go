package scorer

// toolArgs: every consequential call that reached the backend carries the
// intent in force when it arrived, and the final intent was sent at least
// once (docs/SCORING.md, axis 3).
func (v *view) toolArgs() AxisResult {
	res := AxisResult{Axis: ToolArgsCorrect}
	if v.final == nil {
		res.Verdict = Unknown
		res.Findings = append(res.Findings, Finding{Text: "the caller never stated an intent"})
		return res
	}
	res.Verdict = Pass
	sent := 0
	for _, r := range v.reqs {
		if !r.consequential() || r.recv == 0 || r.rejected > 0 {
			continue
		}
		if r.compensation() {
			// Putting back what an unwanted write changed acts on no
			// intent: it repairs (docs/SCORING.md, "Compensation").
			continue
		}
		m := v.markSpoken(r.recv)
		if m == nil {
			res.Verdict = Fail
			res.Findings = append(res.Findings, v.find(describe(r.tool, r.args)+" was received before the caller asked for anything", r.recv))
		} else if !m.in.Execute {
			res.Verdict = Fail
			res.Findings = append(res.Findings, v.find(describe(r.tool, r.args)+" was received after the caller withdrew the action", r.recv, m.seq))
		} else if !matches(r.tool, r.args, m) {
			res.Verdict = Fail
			res.Findings = append(res.Findings, v.find(describe(r.tool, r.args)+" was received but the caller wanted "+describe(m.in.Action, m.norm), r.recv, m.seq))
		}
		if sent == 0 && matches(r.tool, r.args, v.final) {
			sent = r.recv
		}
	}
	if v.final.in.Execute && sent == 0 {
		res.Verdict = Fail
		res.Findings = append(res.Findings, v.find("no call ever carried the final intent "+describe(v.final.in.Action, v.final.norm), v.finalSeq))
	} else if res.Verdict == Pass && sent > 0 {
		res.Findings = append(res.Findings, v.find("every consequential call matched the intent in force; the final intent was received", sent, v.finalSeq))
	} else if res.Verdict == Pass {
		res.Findings = append(res.Findings, v.find("the caller withdrew the action and no consequential call followed", v.finalSeq))
	}
	return res
}
