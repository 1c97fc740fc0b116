package scorer

import "strconv"

// staleWrite: was every write built on withdrawn values blocked?
// (docs/SCORING.md, axis 4). A write that committed before the caller
// changed their mind is not stale; axes 5 and 6 check it was set right.
func (v *view) staleWrite() AxisResult {
	res := AxisResult{Axis: StaleWritePrevented}
	if v.final == nil {
		res.Verdict = Unknown
		res.Findings = append(res.Findings, Finding{Text: "the caller never stated an intent"})
		return res
	}
	res.Verdict = Pass
	fail := func(f Finding) {
		res.Verdict = Fail
		res.Findings = append(res.Findings, f)
	}
	cs := v.commits()
	for i, c := range cs {
		if c.r.compensation() {
			continue
		}
		// Judged twice: against the intent in force when the write
		// committed, and against the one in force (from its onset) when
		// the request was sent — a write sent while the caller was
		// correcting it was built on values already being withdrawn.
		m := v.markBefore(c.seq)
		sent := v.markSpoken(c.r.recv)
		if m != nil && v.acceptedBefore(c.r, m) {
			// The write was accepted (answered) before the caller began
			// the change: the agent held no open request to cancel, so
			// its late landing is not a stale write it failed to stop.
			m = v.markBefore(c.r.responded)
		}
		if m != nil && !m.in.Execute {
			fail(v.find(describe(c.r.tool, c.r.args)+" committed while the caller had withdrawn the action"+v.repaired(c), c.seq, m.seq))
		} else if sent != nil && !sent.in.Execute {
			fail(v.find(describe(c.r.tool, c.r.args)+" was sent while the caller was withdrawing the action, and committed", c.r.recv, sent.onset, c.seq))
		} else if m != nil && !matches(c.r.tool, c.r.args, m) && v.staleArgs(c.r, m) {
			fail(v.find(describe(c.r.tool, c.r.args)+" committed with values the caller had already replaced"+v.repaired(c), c.seq, m.seq))
		} else if sent != nil && !matches(c.r.tool, c.r.args, sent) && v.staleArgs(c.r, sent) {
			fail(v.find(describe(c.r.tool, c.r.args)+" was sent while the caller was replacing its values, and committed", c.r.recv, sent.onset, c.seq))
		}
		// A retry after a bad answer that writes the same effect again was
		// built on a stale belief that the first write had not landed.
		for _, p := range cs[:i] {
			if p.r != c.r && !p.r.compensation() && effect(p.r) == effect(c.r) && p.r.problem != "" && p.r.after() > 0 && p.r.after() < c.r.recv {
				fail(v.find("a retry of "+c.r.tool+" after "+article(p.r.problem)+" answer committed the same effect again", p.seq, p.r.moment(), c.seq))
				break
			}
		}
	}
	for _, r := range v.reqs {
		if m := v.invalidatedOpen(r); m != nil && r.closed() == 0 && len(r.commits) == 0 {
			fail(v.find(describe(r.tool, r.args)+" was in flight when the caller changed the request and was never cancelled", r.recv, m.seq))
		}
	}
	if res.Verdict == Pass {
		res.Findings = append(res.Findings, Finding{Text: "no write was built on withdrawn values"})
	}
	return res
}

// invalidatedOpen returns the first intent change that found the
// consequential request r in flight and no longer wanted as built.
func (v *view) invalidatedOpen(r *request) *mark {
	if !r.consequential() {
		return nil
	}
	for i := range v.marks {
		m := &v.marks[i]
		if m.changed && r.openAt(m.seq) && !matches(r.tool, r.args, m) {
			return m
		}
	}
	return nil
}

// repaired notes a later compensation of commit c for the finding.
func (v *view) repaired(c commitRef) string { return v.repairedSeq(c.seq) }

func (v *view) repairedSeq(seq int) string {
	for _, r := range v.reqs {
		if r.compensates != nil && r.compensates.seq == seq && len(r.commits) > 0 {
			return " (compensated: put back by #" + strconv.Itoa(r.commits[0]) + ")"
		}
	}
	return ""
}

// acceptedBefore reports whether r was answered (not an error) before the
// onset of the first intent change up to m that it no longer matches.
func (v *view) acceptedBefore(r *request, m *mark) bool {
	if r.responded == 0 || r.status >= 400 || r.dropped {
		return false
	}
	for i := range v.marks {
		x := &v.marks[i]
		if x.seq > m.seq {
			break
		}
		if x.changed && x.seq > r.recv && !matches(r.tool, r.args, x) {
			return r.responded < x.onset
		}
	}
	return false
}
