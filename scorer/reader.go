package scorer

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/callproof/callproof/entity"
	"github.com/callproof/callproof/trace"
)

// claim is what an agent utterance says about the requested action.
type claim uint8

const (
	claimNone      claim = iota
	claimDone            // "I've moved booking 4471 to Wednesday", "Your table is booked"
	claimNotDone         // "Nothing was sent", "I couldn't reschedule that"
	claimRestored        // "I've put it back to Tuesday": a compensation, the net effect is none
	claimUnsure          // "I can't confirm whether it went through": the agent says it does not know
	claimUndecided       // the reader cannot tell what was claimed (conflicting or hedged)
)

var claimNames = [...]string{"no claim", "done", "not-done", "restored", "unsure", "undecided"}

func (c claim) String() string { return claimNames[c] }

// facts is what the reader takes from one utterance.
type facts struct {
	named   valueSet // every value named, current or prior
	claimed valueSet // values named inside done clauses
	plan    bool     // announces what the agent is doing or will do ("updating", "I'll move")
	text    string   // the whole utterance, in textForm
	ctext   string   // the done and restored clauses, in textForm
	claim   claim
	why     string // claimUndecided: what could not be decided
	wait    bool   // "one moment", "let me check"...
	ask     bool   // the utterance asks the caller something
	already bool   // a done clause reports a past fact: "that had already gone through"
	hedged  bool   // a clause is a hedged done-claim: "it should go through", "that probably went through"
	// recognized: the words were transcribed from audio by a recognizer
	// (trace.RecognizedText), so a value in them that differs from the
	// record is no proof of a mismatch.
	recognized bool
	// cancelClaim is the utterance's claim when the caller asked for a
	// cancel (view.readCancels): a plain "that's cancelled" is then done
	// and "it isn't cancelled" not done. cancelVals and cancelText are the
	// values and text of its done clauses.
	cancelClaim claim
	cancelVals  valueSet
	cancelText  string
}

// values lists the values of a class the utterance names as current.
func (f *facts) values(c valueClass) []string { return f.named.cur[c] }

// mentions reports whether the utterance names a value (class c,
// canonical form) as current; claimedOnly looks only inside claims.
func (f *facts) mentions(c valueClass, norm string, claimedOnly bool) bool {
	vs, text := f.named, f.text
	if claimedOnly {
		vs, text = f.claimed, f.ctext
	}
	if c == classText {
		w := textForm(norm)
		return w != "" && namesPhrase(text, w)
	}
	for _, x := range vs.cur[c] {
		if sameHeard(c, x, norm) {
			return true
		}
	}
	if c == classID || c == classAmount {
		for _, p := range vs.pairs {
			code, whole, cents := pairReadings(p)
			if c == classID && sameHeard(c, code, norm) || c == classAmount && (sameHeard(c, whole, norm) || sameHeard(c, cents, norm)) {
				return true
			}
		}
	}
	return false
}

// lexicon is what a call's tool catalogue lets its agent claim: the past
// forms of every consequential tool's verbs and their synonyms, and the
// base forms that, negated, deny the action. The effect families are
// shared read-only tables; only the verbs a catalogue adds are its own.
type lexicon struct {
	fams     [3]bool         // effect families in use: update, create, delete
	done     map[string]bool // past forms of name and description verbs
	base     map[string]bool // base forms of name and description verbs
	cancel   bool            // the catalogue has a cancel or delete action
	nouns    map[string]bool // record nouns: "booking", "order"
	bareTime bool            // some argument is a time: "at 8" is a time
	ref      entity.Ref      // the call's date (callRef): relative dates resolve against it
}

// verbFamily is one effect's verbs with their forms, computed once.
type verbFamily struct{ base, past map[string]bool }

func newFamily(verbs []string) verbFamily {
	f := verbFamily{base: map[string]bool{}, past: map[string]bool{}}
	for _, w := range verbs {
		f.base[w] = true
		for _, p := range pastForms(w) {
			f.past[p] = true
		}
	}
	return f
}

// families are read-only after package initialisation: update, create, delete.
var families = [3]verbFamily{newFamily(updateVerbs), newFamily(createVerbs), newFamily(deleteVerbs)}

// isDone reports a past form that claims an effect of this catalogue.
func (lx *lexicon) isDone(w string) bool {
	if lx.done[w] {
		return true
	}
	for i, on := range lx.fams {
		if on && families[i].past[w] {
			return true
		}
	}
	return false
}

