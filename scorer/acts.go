package scorer

import "github.com/callproof/callproof/trace"

// Judgements of one agent act against an intent.
const (
	actSkip = 0  // reveals nothing about the values in question
	actPass = 1  // reflects the intent
	actFail = -1 // shows other values (or, for a negation, a live action)
)

// isAct reports whether an event is something the agent did: a self-report,
// a tool-intent notice, a tool request reaching (or abandoning) the
// backend, or the start of an utterance.
func isAct(k trace.Kind) bool {
	switch k {
	case trace.KindAgentState, trace.KindAgentToolIntent, trace.KindToolReceived,
		trace.KindToolCancelled, trace.KindAgentSpeechStart:
		return true
	}
	return false
}

// firstAct returns the seq of the first act after seq that judge does not
// skip, and its judgement; 0, actSkip when there is none.
func (v *view) firstAct(after int, judge func(e *trace.Event) int) (int, int) {
	for i := range v.h.Events {
		e := &v.h.Events[i]
		if e.Seq <= after || !isAct(e.Kind) {
			continue
		}
		if j := judge(e); j != actSkip {
			return e.Seq, j
		}
	}
	return 0, actSkip
}

// judge compares one act with intent m on the slots in keys (all of m's
// slots when keys is empty). For a withdrawn action (!Execute) only
// whether the action is still alive matters.
func (v *view) judge(e *trace.Event, m *mark, keys []string) int {
	if len(keys) == 0 {
		keys = sortedSlots(m)
	}
	neg := !m.in.Execute
	switch d := e.Data.(type) {
	case *trace.AgentState:
		if neg {
			if d.Pending == "" {
				return actPass
			}
			return actFail
		}
		return tally(keys, func(k string) (string, bool) {
			s, ok := d.Slots[k]
			return v.norm(v.argType(m.in.Action, k), s), ok
		}, m)
	case *trace.AgentToolIntent:
		args := v.normArgs(d.Tool, d.Args)
		if v.compensating(d.Tool, args, e.Seq, nil) != nil {
			if neg {
				return actPass
			}
			return actSkip
		}
		return v.judgeCall(d.Tool, args, m, keys)
	case *trace.ToolEvent:
		r := v.byRef[d.Ref]
		if r == nil {
			return actSkip
		}
		if e.Kind == trace.KindToolCancelled {
			if neg && r.consequential() {
				return actPass
			}
			return actSkip
		}
		if r.compensation() {
			if neg {
				return actPass // undoing the withdrawn write shows it was heard
			}
			return actSkip
		}
		if r.rejected > 0 || !r.consequential() {
			// Reads reveal nothing about the working state: an agent may
			// read any record (to check a cancelled write, say).
			return actSkip
		}
		return v.judgeCall(r.tool, r.args, m, keys)
	case *trace.AgentSpeech:
		u := v.uttByStart[e.Seq]
		if u == nil {
			return actSkip
		}
		if neg {
			if u.f.claim == claimNotDone || u.f.claim == claimRestored {
				return actPass
			}
			if u.f.claim == claimDone && u.f.already {
				return actSkip // "that had already gone through" reports, it does not act
			}
			if u.f.claim == claimDone && v.undoSent() && reportsUndo(u) {
				return actPass // "I've cancelled that booking": the undo of the withdrawn create
			}
			if u.f.claim == claimDone {
				return actFail
			}
			return actSkip
		}
		return v.judgeSpeech(u, m, keys)
	}
	return actSkip
}

func (v *view) judgeCall(tool string, args map[string]string, m *mark, keys []string) int {
	spec, _ := v.spec(tool)
	if !m.in.Execute {
		if spec.Consequential {
			return actFail
		}
		return actSkip
	}
	if spec.Consequential && tool != m.in.Action {
		return actFail
	}
	return tally(keys, func(k string) (string, bool) { a, ok := args[k]; return a, ok }, m)
}

