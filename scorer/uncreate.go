package scorer

import (
	"slices"
	"strings"

	"github.com/callproof/callproof/trace"
)

// uncreating is compensating for a cancel or delete of record key, sent at
// seq: the commit that created that record in this call, when the intent
// in force at seq no longer matches the create (docs/SCORING.md, "Undoing
// a create"). A record that existed at the start is never uncreated.
func (v *view) uncreating(spec trace.ToolSpec, key string, seq int, self *request) *commitRef {
	if key == "" || record(v.start.Records, spec.Table, key) != nil {
		return nil
	}
	m := v.markSpoken(seq)
	for i := range v.cs {
		c := &v.cs[i]
		if c.seq >= seq || c.r == self || c.table != spec.Table || c.key != key || c.r.spec.Effect != trace.EffectCreate {
			continue
		}
		if m == nil || !matches(c.r.tool, c.r.args, m) {
			return c
		}
		return nil // the caller still wants what was created
	}
	return nil
}

// netEffect is the snapshot as the caller is left with it: a created record
// that a compensation cancelled, and that still holds the cancel's status,
// counts as absent. undone lists the records compensations cancelled or
// deleted, as they were before (for confirmations that name them).
func (v *view) netEffect() (net, undone []trace.Record) {
	gone := map[[2]string]bool{}
	for _, r := range v.reqs {
		spec, ok := r.undoSpec()
		if !ok || len(r.commits) == 0 {
			continue
		}
		switch spec.Effect {
		case trace.EffectCancel:
			k := r.commitKeys[0]
			if g := record(v.snap.Records, k[0], k[1]); g != nil && g.Fields[spec.StatusField] == spec.StatusValue {
				gone[k] = true
			}
		}
		if b := r.undoneBefore; b != nil {
			undone = append(undone, *b)
		}
	}
	if len(gone) == 0 {
		return v.snap.Records, undone
	}
	for _, r := range v.snap.Records {
		if !gone[[2]string{r.Table, r.Key}] {
			net = append(net, r)
		}
	}
	return net, undone
}

// withDeleted adds to rs the records the final intent deletes, as they
// were at the start: a claim of the delete names them ("I've removed your
// Tuesday booking"), and those are the values it must name.
func (v *view) withDeleted(rs []trace.Record) []trace.Record {
	out := rs
	for _, k := range v.targets() {
		if record(v.want, k[0], k[1]) != nil || record(rs, k[0], k[1]) != nil {
			continue
		}
		if r := record(v.start.Records, k[0], k[1]); r != nil {
			if len(out) == len(rs) {
				out = slices.Clone(rs)
			}
			out = append(out, v.canon([]trace.Record{*r})...)
		}
	}
	return out
}

// undoSpec is r's spec as an undo of a create: a cancel or delete that
// compensates, or an update that compensates for a create by writing a
// cancelled status (cancelStatus), read as a cancel of that field.
func (r *request) undoSpec() (trace.ToolSpec, bool) {
	if r.compensates == nil {
		return trace.ToolSpec{}, false
	}
	switch r.spec.Effect {
	case trace.EffectCancel, trace.EffectDelete:
		return r.spec, true
	case trace.EffectUpdate:
		if r.compensates.r.spec.Effect != trace.EffectCreate {
			return trace.ToolSpec{}, false
		}
		return cancelStatus(r.spec, r.args)
	}
	return trace.ToolSpec{}, false
}

// cancelStatus reads an update as a cancel modelled as an update of a
// status field: its only argument besides the key writes "cancelled" (or
// "canceled"). It returns the spec as the equivalent cancel effect.
func cancelStatus(spec trace.ToolSpec, args map[string]string) (trace.ToolSpec, bool) {
	if spec.Effect != trace.EffectUpdate || len(args) != 2 || args[spec.KeyArg] == "" {
		return trace.ToolSpec{}, false
	}
	for k, a := range args {
		if k == spec.KeyArg {
			continue
		}
		if w := strings.ToLower(strings.TrimSpace(a)); w != "cancelled" && w != "canceled" {
			return trace.ToolSpec{}, false
		}
		out := spec
		out.Effect, out.StatusField, out.StatusValue = trace.EffectCancel, k, a
		return out, true
	}
	return trace.ToolSpec{}, false
}

// undoSent reports whether the agent sent a cancel or delete that undoes a
// create (landed or not).
func (v *view) undoSent() bool {
	for _, r := range v.reqs {
		if _, ok := r.undoSpec(); ok {
			return true
		}
	}
	return false
}

// reportsUndo: the done clauses of u use a cancel or delete verb ("I've
// cancelled that booking"), reporting the undo rather than the action.
func reportsUndo(u *utterance) bool {
	for _, w := range strings.Fields(u.f.ctext) {
		if w == "cancelled" || w == "canceled" || families[2].past[w] {
			return true
		}
	}
	return false
}

// cancelReading is a clause's claim c reread for a call whose caller asked
// for a cancel: an undenied "cancelled" the reader took for a withdrawal
// ("that's cancelled") reports the cancel done, and a denied one ("it
// isn't cancelled yet") reports it not done.
func cancelReading(c claim, ts []string) claim {
	j := " " + strings.Join(ts, " ") + " "
	for _, p := range notNegations {
		j = strings.ReplaceAll(j, " "+p+" ", " ")
	}
	neg := false
	for _, w := range strings.Fields(j) {
		if negations[w] || strings.HasSuffix(w, "n't") {
			neg = true
		}
		if w != "cancelled" && w != "canceled" {
			continue
		}
		switch {
		case c == claimNotDone && !neg:
			return claimDone
		case c == claimUndecided && neg:
			return claimNotDone
		}
		return c
	}
	return c
}

// readCancels rereads utterances for a call whose final intent is to
// cancel: "that's cancelled" reports that cancel whatever noun follows,
// and "it isn't cancelled" denies it (docs/SCORING.md, "Cancels").
// Without a cancel asked for they stay what the reader made of them (the
// agent dropping the pending action).
func (v *view) readCancels() {
	if v.final == nil || !v.final.in.Execute || !v.cancelAction(v.final.in) {
		return
	}
	for _, u := range v.utts {
		if u.f.cancelClaim == u.f.claim {
			continue
		}
		u.f.claim, u.f.why = u.f.cancelClaim, ""
		if u.f.claim == claimUndecided {
			u.f.why = "the utterance makes conflicting claims"
		}
		if u.f.claim == claimDone {
			u.f.claimed, u.f.ctext = u.f.cancelVals, u.f.cancelText
		}
	}
}

// cancelAction: the intent's action cancels a record, by a cancel effect
// or by an update that writes a cancelled status.
func (v *view) cancelAction(in *trace.Intent) bool {
	spec, ok := v.spec(in.Action)
	if !ok || !spec.Consequential {
		return false
	}
	if spec.Effect == trace.EffectCancel {
		return true
	}
	if spec.Effect != trace.EffectUpdate {
		return false
	}
	for _, s := range in.Slots {
		if w := strings.ToLower(strings.TrimSpace(s)); w == "cancelled" || w == "canceled" {
			return true
		}
	}
	return false
}
