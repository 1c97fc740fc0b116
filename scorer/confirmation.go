package scorer

import "github.com/callproof/callproof/trace"

// confirmation: what the agent last told the caller matches what the
// backend holds (docs/SCORING.md, axis 6).
func (v *view) confirmation() AxisResult {
	res := AxisResult{Axis: ConfirmationMatchesBackend}
	if v.final == nil || v.snap == nil {
		res.Verdict = Unknown
		res.Findings = append(res.Findings, Finding{Text: "no caller intent or no backend snapshot"})
		return res
	}
	u := v.confirmingUtterance()
	if u == nil {
		if hang, r := v.hungUpInFlight(); r != nil {
			// The caller left before the outcome existed: the agent had
			// nothing to confirm yet and claimed nothing false.
			res.Verdict = Pass
			res.Findings = append(res.Findings, v.find("the caller hung up while "+r.tool+" was in flight; the agent claimed nothing", hang, r.recv))
			return res
		}
		res.Verdict = Fail
		res.Findings = append(res.Findings, v.find("agent never confirmed the outcome after the caller's last change", v.finalSeq))
		return res
	}
	fail := func(f Finding) {
		res.Verdict = Fail
		res.Findings = append(res.Findings, f)
	}
	res.Verdict = Pass
	unchanged := v.unchanged
	switch {
	case !v.final.in.Execute && u.f.claim != claimNotDone:
		fail(v.find("caller withdrew the action but the agent's confirmation says it was done", u.start, v.finalSeq))
	case u.f.claim == claimNotDone && !unchanged:
		fail(v.find("agent said nothing was done but the backend changed", u.start, v.snapSeq))
	case u.f.claim == claimDone:
		v.checkDone(u, fail)
	}
	if res.Verdict == Pass {
		res.Findings = append(res.Findings, v.find("the "+u.f.claim.String()+" confirmation matches the backend", u.start, v.snapSeq))
	}
	return res
}

// confirmingUtterance is the agent's last completed (not cleared)
// utterance that makes a claim and started after the caller's last intent
// change. Pleasantries without a claim ("anything else?") are skipped.
func (v *view) confirmingUtterance() *utterance {
	for i := len(v.utts) - 1; i >= 0; i-- {
		u := v.utts[i]
		if u.start <= v.finalSeq {
			break
		}
		if u.completed() && u.f.claim != claimNone {
			return u
		}
	}
	return nil
}

// checkDone: a done-claim must name only the values the backend holds for
// the intended record, the intended change must be in the snapshot, and
// the claim must start after the write it reports committed.
func (v *view) checkDone(u *utterance, fail func(Finding)) {
	held := v.heldValues()
	for c := classOrder; c <= classQty; c++ {
		ok, named := held[c], u.f.values(c)
		if len(ok) == 0 {
			continue
		}
		for _, x := range named {
			if !contains(ok, x) {
				fail(v.find("confirmation names "+x+", which the backend does not hold for the intended record", u.start, v.snapSeq))
			}
		}
	}
	for _, k := range v.targets() {
		w, g := record(v.want, k[0], k[1]), record(v.snap.Records, k[0], k[1])
		if g == nil || !fieldsHeld(w, g) {
			fail(v.find("agent confirmed a change that is not in the backend ("+k[0]+"/"+k[1]+")", u.start, v.snapSeq))
		}
	}
	for _, c := range v.commits() {
		if matches(c.r.tool, c.r.args, v.final) {
			if c.seq > u.start {
				fail(v.find("confirmation started before the write it reports committed", u.start, c.seq))
			}
			break
		}
	}
}

// heldValues lists, per value class, what the snapshot holds for the
// records and fields the final intent targets.
func (v *view) heldValues() map[valueClass][]string {
	out := map[valueClass][]string{}
	spec, ok := v.spec(v.final.in.Action)
	if !ok {
		return out
	}
	add := func(t, s string) {
		n := normValue(t, s)
		if c := classOf(t, n); c != classNone {
			out[c] = appendUniq(out[c], n)
		}
	}
	for _, k := range v.targets() {
		g := record(v.snap.Records, k[0], k[1])
		if g == nil {
			continue
		}
		if spec.KeyArg != "" {
			add(v.argType(spec.Name, spec.KeyArg), g.Key)
		}
		for name := range v.final.in.Slots {
			if name != spec.KeyArg {
				add(v.argType(spec.Name, name), g.Fields[name])
			}
		}
	}
	return out
}

// fieldsHeld reports whether got has every field of want with its value.
func fieldsHeld(want, got *trace.Record) bool {
	if want == nil {
		return true
	}
	for f, x := range want.Fields {
		if got.Fields[f] != x {
			return false
		}
	}
	return true
}

// hungUpInFlight returns the caller's hang-up and a consequential request
// that was still open at it, if the caller ended the call mid-write.
func (v *view) hungUpInFlight() (int, *request) {
	for i := range v.h.Events {
		e := &v.h.Events[i]
		if e.Kind != trace.KindCallerHangup {
			continue
		}
		for _, r := range v.reqs {
			if r.consequential() && r.openAt(e.Seq) {
				return e.Seq, r
			}
		}
		return 0, nil
	}
	return 0, nil
}