// judgeSpeech: an utterance reflects a slot when it names the slot's
// current value, and contradicts it when it names only other values of
// that kind (for a done-claim, also a rival: docs/SCORING.md, axis 2).
func (v *view) judgeSpeech(u *utterance, m *mark, keys []string) int {
	pass, fail := 0, 0
	for _, k := range keys {
		want := m.norm[k]
		c := classOf(v.kindOf(m.in.Action, k), want)
		if c == classNone {
			continue
		}
		if u.f.mentions(c, want, false) {
			pass++
		} else if c == classText {
			cands := v.textCandidates(k)
			if u.f.claim == claimDone {
				// A done-claim is accounted for as axis 6 accounts for
				// it: a value no one proposed that a record or the
				// catalogue's enum holds for the field contradicts too.
				cands = append(cands, v.rivals(k, []string{want})...)
			}
			for _, cand := range cands {
				if cand != want && u.f.mentions(classText, cand, false) {
					fail++
					break
				}
			}
		} else if len(u.f.values(c)) > 0 {
			fail++
		}
	}
	if u.f.recognized {
		fail = 0 // a recognizer's other value is no proof (trace.RecognizedText)
	}
	return verdictOf(pass, fail)
}

func tally(keys []string, get func(string) (string, bool), m *mark) int {
	pass, fail := 0, 0
	for _, k := range keys {
		got, ok := get(k)
		if !ok {
			continue
		}
		if got == m.norm[k] {
			pass++
		} else {
			fail++
		}
	}
	return verdictOf(pass, fail)
}

func verdictOf(pass, fail int) int {
	if fail > 0 {
		return actFail
	}
	if pass > 0 {
		return actPass
	}
	return actSkip
}

func sortedSlots(m *mark) []string { return trace.SortedKeys(m.norm) }

// changedSlots lists the slots whose canonical value differs between two intents.
func changedSlots(old, cur *mark) []string {
	if old == nil {
		return sortedSlots(cur)
	}
	var ks []string
	for _, k := range sortedSlots(cur) {
		if old.norm[k] != cur.norm[k] {
			ks = append(ks, k)
		}
	}
	for _, k := range sortedSlots(old) {
		if _, ok := cur.norm[k]; !ok {
			ks = append(ks, k)
		}
	}
	return ks
}

// adopted reports whether an act repeats a value that only a wrong-record
// answer supplied: its key, or a field value that differs from what the
// caller intends.
func (v *view) adopted(e *trace.Event, bad map[valueClass][]string) bool {
	if len(bad) == 0 {
		return false
	}
	switch d := e.Data.(type) {
	case *trace.AgentState:
		for k, s := range d.Slots {
			t := v.fieldKind(k)
			n := v.norm(t, s)
			if contains(bad[classOf(t, n)], n) {
				return true
			}
		}
	case *trace.AgentSpeech:
		// Recognized words naming the wrong record's values are no proof
		// the agent took them (trace.RecognizedText).
		if u := v.uttByStart[e.Seq]; u != nil && !u.f.recognized {
			return v.namesAny(u, bad)
		}
	}
	return false
}

// badValues lists the values of a wrong record the caller never asked for.
func (v *view) badValues(r *request) map[valueClass][]string {
	if r.wrong == nil {
		return nil
	}
	intent := map[string]bool{}
	if v.final != nil {
		for _, s := range v.final.norm {
			intent[s] = true
		}
	}
	out := map[valueClass][]string{}
	add := func(t, s string) {
		n := v.norm(t, s)
		if c := classOf(t, n); c != classNone && n != "" && !intent[n] {
			out[c] = appendUniq(out[c], n)
		}
	}
	if r.spec.KeyArg != "" && r.wrong.Key != r.args[r.spec.KeyArg] {
		add(typeKey, r.wrong.Key)
	}
	mine := record(v.start.Records, r.wrong.Table, r.args[r.spec.KeyArg])
	for _, f := range trace.SortedKeys(r.wrong.Fields) {
		if mine != nil && mine.Fields[f] == r.wrong.Fields[f] {
			continue
		}
		add(v.fieldKind(f), r.wrong.Fields[f])
	}
	return out
}