// isBase reports a base form of one of this catalogue's verbs.
func (lx *lexicon) isBase(w string) bool {
	if lx.base[w] {
		return true
	}
	for i, on := range lx.fams {
		if on && families[i].base[w] {
			return true
		}
	}
	return false
}

// Verb families by effect. A catalogue's consequential tools bring in the
// family of their effect, their own name's verb and any family verb their
// description uses.
var (
	updateVerbs = []string{"update", "change", "move", "reschedule", "set", "modify", "adjust", "amend",
		"switch", "edit", "correct", "fix", "put", "apply", "save", "shift", "push", "bump", "upgrade",
		"downgrade", "increase", "reduce", "decrease", "raise", "lower", "extend", "rename", "reassign",
		"transfer", "make", "rebook", "replace"}
	createVerbs = []string{"create", "book", "place", "add", "make", "reserve", "schedule", "submit",
		"send", "issue", "open", "register", "log", "file", "arrange", "order", "refund", "ship", "charge",
		"pay", "process", "request", "start", "dispatch", "credit", "return", "reimburse"}
	deleteVerbs = []string{"cancel", "delete", "remove", "void", "drop", "terminate", "revoke"}
	// Past forms that are not verb+ed.
	irregular = map[string][]string{"set": {"set"}, "put": {"put"}, "make": {"made"}, "send": {"sent"},
		"pay": {"paid"}, "take": {"took", "taken"}, "get": {"got", "gotten"}, "give": {"gave", "given"},
		"hold": {"held"}, "write": {"wrote", "written"}, "cut": {"cut"}, "bring": {"brought"},
		"keep": {"kept"}, "leave": {"left"}, "do": {"did", "done"}, "cancel": {"cancelled", "canceled"},
		"refer": {"referred"}, "find": {"found"}, "buy": {"bought"}, "reset": {"reset"}}
	// Forms that are also present tense: a claim only with an auxiliary.
	sameForm = map[string]bool{"set": true, "put": true, "cut": true, "reset": true}
	// Words that claim completion on their own.
	doneWords   = []string{"done", "complete", "completed", "processed", "confirmed", "finished", "succeeded", "successful", "successfully"}
	donePhrases = []string{"all set", "went through", "gone through", "taken care of", "is now", "are now",
		"now has", "now have", "now shows", "you're booked", "you are booked", "is confirmed", "has been", "have been",
		// a record's new state told in the present: "it now stands on Wednesday", "now goes out for $75"
		"now stands", "now goes", "now arrives", "now falls", "now lands", "now reads",
		// a state of affairs the action in force brought about: "your payment is
		// on its way", "you're down for Tuesday", "it'll go out tomorrow"
		"on its way", "on their way", "you're down for", "you are down for", "you're all down for",
		"will go out", "it'll go out", "that'll go out", "will now go out", "is going out", "it's going out"}
	notDonePhrases = []string{"nothing was", "nothing has", "nothing got", "nothing is", "nothing's", "nothing went",
		"nothing changed", "no change", "no changes", "unchanged", "as it was", "left it as", "no action"}
	restorePhrases = []string{"restored", "reverted", "undid", "undone", "rolled back", "back to how it was",
		"back the way it was", "back as it was", "reversed"}
	restoreBases  = map[string]bool{"undo": true, "revert": true, "restore": true, "reverse": true}
	unsurePhrases = []string{"can't confirm", "cannot confirm", "couldn't confirm", "unable to confirm",
		"not able to confirm", "can't verify", "cannot verify", "couldn't verify", "not sure", "don't know",
		"do not know", "not certain", "unclear", "can't tell", "cannot tell", "may have", "might have",
		"may not have", "might not have", "no way to know", "can't see whether", "can't see if"}
	waitWords   = []string{"pending", "processing", "checking", "verifying", "looking"}
	waitPhrases = []string{"in progress", "one moment", "let me check", "let me verify", "hold on",
		"bear with me", "just a moment", "give me a moment", "give me a second", "just a second", "working on it"}
	negations = map[string]bool{"not": true, "never": true, "no": true, "nothing": true, "none": true,
		"cannot": true, "unable": true, "failed": true, "fail": true, "cant": true, "wont": true,
		"didnt": true, "dont": true, "couldnt": true, "havent": true, "hasnt": true, "wasnt": true, "isnt": true}
	notNegations = []string{"no problem", "no worries", "no trouble", "not only", "no longer", "nothing else"}
	// Words before a past form that make it future or hypothetical.
	modals = map[string]bool{"will": true, "would": true, "shall": true, "can": true, "could": true,
		"going": true, "want": true, "like": true, "need": true, "to": false, "i'll": true, "we'll": true,
		"should": true, "may": true, "might": true, "must": true}
	hedges = map[string]bool{"should": true, "may": true, "might": true, "probably": true, "maybe": true}
	// State phrases that claim nothing unhedged but are a hedged
	// done-claim after a hedge: "it should go through", "it should go out".
	hedgedOnly = []string{"go through", "go out", "be on its way", "be there", "be fine", "be all set", "be done"}
	auxiliares = map[string]bool{"have": true, "has": true, "had": true, "i've": true, "we've": true,
		"is": true, "are": true, "was": true, "were": true, "been": true, "be": true, "it's": true,
		"all": true, "now": true, "you're": true, "that's": true, "got": true}
	// Nouns that name the pending action rather than a record ("cancelled the change").
	actionNouns = map[string]bool{"change": true, "changes": true, "update": true, "request": true,
		"that": true, "it": true, "this": true, "action": true, "edit": true, "reschedule": true}
)

