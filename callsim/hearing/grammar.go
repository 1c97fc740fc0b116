package hearing

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/callproof/callproof/trace"
)

// Grammar is what one call's agent can be heard to say: a loop over a
// free vocabulary and whole-phrase entities (codes, dates, times, amounts,
// counts, field values). Build it with BuildGrammar; it is read-only
// afterwards and safe to share.
type Grammar struct {
	words    []string          // free vocabulary, sorted; no number words except "one"
	cues     map[string]string // words a claim turns on → their kind (see claimCues)
	codes    []string          // record codes, canonical (lower-case letters and digits)
	codeLens []int             // lengths of all-digit codes: the generic code rule's lengths
	values   [][]string        // text field values and enum values, as word phrases
	noKnown  bool              // leave the records' codes out as whole phrases (measurement)
}

// BuildGrammar derives a grammar from what the call can talk about: its
// tool catalogue (names, descriptions, argument names, enum values, and
// the verb families of their effects), its starting records (keys and
// field values) and a fixed vocabulary of confirmation and refusal words.
func BuildGrammar(tools []trace.ToolSpec, records []trace.Record) *Grammar {
	g := &Grammar{cues: map[string]string{}}
	words := map[string]bool{}
	addVerb := func(v string) {
		for _, f := range verbForms(v) {
			words[f] = true
			switch {
			case f == v:
				g.cues[f] = "verb"
			case strings.HasSuffix(f, "ing"):
				g.cues[f] = "plan"
			default:
				g.cues[f] = "done"
			}
		}
	}
	addWords := func(s string) {
		for _, w := range wordsOf(s) {
			words[w] = true
		}
	}
	for _, w := range baseVocabulary() {
		words[w] = true
	}
	for _, v := range restoreVerbs() {
		addVerb(v)
	}
	effects := map[string]bool{}
	for _, t := range tools {
		addWords(splitName(t.Name))
		addWords(t.Description)
		addWords(splitName(t.Table))
		if t.Consequential && t.Effect != trace.EffectRead {
			effects[string(t.Effect)] = true
		}
		for _, a := range t.Args {
			addWords(splitName(a.Name))
			for _, e := range a.Enum {
				g.addValue(e)
			}
		}
		for _, w := range wordsOf(splitName(t.Name)) {
			if w == "cancel" || w == "delete" || w == "remove" {
				effects["delete"] = true
			}
		}
	}
	for e := range effects {
		for _, v := range effectVerbs(e) {
			addVerb(v)
		}
	}
	for _, t := range tools {
		// The tool's own verb ("reschedule_booking", "refund_deposit"):
		// forms the dictionary lacks ("finded") are left out when rendered.
		if ws := wordsOf(splitName(t.Name)); len(ws) > 0 && t.Consequential && t.Effect != trace.EffectRead {
			addVerb(ws[0])
		}
	}
	for kind, ws := range claimCues() { // over the verb forms: "undid" restores
		for _, w := range ws {
			g.cues[w] = kind
		}
	}
	lens := map[int]bool{}
	for _, r := range records {
		g.addCode(r.Key, lens)
		for _, v := range r.Fields {
			switch shapeOf(v) {
			case shapeCode:
				g.addCode(v, lens)
			case shapeText:
				g.addValue(v)
			}
		}
	}
	if len(lens) == 0 {
		lens[4] = true
	}
	for n := range lens {
		g.codeLens = append(g.codeLens, n)
	}
	sort.Ints(g.codeLens)
	sort.Strings(g.codes)
	nums := numberWords()
	for w := range words {
		if nums[w] && w != "one" {
			delete(words, w) // numbers live in entity rules only
		}
	}
	for w := range words {
		g.words = append(g.words, w)
	}
	// A one-word value the free vocabulary has ("cancelled") is just a word.
	g.values = slices.DeleteFunc(g.values, func(v []string) bool { return len(v) == 1 && words[v[0]] })
	sort.Strings(g.words)
	sort.Slice(g.values, func(i, j int) bool { return strings.Join(g.values[i], " ") < strings.Join(g.values[j], " ") })
	return g
}

func (g *Grammar) addCode(s string, lens map[int]bool) {
	c := codeForm(s)
	if c == "" || !strings.ContainsAny(c, "0123456789") || slices.Contains(g.codes, c) {
		return
	}
	g.codes = append(g.codes, c)
	if strings.Trim(c, "0123456789") == "" {
		lens[len(c)] = true
	}
}

