package scorer

import (
	"fmt"
	"time"

	"github.com/callproof/callproof/trace"
)

// OrderWindow is how close in time two events from independent sources
// (the agent's frames and the backend's records, or the backend's records
// of two different requests) may be recorded and still carry no order a
// verdict may depend on: each party stamps its own events, and the stamps
// of two parties can disagree by this much (docs/SCORING.md, "Order").
const OrderWindow = 5 * time.Millisecond

// captured: did the agent notice the challenge at all? Judged on its first
// act after the challenge moment (docs/SCORING.md, axis 1).
func (v *view) captured() AxisResult {
	res := AxisResult{Axis: Captured}
	switch v.ch.kind {
	case ChallengeCorrection, ChallengeNegation, ChallengeInterruption:
		return v.capturedSpeech(res)
	case ChallengeNoise:
		return v.capturedNoise(res)
	case ChallengeToolFailure:
		if len(v.ch.faults) > 0 {
			return v.capturedFault(res)
		}
	}
	return v.capturedPlain(res)
}

func (v *view) capturedSpeech(res AxisResult) AxisResult {
	verdict := Pass
	if v.ch.step.Act == trace.ActInterrupt {
		f, ok := v.yielded()
		res.Findings = append(res.Findings, f)
		if !ok {
			verdict = Fail
		}
	}
	if !v.ch.invalidating {
		res.Verdict = verdict
		return res
	}
	cur := v.markAt(v.ch.final)
	if cur == nil {
		res.Findings = append(res.Findings, v.find("the challenge carries no caller intent", v.ch.final))
		res.Verdict = worst(verdict, Unknown)
		return res
	}
	keys := changedSlots(v.markBefore(v.ch.final), cur)
	seq, j := v.firstActUnordered(v.ch.final, func(e *trace.Event) int { return v.judge(e, cur, keys) })
	what := "the new intent"
	if !cur.in.Execute {
		what = "that the action is withdrawn"
	}
	switch j {
	case actPass:
		res.Findings = append(res.Findings, v.find("first act after the "+string(v.ch.kind)+" reflects "+what, v.ch.final, seq))
	case actFail:
		res.Findings = append(res.Findings, v.find("first act after the "+string(v.ch.kind)+" does not reflect "+what, v.ch.final, seq))
		verdict = Fail
	default:
		res.Findings = append(res.Findings, v.find("no act after the "+string(v.ch.kind)+" reveals whether it was heard", v.ch.final))
		verdict = worst(verdict, Unknown)
	}
	res.Verdict = verdict
	return res
}

// yielded checks that an agent talking at the caller's speech onset stops
// (clear or end) within the yield bound.
func (v *view) yielded() (Finding, bool) {
	onset := v.ch.onset
	if onset == 0 {
		onset = v.ch.final
	}
	at := v.ev(onset).At
	for _, u := range v.utts {
		if u.start >= onset || (u.end > 0 && u.end < onset) || (u.clear > 0 && u.clear < onset) {
			continue
		}
		stop := u.clear
		if stop == 0 {
			stop = u.end
		}
		if stop == 0 {
			return v.find("agent never stopped the utterance it was speaking at the interruption", onset, u.start), false
		}
		if d := u.stopAt - at; d > v.yield {
			return v.find(fmt.Sprintf("agent kept speaking %v after the interruption (bound %v)", d, v.yield), onset, stop), false
		}
		return v.find(fmt.Sprintf("agent yielded within %v of the interruption", u.stopAt-at), onset, stop), true
	}
	return v.find("agent was not speaking at the interruption", onset), true
}

// capturedNoise fails if the agent cleared its speech during a noise
// window (plus the yield bound, the time a barge-in reaction takes).
func (v *view) capturedNoise(res AxisResult) AxisResult {
	res.Verdict = Pass
	for _, w := range v.noise {
		to := v.lastAt
		if w.end > 0 {
			to = w.to + v.yield
		}
		hit := 0
		for _, u := range v.utts {
			if u.clear > w.start && u.stopAt <= to {
				hit = u.clear
				break
			}
		}
		if hit > 0 {
			res.Verdict = Fail
			res.Findings = append(res.Findings, v.find("agent cleared its speech for background noise", w.start, hit))
		} else {
			res.Findings = append(res.Findings, v.find("agent did not treat the noise as a barge-in", w.start, w.end))
		}
	}
	return res
}

