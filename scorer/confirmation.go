package scorer

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/trace"
)

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
		if hang := v.hungUpOnAnswer(); hang > 0 {
			res.Verdict = Unknown
			res.Findings = append(res.Findings, v.find(InsufficientEvidence+": the caller hung up within the yield bound of the agent's last tool answer, before it could speak", hang))
			return res
		}
		if w := v.cutByHangup(); w != nil {
			res.Verdict = Unknown
			res.Findings = append(res.Findings, v.find(InsufficientEvidence+": the caller hung up while the agent was still saying "+quote(w.text), w.start))
			return res
		}
		if w := v.unreadStatement(); w != nil {
			res.Verdict = Unknown
			res.Findings = append(res.Findings, v.find(InsufficientEvidence+": the agent's last words name the request's values but the reader finds no claim in them", w.start))
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
	// A value a recognizer heard that the backend does not hold is a
	// doubt, not a failure (trace.RecognizedText).
	var doubts []Finding
	valueFail := fail
	if u.f.recognized {
		valueFail = func(f Finding) { doubts = append(doubts, f) }
	}
	res.Verdict = Pass
	unchanged := v.unchanged
	c := u.f.claim
	if c == claimUndecided {
		res.Verdict = Unknown
		res.Findings = append(res.Findings, v.find(InsufficientEvidence+": "+u.f.why, u.start))
		return res
	}
	if c == claimUnsure {
		if r := v.definiteAnswer(u.start); r != nil {
			fail(v.find("agent said it could not confirm the outcome although it had a definite answer", r.responded, u.start))
		} else {
			res.Findings = append(res.Findings, v.find("agent said it could not confirm the outcome, and its last answer was indeed indeterminate", u.start))
		}
	} else if !v.final.in.Execute && c == claimDone && v.undoSent() && reportsUndo(u) {
		// "I've cancelled that booking": the compensation reported, judged
		// as a restored claim (docs/SCORING.md, "Undoing a create").
		if !unchanged {
			fail(v.find("agent said it undid the change but the backend still holds it", u.start, v.snapSeq))
		} else {
			v.checkNamed(u, u.f.named, append(slices.Clone(v.start.Records), v.undone...), valueFail)
		}
	} else if !v.final.in.Execute && c == claimDone && unchanged {
		fail(v.find("caller withdrew the action and nothing changed, but the agent's confirmation says it was done", u.start, v.finalSeq))
	} else if !v.final.in.Execute && c == claimDone {
		// The write landed before it could be stopped and the agent says
		// so: true if it names what the backend holds (axis 5 judges that
		// it was left in place).
		v.checkNamed(u, u.f.claimed, v.net, valueFail)
	} else if (c == claimNotDone || c == claimRestored) && !unchanged {
		fail(v.find("agent said nothing was changed (or that it put things back) but the backend changed", u.start, v.snapSeq))
	} else if c == claimRestored {
		v.checkNamed(u, u.f.named, append(slices.Clone(v.start.Records), v.undone...), valueFail)
	} else if c == claimDone {
		v.checkDone(u, fail, valueFail)
	}
	if res.Verdict == Pass && c == claimDone && len(u.f.claimed.unplaced) > 0 && len(v.heldValues(v.snap.Records)[classDate]) > 0 {
		// "I've moved it to tomorrow" with no call date on record: the
		// date it names cannot be placed (docs/SCORING.md, "Every value
		// accounted for").
		res.Verdict = Unknown
		res.Findings = append(res.Findings, v.find(InsufficientEvidence+": confirmation names "+quote(u.f.claimed.unplaced[0])+", a relative date, and the history has no call date to resolve it", u.start, v.snapSeq))
		return res
	}
	if res.Verdict == Pass && len(doubts) > 0 {
		res.Verdict = Unknown
		for _, d := range doubts {
			d.Text = InsufficientEvidence + ": recognized from the agent's audio: " + d.Text + " (a recognizer can mishear one value as another)"
			res.Findings = append(res.Findings, d)
		}
		return res
	}
	if res.Verdict == Pass && len(res.Findings) == 0 {
		res.Findings = append(res.Findings, v.find("the "+u.f.claim.String()+" confirmation matches the backend", u.start, v.snapSeq))
	}
	return res
}

// InsufficientEvidence prefixes the findings of an axis left unknown
// because the evidence cannot decide it (seed 002's contract).
const InsufficientEvidence = "insufficient_evidence"