func (g *Grammar) addValue(s string) {
	ws := wordsOf(s)
	if len(ws) == 0 {
		return
	}
	for _, v := range g.values {
		if slices.Equal(v, ws) {
			return
		}
	}
	g.values = append(g.values, ws)
}

// spellable reports a word of the records' text values (a name), which
// may be spelled by letter-to-sound rules when the dictionary lacks it.
func (g *Grammar) spellable(w string) bool {
	for _, v := range g.values {
		if slices.Contains(v, w) {
			return true
		}
	}
	return false
}

// Codes lists the record codes the grammar knows, canonical.
func (g *Grammar) Codes() []string { return slices.Clone(g.codes) }

// JSGF renders the grammar for pocketsphinx with every word it names.
func (g *Grammar) JSGF() string { return g.render(func(string) bool { return true }) }

// render writes the JSGF text, leaving out alternatives that use a word
// ok rejects (words the decoder cannot pronounce).
func (g *Grammar) render(ok func(string) bool) string {
	var b strings.Builder
	b.WriteString("#JSGF V1.0;\ngrammar callproof;\n\n")
	rule := func(name string, alts []string) {
		var kept []string
		for _, a := range alts {
			if allOK(a, ok) {
				kept = append(kept, a)
			}
		}
		if len(kept) == 0 {
			kept = []string{"<VOID>"}
		}
		fmt.Fprintf(&b, "<%s> = %s;\n", name, strings.Join(kept, " | "))
	}
	b.WriteString("public <utterance> = <item>+;\n")
	items := []string{"<word>", "<code>", "<date>", "<time>", "<amount>", "<count>"}
	var vals []string
	for _, v := range g.values {
		if v := strings.Join(v, " "); allOK(v, ok) {
			vals = append(vals, v)
		}
	}
	if len(vals) > 0 { // pocketsphinx 0.8 decodes nothing through a <VOID> alternative
		items = append(items, "<value>")
	}
	rule("item", items)
	rule("word", g.words)

	// Numbers.
	var digits, d1, teens, tens []string
	for d := byte('0'); d <= '9'; d++ {
		digits = append(digits, digitWord(d))
		if d > '0' {
			d1 = append(d1, digitWord(d))
		}
	}
	digits = append(digits, "oh")
	for n := 10; n < 20; n++ {
		teens = append(teens, unitWord(n))
	}
	for n := 2; n < 10; n++ {
		tens = append(tens, tensWord(n))
	}
	rule("digit", digits)
	rule("d1", d1)
	rule("teen", teens)
	rule("tens", tens)
	rule("n99", []string{"<d1>", "<teen>", "<tens> [<d1>]"})
	rule("n999", []string{"<n99>", "<d1> hundred [[and] <n99>]"})
	rule("n9999", []string{"<n999>", "<d1> thousand [<n999>]"})

	// Codes: the records' own codes spelled digit by digit as whole
	// phrases, any digit string of a record code's length (so a wrong code
	// is still heard as said), and any cardinal from a thousand ("four
	// thousand four hundred seventy one", as flite reads "4471"). The
	// records' codes are not offered as cardinals: that pulled 5 of 14
	// wrong codes onto a record's (kal16), while spelled ones pulled none
	// and doubled code accuracy (docs/PERFORMANCE.md).
	var known []string
	for _, c := range g.codes {
		if g.noKnown {
			break
		}
		known = append(known, strings.Join(spelledCode(c), " "))
	}
	codeAlts := []string{"<d1> thousand [<n999>]"}
	if len(known) > 0 {
		rule("known_code", dedupe(known))
		codeAlts = append(codeAlts, "<known_code>")
	}
	for _, n := range g.codeLens {
		codeAlts = append(codeAlts, strings.TrimSpace(strings.Repeat("<digit> ", n)))
	}
	rule("code", codeAlts)

	// Dates: "wednesday december ninth", "december nine", "the ninth of december".
	rule("weekday", weekdayNames())
	rule("month", monthNames())
	var ords []string
	for n := 1; n <= 31; n++ {
		ords = append(ords, strings.Join(ordinalWords(n), " "))
	}
	rule("dayord", ords)
	// Days said as cardinals ("december nine") stop at nineteen: "thirty"
	// took the place of "third" in our trials, and speech engines say
	// later days as ordinals.
	rule("daynum", []string{"<d1>", "<teen>"})
	// Relative days and a day of the month alone ("tomorrow", "next
	// tuesday", "tuesday the eighth", "on the eighth"): the claim reader
	// resolves them against the call's date.
	rule("relday", []string{"today", "tomorrow", "the day after tomorrow"})
	rule("date", []string{"<weekday>", "next <weekday>", "<relday>", "[<weekday>] <month> (<dayord> | <daynum>)",
		"[<weekday>] the <dayord> [of <month>]"})

	// Times: "seven thirty p.m.", "seven o'clock", "half past seven", "noon".
	var hours []string
	for n := 1; n <= 12; n++ {
		hours = append(hours, unitWord(n))
	}
	rule("hour", hours)
	rule("minute", []string{"oh <d1>", "<teen>", "(twenty | thirty | forty | fifty) [<d1>]"})
	rule("ampm", []string{"a.m.", "p.m.", "in the morning", "in the afternoon", "in the evening", "tonight"})
	rule("time", []string{"<hour> [<minute>] <ampm>", "<hour> o'clock [<ampm>]", "(half past | quarter past | quarter to) <hour> [<ampm>]",
		"(at | by | until) <hour> [<minute>]", "noon", "midnight"})

	// Amounts: "forty five dollars fifty cents".
	rule("amount", []string{"<n9999> (dollars | dollar) [[and] <n99> (cents | cent)]", "<n99> (cents | cent)"})

	// Counts: "for four", "quantity four", "four people".
	rule("countnoun", countNouns())
	rule("count", []string{"<n99> <countnoun>", "(for | of | to | from | now | is | quantity | size) <n99>"})

	if len(vals) > 0 {
		rule("value", vals)
	}
	return b.String()
}