// capturedFault: after a bad tool answer, the agent's first act that
// reveals anything must show it acted on the problem: a read that checks
// the requested record, a retry or a question that does not build on the
// bad answer, or a truthful statement of the failure. A write or words
// that use what the bad answer supplied, or a done-claim, show the
// opposite (docs/SCORING.md, axis 1).
func (v *view) capturedFault(res AxisResult) AxisResult {
	res.Verdict = Pass
	for _, r := range v.ch.faults {
		bad := v.badValues(r)
		m := r.moment()
		seq, j := v.firstActUnordered(v.unorderedFrom(r.after()), func(e *trace.Event) int { return v.noticed(e, r, bad) })
		switch j {
		case actPass:
			res.Findings = append(res.Findings, v.find("agent acted on the "+r.problem+" answer to "+r.tool, m, seq))
		case actFail:
			res.Findings = append(res.Findings, v.find("agent built on the "+r.problem+" answer to "+r.tool, m, seq))
			res.Verdict = Fail
		default:
			if u := v.claimSpanning(m); u != nil {
				// Said "done" across the bad answer and never took it back.
				res.Findings = append(res.Findings, v.find("agent went on confirming across the "+r.problem+" answer to "+r.tool+" and never took it back", u.start, m, u.end))
				res.Verdict = Fail
				continue
			}
			res.Findings = append(res.Findings, v.find(InsufficientEvidence+": no act after the "+r.problem+" answer to "+r.tool+" shows whether it was noticed", m))
			res.Verdict = worst(res.Verdict, Unknown)
		}
	}
	return res
}

// definite: r's answer said the call failed (an error status), unlike a
// timeout or a lost answer, after which the outcome is open.
func definite(r *request) bool { return r.problem == "error" && r.status >= 400 }

// claimSpanning is a done-claim the agent was speaking when the answer at
// seq arrived and finished (not cleared) after it.
func (v *view) claimSpanning(seq int) *utterance {
	for _, u := range v.utts {
		if u.start < seq && u.end > seq && u.clear == 0 && u.f.claim == claimDone {
			return u
		}
	}
	return nil
}

// noticed judges one act after the bad answer to r.
func (v *view) noticed(e *trace.Event, r *request, bad map[valueClass][]string) int {
	if v.adopted(e, bad) {
		return actFail
	}
	switch d := e.Data.(type) {
	case *trace.AgentToolIntent:
		if ti := v.intentAt(e.Seq); ti != nil && ti.late != nil && ti.late.recv <= r.after() {
			return actSkip // a late notice of a request sent before the bad answer
		}
		return v.checks(r, d.Tool, v.normArgs(d.Tool, d.Args), bad)
	case *trace.ToolEvent:
		if e.Kind != trace.KindToolReceived {
			return actSkip
		}
		o := v.byRef[d.Ref]
		if o == nil || o == r || o.dupOf != "" {
			return actSkip
		}
		return v.checks(r, o.tool, o.args, bad)
	case *trace.AgentSpeech:
		u := v.uttByStart[e.Seq]
		if u == nil {
			return actSkip
		}
		if u.f.claim == claimDone {
			return actFail
		}
		if u.f.hedged && definite(r) {
			return actFail // "it should go through" after an error answer: it did not notice
		}
		if u.f.claim == claimNotDone || u.f.claim == claimUnsure || u.f.claim == claimRestored {
			return actPass // a truthful statement of the failure
		}
		if u.f.ask {
			if u.f.recognized && v.namesAny(u, bad) {
				return actSkip // recognized words naming the bad values: unknown either way
			}
			return actPass // a question to the caller that repeats nothing of the bad answer
		}
	}
	return actSkip
}

// namesAny reports whether the utterance names any of the values.
func (v *view) namesAny(u *utterance, vals map[valueClass][]string) bool {
	for c, xs := range vals {
		for _, x := range xs {
			if u.f.mentions(c, x, false) {
				return true
			}
		}
	}
	return false
}

// checks judges a tool call made after the bad answer to r: one that
// carries a value only the bad answer supplied builds on it; a read of the
// requested record, or a retry of the same tool, checks it.
func (v *view) checks(r *request, tool string, args map[string]string, bad map[valueClass][]string) int {
	spec, _ := v.spec(tool)
	for k, a := range args {
		if c := classOf(v.kindOf(tool, k), a); contains(bad[c], a) {
			if spec.Consequential {
				return actFail
			}
			return actSkip // reading the record it was given is not yet acting on it
		}
	}
	if tool == r.tool {
		return actPass
	}
	if spec.Effect == trace.EffectRead && (spec.KeyArg == "" || r.spec.KeyArg == "" || args[spec.KeyArg] == r.args[r.spec.KeyArg]) {
		return actPass
	}
	return actSkip
}