// pastForms returns a verb's past and participle forms.
func pastForms(v string) []string {
	if f, ok := irregular[v]; ok {
		return f
	}
	n := len(v)
	if n == 0 {
		return nil
	}
	if strings.HasSuffix(v, "e") {
		return []string{v + "d"}
	}
	if n > 1 && v[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(v[n-2])) {
		return []string{v[:n-1] + "ied"}
	}
	if n >= 3 && n <= 4 && vowelGroups(v) == 1 && !strings.ContainsRune("aeiouwxy", rune(v[n-1])) &&
		strings.ContainsRune("aeiou", rune(v[n-2])) && !strings.ContainsRune("aeiou", rune(v[n-3])) {
		return []string{v + string(v[n-1]) + "ed"} // ship -> shipped, log -> logged; not open, edit
	}
	return []string{v + "ed"}
}

// vowelGroups counts runs of vowels: a one-syllable verb has one.
func vowelGroups(w string) int {
	n, in := 0, false
	for _, r := range w {
		v := strings.ContainsRune("aeiou", r)
		if v && !in {
			n++
		}
		in = v
	}
	return n
}

// nameWords splits a tool name ("reschedule_booking", "bookTable") into words.
func nameWords(name string) []string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' && i > 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.FieldsFunc(strings.ToLower(b.String()), func(r rune) bool { return r == '_' || r == '-' || r == ' ' || r == '.' })
}

func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

func isDeleteVerb(w string) bool { return contains(deleteVerbs, w) }

// newLexicon derives the claim vocabulary from a call's catalogue.
func newLexicon(tools []trace.ToolSpec) *lexicon {
	lx := &lexicon{done: map[string]bool{}, base: map[string]bool{}, nouns: map[string]bool{}}
	known := func(w string) bool {
		return families[0].base[w] || families[1].base[w] || families[2].base[w]
	}
	addVerb := func(w string) {
		if isDeleteVerb(w) {
			lx.cancel = true
		}
		lx.base[w] = true
		for _, f := range pastForms(w) {
			lx.done[f] = true
		}
	}
	for _, t := range tools {
		for _, a := range t.Args {
			if a.Type == typeTime {
				lx.bareTime = true
			}
		}
		if t.Table != "" {
			lx.nouns[singular(strings.ToLower(t.Table))] = true
			lx.nouns[strings.ToLower(t.Table)] = true
		}
		if !t.Consequential || t.Effect == trace.EffectRead {
			continue
		}
		if t.Effect == trace.EffectCreate {
			lx.fams[1] = true
		} else if t.Effect == trace.EffectDelete || t.Effect == trace.EffectCancel {
			lx.fams[2], lx.cancel = true, true
		} else {
			lx.fams[0] = true
		}
		words := nameWords(t.Name)
		if len(words) > 0 && !lx.nouns[words[0]] {
			addVerb(words[0])
		}
		if len(words) > 1 && known(words[len(words)-1]) {
			addVerb(words[len(words)-1])
		}
		for _, d := range tokens(t.Description) {
			for _, c := range []string{d, strings.TrimSuffix(d, "s"), strings.TrimSuffix(d, "es"), strings.TrimSuffix(d, "d"), strings.TrimSuffix(d, "ed")} {
				if known(c) {
					addVerb(c)
					break
				}
			}
		}
		if a := keyWordsOf(t.KeyArg); a != "" {
			lx.nouns[a] = true
		}
	}
	return lx
}