// unreadStatement is a completed statement after the caller's last change
// that names a value of the request but in which the reader found no
// claim, no plan, no wait and no question: the agent may have claimed
// something in words the reader does not know.
func (v *view) unreadStatement() *utterance {
	for i := len(v.utts) - 1; i >= 0; i-- {
		u := v.utts[i]
		if u.start <= v.finalSeq {
			break
		}
		if !u.completed() || u.f.plan || u.f.wait || u.f.ask {
			continue
		}
		for k, val := range v.final.norm {
			c := classOf(v.kindOf(v.final.in.Action, k), val)
			if c != classNone && u.f.mentions(c, val, false) {
				return u
			}
		}
	}
	return nil
}

// definiteAnswer is the agent's last consequential request answered
// cleanly or with a plain error before seq, when that answer told the
// agent how the write went; nil when the outcome was indeterminate to it
// (no answer yet, pending, timed out, dropped, empty).
func (v *view) definiteAnswer(seq int) *request {
	var last *request
	for _, r := range v.reqs {
		if r.consequential() && r.recv > 0 && r.recv < seq && r.dupOf == "" {
			last = r
		}
	}
	if last == nil || last.responded == 0 || last.responded > seq {
		return nil
	}
	switch last.problem {
	case "pending", "timeout", "dropped", "empty":
		return nil
	}
	return last
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

// checkDone: a done-claim must name only values the backend holds for
// the intended record, the intended change must be in the snapshot, and
// the claim must start after the write it reports committed.
func (v *view) checkDone(u *utterance, fail, valueFail func(Finding)) {
	held := v.held
	v.checkNamed(u, u.f.claimed, v.withDeleted(held), valueFail)
	missing := false
	for _, k := range v.targets() {
		if !v.heldAsWanted(record(v.want, k[0], k[1]), record(held, k[0], k[1])) {
			missing = true
			fail(v.find("agent confirmed a change that is not in the backend ("+k[0]+"/"+k[1]+")", u.start, v.snapSeq))
		}
	}
	if missing || len(v.targets()) == 0 {
		return // already failed, or the caller asked for what the records held
	}
	for _, c := range v.commits() {
		if matches(c.r.tool, c.r.args, v.final) {
			if c.seq > u.start {
				fail(v.find("confirmation started before the write it reports committed", u.start, c.seq))
			}
			return
		}
	}
	fail(v.find("agent confirmed a change that no write of the requested values made", u.start, v.snapSeq))
}

// checkNamed: every value the claim names must be one that the given
// records (the snapshot for a done-claim, the starting records for a
// restore) hold for the records the caller's request is about. A class
// the request has no value of is not judged; free text is judged on the
// values the call ever proposed for it.
func (v *view) checkNamed(u *utterance, named valueSet, rs []trace.Record, fail func(Finding)) {
	held := v.heldValues(rs)
	for _, c := range []valueClass{classID, classDate, classTime, classAmount, classCount} {
		ok := held[c]
		if len(ok) == 0 {
			continue
		}
		for _, x := range named.cur[c] {
			if !heardAny(c, x, ok) {
				fail(v.find("confirmation names "+displayValue(c, x)+", which the backend does not hold for the intended record", u.start, v.snapSeq))
			}
		}
	}
	// A pair in words ("forty-four seventy-one", "two fifteen") names the
	// code or the amount the record holds, or it is a mismatch.
	if len(held[classID]) > 0 || len(held[classAmount]) > 0 {
		for _, p := range named.pairs {
			code, whole, cents := pairReadings(p)
			if !heardAny(classID, code, held[classID]) && !heardAny(classAmount, whole, held[classAmount]) && !heardAny(classAmount, cents, held[classAmount]) {
				fail(v.find("confirmation names "+code+" (or "+cents+"), which the backend does not hold for the intended record", u.start, v.snapSeq))
			}
		}
	}
	text := u.f.ctext
	if u.f.claim == claimRestored {
		text = u.f.text
	}
	// Free text is judged field by field: a name proposed for one field
	// is wrong only when that field's held value is not named too.
	for _, f := range v.textFields() {
		heldF := v.heldText(rs, f)
		cands := v.textCandidates(f)
		for _, x := range v.rivals(f, heldF) {
			cands = appendUniq(cands, x)
		}
		for _, cand := range cands {
			if contains(heldF, cand) {
				continue
			}
			w := textForm(cand)
			if w != "" && namesPhrase(text, w) && !anyMentioned(text, heldF) {
				fail(v.find("confirmation names \""+cand+"\", which the backend does not hold for the intended record", u.start, v.snapSeq))
			}
		}
	}
}

// heldText lists the canonical values the records hold for field f (the
// key, for the key argument) on the records the final intent is about.
func (v *view) heldText(rs []trace.Record, f string) []string {
	spec, ok := v.spec(v.final.in.Action)
	if !ok {
		return nil
	}
	keys := append([][2]string{}, v.targets()...)
	if spec.KeyArg != "" {
		if k := [2]string{spec.Table, v.final.norm[spec.KeyArg]}; !contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var out []string
	for _, k := range keys {
		g := record(rs, k[0], k[1])
		if g == nil {
			continue
		}
		if f == spec.KeyArg {
			out = appendUniq(out, v.norm(typeKey, g.Key))
		} else if x, ok := g.Fields[f]; ok {
			out = appendUniq(out, v.norm(v.fieldKind(f), x))
		}
	}
	return out
}

func heardAny(c valueClass, named string, held []string) bool {
	for _, h := range held {
		if sameHeard(c, named, h) {
			return true
		}
	}
	return false
}

func anyMentioned(text string, vals []string) bool {
	for _, x := range vals {
		if w := textForm(x); w != "" && namesPhrase(text, w) {
			return true
		}
	}
	return false
}

func displayValue(c valueClass, x string) string {
	if strings.Contains(x, "|") {
		return strings.ReplaceAll(x, "|", " or ") // "two fifty dollars": 250 or 2.5
	}
	if d, ok := strings.CutPrefix(x, "dom:"); ok {
		return "the " + d + ordinalSuffix(d)
	}
	if w, ok := strings.CutPrefix(x, "wd:"); ok {
		n, _ := strconv.Atoi(w)
		return time.Weekday(n).String()
	}
	return x
}

// ordinalSuffix is "st", "nd", "rd" or "th" for a day of the month.
func ordinalSuffix(d string) string {
	switch d {
	case "1", "21", "31":
		return "st"
	case "2", "22":
		return "nd"
	case "3", "23":
		return "rd"
	}
	return "th"
}

// heldValues lists, per value class, what the records hold (key and every
// field) for the records the caller's final intent is about: the records
// it changes, and the record its key names.
func (v *view) heldValues(rs []trace.Record) map[valueClass][]string {
	out := map[valueClass][]string{}
	spec, ok := v.spec(v.final.in.Action)
	if !ok {
		return out
	}
	add := func(t, s string) {
		n := v.norm(t, s)
		if c := rawClass(t, s, n); c != classNone {
			out[c] = appendUniq(out[c], n)
		}
	}
	keys := append([][2]string{}, v.targets()...)
	if spec.KeyArg != "" {
		if k := [2]string{spec.Table, v.final.norm[spec.KeyArg]}; !contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		g := record(rs, k[0], k[1])
		if g == nil {
			continue
		}
		if spec.KeyArg != "" {
			add(typeKey, g.Key)
		}
		for _, name := range trace.SortedKeys(g.Fields) {
			add(v.fieldKind(name), g.Fields[name])
		}
	}
	return out
}

// textCandidates are the free-text values the call proposed for text
// argument field: every intent version's slots and every request's
// arguments of that name.
func (v *view) textCandidates(field string) []string {
	var out []string
	add := func(tool, k, val string) {
		if k != field {
			return
		}
		if n := v.norm(v.kindOf(tool, k), val); classOf(v.kindOf(tool, k), n) == classText {
			out = appendUniq(out, n)
		}
	}
	for _, m := range v.marks {
		for k, val := range m.in.Slots {
			add(m.in.Action, k, val)
		}
	}
	for _, r := range v.reqs {
		for k, val := range r.args {
			add(r.tool, k, val)
		}
	}
	return out
}

// rivals are the values no one proposed that a text field could have held
// instead of held (docs/SCORING.md, "Every value accounted for"): the same
// field in any record, every value of a column (table and field, or
// table key) that holds one of held ("Joint Savings" is an account's
// nickname, so every account nickname competes with it), and the
// catalogue's enum for the field.
func (v *view) rivals(field string, held []string) []string {
	if len(held) == 0 {
		return nil
	}
	heldW := make(map[string]bool, len(held))
	for _, h := range held {
		heldW[textForm(h)] = true
	}
	type column struct{ table, field string } // field "" is the key
	var cols []column
	sets := [][]trace.Record{v.start.Records}
	if v.snap != nil {
		sets = append(sets, v.snap.Records)
	}
	for _, rs := range sets {
		for _, r := range rs {
			if heldW[textForm(r.Key)] && !slices.Contains(cols, column{r.Table, ""}) {
				cols = append(cols, column{r.Table, ""})
			}
			for k, x := range r.Fields {
				if c := (column{r.Table, k}); heldW[textForm(x)] && !slices.Contains(cols, c) {
					cols = append(cols, c)
				}
			}
		}
	}
	var out []string
	add := func(x string) {
		if n := v.norm(typeString, x); classOf(typeString, n) == classText && !heldW[textForm(n)] {
			out = appendUniq(out, n)
		}
	}
	for _, rs := range sets {
		for _, r := range rs {
			if x, ok := r.Fields[field]; ok {
				add(x)
			}
			for _, c := range cols {
				if c.table != r.Table {
					continue
				}
				if c.field == "" {
					add(r.Key)
				} else if x, ok := r.Fields[c.field]; ok {
					add(x)
				}
			}
		}
	}
	for _, t := range v.start.Tools {
		for _, a := range t.Args {
			if a.Name == field {
				for _, e := range a.Enum {
					add(e)
				}
			}
		}
	}
	return out
}

// textFields lists the argument names that carry free text somewhere in
// the call, in name order.
func (v *view) textFields() []string {
	seen := map[string]bool{}
	add := func(tool, k, val string) {
		if classOf(v.kindOf(tool, k), v.norm(v.kindOf(tool, k), val)) == classText {
			seen[k] = true
		}
	}
	for _, m := range v.marks {
		for k, val := range m.in.Slots {
			add(m.in.Action, k, val)
		}
	}
	for _, r := range v.reqs {
		for k, val := range r.args {
			add(r.tool, k, val)
		}
	}
	return trace.SortedKeys(seen)
}

// heldAsWanted: the record the intent targets is held with its intended
// fields, or, deleted by the intent (want nil), is gone.
func (v *view) heldAsWanted(want, got *trace.Record) bool {
	if want == nil {
		return got == nil
	}
	return got != nil && v.fieldsHeld(want, got)
}

// fieldsHeld reports whether got has every field of want with its value
// (got comes from v.held: typed fields are canonical).
func (v *view) fieldsHeld(want, got *trace.Record) bool {
	if want == nil {
		return true
	}
	for f, x := range want.Fields {
		if t := v.fieldType(f); t == typeDate || t == typeInteger || t == typeTime || t == typeNumber {
			x = v.norm(t, x)
		}
		if got.Fields[f] != x {
			return false
		}
	}
	return true
}

// cutByHangup is an utterance the agent began after the caller's last
// change and was still speaking when the caller hung up: whatever it was
// about to claim was never said.
func (v *view) cutByHangup() *utterance {
	hang := 0
	for i := range v.h.Events {
		if v.h.Events[i].Kind == trace.KindCallerHangup {
			hang = v.h.Events[i].Seq
			break
		}
	}
	if hang == 0 {
		return nil
	}
	for _, u := range v.utts {
		if u.start > v.finalSeq && u.start < hang && (u.end == 0 || u.end > hang) && (u.clear == 0 || u.clear > hang) {
			return u
		}
	}
	return nil
}

// hungUpOnAnswer returns the caller's hang-up when it came within the
// yield bound (the time a reply takes) after the agent's last consequential
// request was answered or closed: the agent had no chance to report the
// outcome. 0 otherwise.
func (v *view) hungUpOnAnswer() int {
	var hang *trace.Event
	for i := range v.h.Events {
		if v.h.Events[i].Kind == trace.KindCallerHangup {
			hang = &v.h.Events[i]
			break
		}
	}
	if hang == nil {
		return 0
	}
	last := 0
	for _, r := range v.reqs {
		if c := r.closed(); r.consequential() && c > last && c < hang.Seq {
			last = c
		}
	}
	if last == 0 || last <= v.finalSeq {
		return 0
	}
	for _, u := range v.utts {
		if u.start > last && u.start < hang.Seq {
			return 0 // it did speak
		}
	}
	if hang.At-v.ev(last).At <= v.yield {
		return hang.Seq
	}
	return 0
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