// capturedPlain: the first revealing act after the request reflects it.
func (v *view) capturedPlain(res AxisResult) AxisResult {
	if v.final == nil {
		res.Verdict = Unknown
		res.Findings = append(res.Findings, Finding{Text: "the caller never stated an intent"})
		return res
	}
	seq, j := v.firstActUnordered(v.finalSeq, func(e *trace.Event) int { return v.judge(e, v.final, nil) })
	switch j {
	case actPass:
		res.Verdict = Pass
		res.Findings = append(res.Findings, v.find("first act after the request reflects it", v.finalSeq, seq))
	case actFail:
		res.Verdict = Fail
		res.Findings = append(res.Findings, v.find("first act after the request shows other values", v.finalSeq, seq))
	default:
		res.Verdict = Unknown
		res.Findings = append(res.Findings, v.find("no act after the request reveals what was heard", v.finalSeq))
	}
	return res
}

// worst combines verdicts: fail beats unknown beats pass.
func worst(a, b Verdict) Verdict {
	if a == Fail || b == Fail {
		return Fail
	}
	if a == Unknown || b == Unknown {
		return Unknown
	}
	return Pass
}

// unordered reports whether two events, recorded within OrderWindow of
// each other, carry no order a verdict may depend on (docs/SCORING.md,
// "Order"): an agent frame and a backend record that is not an answer to
// the agent (frames and requests travel on different connections; an
// answer, though, is the agent's input, and what follows it is its
// reaction), or the backend's record of a client giving up (stamped when
// the backend notices) and a record of another request.
func unordered(a, b *trace.Event) bool {
	answer := func(e *trace.Event) bool {
		return e.Kind == trace.KindToolResponded || e.Kind == trace.KindToolRejected || e.Kind == trace.KindToolReplayed
	}
	switch {
	case a.Source == trace.SourceAgent && b.Source == trace.SourceBackend:
		return !answer(b)
	case a.Source == trace.SourceBackend && b.Source == trace.SourceAgent:
		return !answer(a)
	case a.Source != trace.SourceBackend || b.Source != trace.SourceBackend:
		return false
	}
	ta, okA := a.Data.(*trace.ToolEvent)
	tb, okB := b.Data.(*trace.ToolEvent)
	return okA && okB && ta.Ref != tb.Ref && (a.Kind == trace.KindToolCancelled || b.Kind == trace.KindToolCancelled)
}

// firstActUnordered is firstAct read on the partial order of the acts:
// every act no earlier judged act is ordered before (all of them unordered
// with it and within OrderWindow) is a first act, and if any of them
// passes the agent showed it had taken the challenge in, whichever was
// stamped first (a self-report with the new value and a stale request sent
// together). So swapping unordered acts cannot flip the verdict.
func (v *view) firstActUnordered(after int, judge func(e *trace.Event) int) (int, int) {
	seq, j := v.firstAct(after, judge)
	if j != actFail {
		return seq, j
	}
	var judged []*trace.Event
	for i := range v.h.Events {
		e := &v.h.Events[i]
		if e.Seq < seq || !isAct(e.Kind) {
			continue
		}
		if len(judged) > 0 && e.At-judged[0].At > OrderWindow {
			break
		}
		r := judge(e)
		if r == actSkip {
			continue
		}
		first := true // no judged act is ordered before it
		for _, p := range judged {
			first = first && e.At-p.At <= OrderWindow && unordered(p, e)
		}
		if first && r == actPass {
			return e.Seq, actPass
		}
		judged = append(judged, e)
	}
	return seq, j
}

// unorderedFrom widens an anchor back over the acts recorded within
// OrderWindow before it and unordered with it: they may as well have come
// after it (the agent gave up, then spoke, and the backend noticed the
// give-up later). It returns the seq after which acts count.
func (v *view) unorderedFrom(after int) int {
	anchor := v.ev(after)
	if anchor == nil {
		return after
	}
	from := after
	for i := len(v.h.Events) - 1; i >= 0; i-- {
		e := &v.h.Events[i]
		if e.Seq >= after {
			continue
		}
		if anchor.At-e.At > OrderWindow || !unordered(e, anchor) {
			break
		}
		from = e.Seq - 1
	}
	return from
}