// keyWordsOf is the first word of a key argument's name ("booking_ref" -> "booking").
func keyWordsOf(arg string) string {
	if ws := nameWords(arg); len(ws) > 0 {
		return ws[0]
	}
	return ""
}

// read takes the claim, the values and the wait or question cues from one
// utterance (docs/SCORING.md, "Claim reader").
func (lx *lexicon) read(s string) facts {
	if rest, ok := strings.CutPrefix(s, trace.UnclearText); ok {
		// A transcript the recognizer could not vouch for decides nothing:
		// no claim, no values.
		return facts{text: textFormOf(tokens(rest)), claim: claimUndecided, why: "the words were transcribed from audio and the recognizer could not vouch for them"}
	}
	if rest, ok := strings.CutPrefix(s, trace.RecognizedText); ok {
		f := lx.read(rest)
		f.recognized = true
		return f
	}
	var f facts
	var claims []claim
	var ctexts, all, cancelTexts []string
	var cancelClaims []claim
	for _, cl := range clauses(s) {
		all = append(all, textFormOf(cl.ts))
		vs := lx.scanTokens(cl.ts)
		merge(&f.named, vs)
		c, why := lx.clauseClaim(cl)
		if cl.question {
			f.ask = true
			c = claimNone
		}
		if c == claimNone && lx.plans(cl.ts) {
			f.plan = true
		}
		if c != claimNone {
			alt := cancelReading(c, cl.ts)
			cancelClaims = append(cancelClaims, alt)
			if alt == claimDone {
				merge(&f.cancelVals, vs)
				cancelTexts = append(cancelTexts, textFormOf(cl.ts))
			}
		}
		if c == claimDone {
			if hasWord(cl.ts, []string{"already", "had"}) {
				f.already = true
			}
			merge(&f.claimed, vs)
			ctexts = append(ctexts, textFormOf(cl.ts))
		}
		if c != claimNone {
			claims = append(claims, c)
			if why != "" {
				f.why = why
			}
			f.hedged = f.hedged || why == whyHedged
		}
		j := " " + strings.Join(cl.ts, " ") + " "
		if hasWord(cl.ts, waitWords) || hasPhrase(j, waitPhrases) {
			f.wait = true
		}
	}
	f.text = strings.Join(all, " ")
	f.ctext = strings.Join(ctexts, " ")
	f.claim = combine(claims)
	f.cancelClaim = combine(cancelClaims)
	f.cancelText = strings.Join(cancelTexts, " ")
	if f.claim == claimUndecided && f.why == "" {
		f.why = "the utterance makes conflicting claims"
	}
	return f
}

func (lx *lexicon) scanTokens(ts []string) valueSet {
	var out valueSet
	sc := scanner{ts: ts, used: make([]bool, len(ts)), bareTime: lx.bareTime, keyWords: lx.nouns, ref: lx.ref, out: &out}
	sc.scan()
	return out
}

func merge(dst *valueSet, src valueSet) {
	for _, x := range src.unplaced {
		dst.unplaced = appendUniq(dst.unplaced, x)
	}
	for _, x := range src.pairs {
		dst.pairs = appendUniq(dst.pairs, x)
	}
	for c, xs := range src.cur {
		for _, x := range xs {
			dst.add(c, x, false)
		}
	}
	for c, xs := range src.prior {
		for _, x := range xs {
			dst.add(c, x, true)
		}
	}
}

// combine folds the clauses' claims: agreeing claims stand; a restore
// with a not-done is a restore (the net effect is none); an unsure clause
// beside a definite one, or a done beside a not-done, is undecided.
func combine(cs []claim) claim {
	out := claimNone
	for _, c := range cs {
		if out == claimNone || out == c {
			out = c
		} else if c == claimUndecided || out == claimUndecided {
			out = claimUndecided
		} else if out == claimRestored && c == claimNotDone || out == claimNotDone && c == claimRestored {
			out = claimRestored
		} else if out == claimRestored && c == claimDone || out == claimDone && c == claimRestored {
			// The later clause is the last word: "that had gone through;
			// I've reverted it" is a restore, "I've put 5590 back and
			// moved 5599 to Friday" claims the move.
			out = c
		} else {
			out = claimUndecided
		}
	}
	return out
}