// allOK reports whether every plain word of a JSGF alternative passes ok.
func allOK(alt string, ok func(string) bool) bool {
	for _, w := range strings.FieldsFunc(alt, func(r rune) bool { return strings.ContainsRune(" ()[]|", r) }) {
		if strings.HasPrefix(w, "<") {
			continue
		}
		if !ok(strings.Trim(w, `"`)) {
			return false
		}
	}
	return true
}

// Words lists every word the grammar can produce, for the dictionary.
func (g *Grammar) Words() []string {
	seen := map[string]bool{}
	for _, alt := range strings.Split(g.JSGF(), "\n") {
		_, body, ok := strings.Cut(alt, "=")
		if !ok {
			continue
		}
		for _, w := range strings.FieldsFunc(body, func(r rune) bool { return strings.ContainsRune(" ()[]|;+", r) }) {
			if !strings.HasPrefix(w, "<") {
				seen[strings.Trim(w, `"`)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// splitName turns an identifier into words: "reschedule_booking",
// "bookTable" and "ship-order" → "reschedule booking", "book table", "ship order".
func splitName(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z' && i > 0:
			b.WriteByte(' ')
			b.WriteRune(r)
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// wordsOf lower-cases s and keeps its plain words (letters and inner
// apostrophes), as the dictionary spells them.
func wordsOf(s string) []string {
	s = strings.ToLower(strings.ReplaceAll(s, "\u2019", "'"))
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '\'') }) {
		if w = strings.Trim(w, "'"); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// codeForm is a code's canonical form (the claim reader's): lower-case
// letters and digits only.
func codeForm(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

type shape uint8

const (
	shapeOther shape = iota // dates, times, amounts, counts: general entity rules cover them
	shapeCode               // has a digit and is none of the above
	shapeText               // words only
)

// shapeOf classes a record field value by its look, as the claim reader does.
func shapeOf(v string) shape {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return shapeOther
	case !strings.ContainsAny(v, "0123456789"):
		return shapeText
	case isISODate(v), isClock(v), strings.Trim(v, "0123456789") == "" && len(v) <= 3:
		return shapeOther
	case strings.ContainsAny(v, ".$") && strings.Trim(strings.TrimLeft(v, "$"), "0123456789.,") == "":
		return shapeOther // an amount
	}
	return shapeCode
}

func isISODate(v string) bool {
	return len(v) == 10 && v[4] == '-' && v[7] == '-' && strings.Trim(v[:4]+v[5:7]+v[8:], "0123456789") == ""
}

func isClock(v string) bool {
	h, m, ok := strings.Cut(v, ":")
	return ok && len(m) == 2 && len(h) >= 1 && len(h) <= 2 && strings.Trim(h+m, "0123456789") == ""
}