type clause struct {
	ts       []string
	question bool
}

// clauses splits an utterance at sentence ends, semicolons, dashes and
// "but"/"however", so that "I couldn't move it, but nothing changed" is
// read one claim at a time.
func clauses(s string) []clause {
	var out []clause
	from := 0
	emit := func(to int, q bool) {
		ts := tokens(s[from:to])
		k := 0
		for i, t := range ts {
			if t == "but" || t == "however" || t == "although" || t == "though" {
				if i > k {
					out = append(out, clause{ts: ts[k:i], question: q})
				}
				k = i + 1
			}
		}
		if k < len(ts) {
			out = append(out, clause{ts: ts[k:], question: q})
		}
	}
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if r == '?' {
			emit(i, true)
			from = i + n
		} else if r == '!' || r == ';' || r == '—' || r == '–' ||
			r == '.' && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n') {
			emit(i, false)
			from = i + n
		}
		i += n
	}
	emit(len(s), false)
	return out
}

// clauseClaim reads one clause's claim about the action.
func (lx *lexicon) clauseClaim(cl clause) (claim, string) {
	ts := cl.ts
	j := " " + strings.Join(ts, " ") + " "
	if strings.Contains(j, " no") {
		for _, p := range notNegations {
			j = strings.ReplaceAll(j, " "+p+" ", " ")
		}
	}
	ws := strings.Fields(j)
	if hasPhrase(j, unsurePhrases) {
		return claimUnsure, ""
	}
	neg := -1 // position of the first negation cue
	for i, w := range ws {
		if negations[w] || strings.HasSuffix(w, "n't") {
			neg = i
			break
		}
	}
	if i := lx.restoreAt(ws, j); i >= 0 {
		if neg >= 0 && neg < i {
			return claimUndecided, "the agent says it could not undo a change: what the backend holds was not claimed"
		}
		return claimRestored, ""
	}
	for i, w := range ws {
		if restoreBases[w] && neg >= 0 && neg < i {
			return claimUndecided, "the agent says it could not undo a change: what the backend holds was not claimed"
		}
	}
	if hasPhrase(j, notDonePhrases) {
		return claimNotDone, ""
	}
	for i, w := range ws {
		verb := lx.isDone(w) && !(sameForm[w] && !auxBefore(ws, i))
		cancel := w == "cancelled" || w == "canceled" || w == "cancel"
		if !verb && !cancel && !(neg >= 0 && lx.isBase(w)) {
			continue
		}
		if cancel && !lx.cancel {
			// No cancel action in the catalogue: cancelling means the
			// agent withdrew the pending action.
			if neg >= 0 && neg < i {
				return claimUndecided, "the agent says it did not cancel, and the catalogue has no cancel action"
			}
			return claimNotDone, ""
		}
		if cancel && !lx.cancelsRecord(ws, i) {
			if neg >= 0 && neg < i {
				return claimUndecided, "a denied cancellation of the request itself"
			}
			return claimNotDone, ""
		}
		if neg >= 0 && neg < i {
			return claimNotDone, ""
		}
		if !lx.isDone(w) && !cancel {
			continue // a base form without negation is a plan, not a claim
		}
		if hedged(ws, i) {
			return claimUndecided, whyHedged
		}
		if modalBefore(ws, i) || subordinate(ws, i) {
			continue
		}
		return claimDone, ""
	}
	if hasWord(ws, doneWords) || hasPhrase(j, donePhrases) {
		if neg >= 0 {
			return claimNotDone, ""
		}
		for i, w := range ws {
			if contains(doneWords, w) && hedged(ws, i) {
				return claimUndecided, whyHedged
			}
		}
		if hedgedPhrase(ws, donePhrases) {
			return claimUndecided, whyHedged
		}
		return claimDone, ""
	}
	if neg < 0 && hedgedPhrase(ws, hedgedOnly) {
		return claimUndecided, whyHedged // "it should go through shortly"
	}
	if neg >= 0 && (hasWord(ws, []string{"anything", "any"}) || ws[neg] == "failed" || ws[neg] == "unable") {
		return claimNotDone, ""
	}
	return claimNone, ""
}

// plans reports a statement of what the agent is doing or will do:
// "updating order 5590", "I'll move it", "let me book that".
func (lx *lexicon) plans(ws []string) bool {
	for i, w := range ws {
		if b, ok := strings.CutSuffix(w, "ing"); ok && (lx.isBase(b) || lx.isBase(b+"e") || len(b) > 2 && b[len(b)-1] == b[len(b)-2] && lx.isBase(b[:len(b)-1])) {
			return true
		}
		if lx.isBase(w) && i > 0 && (modals[ws[i-1]] || ws[i-1] == "me" || ws[i-1] == "to") {
			return true
		}
	}
	return false
}

// restoreAt finds a restore: a restore phrase, or a done verb followed
// within three words by "back" ("changed it back", "put booking 4471 back").
func (lx *lexicon) restoreAt(ws []string, j string) int {
	if !strings.Contains(j, "back") && !strings.Contains(j, "re") && !strings.Contains(j, "und") {
		return -1
	}
	for _, p := range restorePhrases {
		if k := strings.Index(j, " "+p+" "); k >= 0 {
			return len(strings.Fields(j[:k]))
		}
	}
	for i, w := range ws {
		if !lx.isDone(w) && !lx.isBase(w) {
			continue
		}
		// four words, a code said one character at a time counting as one
		// ("put booking four four seven one back")
		for k, words := i+1, 0; k < len(ws) && words < 4; k, words = k+1, words+1 {
			if ws[k] == "back" {
				return i
			}
			if c, n := entity.SpokenCodeAt(ws, k); n > 1 && strings.ContainsAny(c, "0123456789") {
				k += n - 1
			}
		}
	}
	return -1
}

// cancelsRecord: "booking 4471 has been cancelled", "I cancelled your
// reservation" name a record; "I cancelled that change" names the action.
func (lx *lexicon) cancelsRecord(ws []string, i int) bool {
	for k := max(0, i-4); k < len(ws) && k <= i+4; k++ {
		if k == i {
			continue
		}
		if actionNouns[ws[k]] && k > i {
			return false
		}
		if lx.nouns[ws[k]] || lx.nouns[singular(ws[k])] || hasDigit(ws[k]) {
			return true
		}
	}
	return false
}

func auxBefore(ws []string, i int) bool {
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		if auxiliares[ws[k]] {
			return true
		}
	}
	return false
}

func modalBefore(ws []string, i int) bool {
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		if modals[ws[k]] {
			return true
		}
		if ws[k] == "to" && k == i-2 && ws[i-1] == "be" {
			return true // "to be moved"
		}
	}
	return false
}

// subordinate reports a verb in a "while …"/"once …"/"as soon as …"
// clause: "one moment while I put that in" describes, it does not claim.
func subordinate(ws []string, i int) bool {
	for k := i - 1; k >= 0 && k >= i-4; k-- {
		switch ws[k] {
		case "while", "once", "until", "if":
			return true
		}
	}
	return false
}

// whyHedged is the reason a hedged done-claim gives.
const whyHedged = "a hedged claim (\"should\", \"may\", \"probably\")"

// hedgedPhrase reports a phrase of ps (whole words) with a hedge within
// the three words before it.
func hedgedPhrase(ws []string, ps []string) bool {
	for _, p := range ps {
		pw := strings.Fields(p)
		for i := 0; i+len(pw) <= len(ws); i++ {
			if slices.Equal(ws[i:i+len(pw)], pw) && hedged(ws, i) {
				return true
			}
		}
	}
	return false
}

func hedged(ws []string, i int) bool {
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		if hedges[ws[k]] {
			return true
		}
	}
	return false
}

func hasWord(ts []string, words []string) bool {
	for _, t := range ts {
		for _, w := range words {
			if t == w {
				return true
			}
		}
	}
	return false
}

// hasPhrase reports whether joined (space-padded words) holds one of the
// phrases as whole words.
func hasPhrase(joined string, phrases []string) bool {
	for _, p := range phrases {
		if i := strings.Index(joined, p); i > 0 && joined[i-1] == ' ' && i+len(p) < len(joined) && joined[i+len(p)] == ' ' {
			return true
		} else if i > 0 && strings.Contains(joined[i+1:], " "+p+" ") {
			return true
		}
	}
	return false
}

func appendUniq(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}
