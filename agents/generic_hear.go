package agents

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/entity"
	"github.com/callproof/callproof/trace"
)

// genericDomain reads any catalogue: values come out of the caller's
// words through package entity, by the dimension each argument's type,
// pattern and enum call for; the tool comes from the words of the tools'
// names and descriptions. It knows no phrase of any domain.
type genericDomain struct {
	cat   []trace.ToolSpec
	opts  entity.Options
	alias map[string]string // vocabulary phrase → enum value
}

// argKind is the dimension an argument is read in.
type argKind int

const (
	kindText argKind = iota
	kindDate
	kindTime
	kindInt
	kindNumber // a decimal: an amount or a measure
	kindMoney  // a string amount with two decimals
	kindEnum
	kindCode
)

func newGenericDomain(cat []trace.ToolSpec, callDate, _ string) *genericDomain {
	d := &genericDomain{cat: cat, alias: map[string]string{}}
	var vocab []string
	for _, t := range cat {
		for _, a := range t.Args {
			for _, v := range a.Enum {
				for _, form := range []string{v, strings.NewReplacer("_", " ", "-", " ").Replace(v)} {
					d.alias[strings.ToLower(form)] = v
					vocab = append(vocab, form)
				}
			}
			if d.kind(t, a) == kindTime {
				d.opts.BareTime = true
			}
		}
	}
	d.opts.Names = entity.NewVocabulary(vocab...)
	d.opts.DefaultYear = impliedYear
	if day, err := time.Parse(time.DateOnly, callDate); err == nil {
		d.opts.Ref = entity.Ref{Date: day}
	}
	return d
}

// kind classifies an argument by its type, then its enum and pattern, then
// its words.
func (d *genericDomain) kind(t trace.ToolSpec, a trace.ArgSpec) argKind {
	switch a.Type {
	case trace.ArgDate:
		return kindDate
	case trace.ArgTime:
		return kindTime
	case trace.ArgInteger:
		return kindInt
	case trace.ArgNumber:
		return kindNumber
	}
	switch {
	case len(a.Enum) > 0:
		return kindEnum
	case strings.Contains(a.Pattern, ":"):
		return kindTime // HH:MM
	case strings.Contains(a.Pattern, `\.`) && strings.Contains(a.Pattern, "{2}"):
		return kindMoney // dollars and cents
	case a.Pattern != "":
		return kindCode
	}
	words := nameWords(a.Name + " " + a.Description)
	switch {
	case hasAny(words, "amount", "price", "cost", "dollars", "total", "fee"):
		return kindMoney
	case hasAny(words, "date", "day"):
		return kindDate
	case hasAny(words, "time"):
		return kindTime
	case a.Name == t.KeyArg || d.isKey(a.Name):
		return kindCode
	}
	return kindText
}

// isKey reports an argument that names a record of some tool.
func (d *genericDomain) isKey(name string) bool {
	for _, t := range d.cat {
		if t.KeyArg == name {
			return true
		}
	}
	return false
}

func hasAny(words []string, want ...string) bool {
	for _, w := range words {
		for _, x := range want {
			if w == x {
				return true
			}
		}
	}
	return false
}

// nameWords splits identifiers and prose into lower-case words:
// "reschedule_booking", "bookTable", "Move a booking" → words.
func nameWords(s string) []string {
	var b strings.Builder
	prevLower := false
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			if prevLower {
				b.WriteByte(' ')
			}
			b.WriteRune(r + 'a' - 'A')
			prevLower = false
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			prevLower = true
		default:
			b.WriteByte(' ')
			prevLower = false
		}
	}
	return strings.Fields(b.String())
}

// stem folds a word's common endings so "bookings", "booked" and "booking"
// meet "book".
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			w = strings.TrimSuffix(w, suf)
			break
		}
	}
	return strings.TrimSuffix(w, "e")
}

// Words that carry no meaning for choosing a tool.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "for": true, "on": true, "in": true,
	"at": true, "by": true, "and": true, "or": true, "its": true, "it": true, "is": true, "be": true,
	"this": true, "that": true, "with": true, "from": true, "my": true, "i": true, "you": true,
	"please": true, "could": true, "would": true, "can": true, "me": true, "id": true, "ref": true,
	"number": true, "code": true, "no": true, "new": true, "another": true, "other": true, "sets": true,
	"set": true, "up": true, "look": true, "record": true, "existing": true, "given": true, "your": true,
}

// effectVerbs are the agent's own sense of what each effect is asked with.
var effectVerbs = map[trace.Effect][]string{
	trace.EffectUpdate: {"change", "move", "update", "modify", "reschedule", "switch", "adjust", "edit", "amend", "push", "shift", "increase", "reduce", "raise", "lower"},
	trace.EffectCreate: {"create", "book", "make", "add", "new", "schedule", "send", "pay", "place", "open", "reserve", "register", "submit", "issue", "file", "log", "order", "request", "refund", "arrange"},
	trace.EffectCancel: {"cancel", "call", "void", "stop"},
	trace.EffectDelete: {"delete", "remove", "drop", "erase", "cancel"},
}

var (
	negateRe   = regexp.MustCompile(`(?i)\b(don't|don’t|do not|stop|never ?mind|forget (it|that|about it)|leave it|hold off|scratch that)\b`)
	cancelRe   = regexp.MustCompile(`(?i)\b(cancel|withdraw|call it off)\b`)
	proceedRe2 = regexp.MustCompile(`(?i)\b(yes|yeah|yep|go ahead|please do|sure|correct|that's right|sounds good)\b`)
	fixRe      = regexp.MustCompile(`(?i)\b(actually|instead|meant|make it|make that|change it|sorry)\b`)
)

// writers are the tools a caller can ask for: every tool that is not a read.
func (d *genericDomain) writers() []trace.ToolSpec {
	var out []trace.ToolSpec
	for _, t := range d.cat {
		if t.Effect != trace.EffectRead {
			out = append(out, t)
		}
	}
	return out
}

// found is one value heard, fitted to the arguments it can be.
type found struct {
	en   entity.Entity
	fits map[string]string // argument → value in its form
}

func (d *genericDomain) understand(text, action string) heard {
	h := heard{slots: map[string]string{}}
	ts := entity.Tokenize(text)
	ents := entity.ExtractTokens(ts, d.opts)
	ents = append(ents, properNames(text, ts, ents)...)
	stems := map[string]bool{}
	for _, w := range nameWords(text) {
		if !stopWords[w] {
			stems[stem(w)] = true
		}
	}
	// The tool asked for: the best by its words and by the values heard.
	best, bestScore, bestName, curScore := "", 0, 0, 0
	for _, t := range d.writers() {
		name, score := d.toolScore(t, stems, ents, action == "")
		if t.Name == action {
			curScore = score
		}
		if score > bestScore {
			best, bestScore, bestName = t.Name, score, name
		}
	}
	hasKeyValue := false
	if action == "" && bestScore > 0 {
		h.action = best
	} else if action != "" && best != action && bestName > 0 && bestScore > curScore {
		h.action = best
	}
	// Values: fitted to the arguments of the tool in force.
	target := h.action
	if target == "" {
		target = action
	}
	args := d.argsOf(target)
	filled := map[string]bool{}
	guessed := map[string]bool{} // free text filled by a capitalized word alone
	for _, en := range ents {
		if priorValue(ts, en) || en.Dim == entity.DimNone && target == "" {
			continue
		}
		name, v := d.assign(args, ts, en, filled)
		if name == "" {
			continue
		}
		if en.Dim == entity.DimNone {
			guessed[name] = true
		}
		filled[name] = true
		h.slots[name] = v
		if d.isKey(name) {
			hasKeyValue = true
		}
	}
	// Codes spelled one character at a time that the extractors left
	// ("G I seven nine zero two": "i" is a word to them), read against
	// each unfilled code argument's own pattern.
	for _, ta := range args {
		if filled[ta.arg.Name] || ta.arg.Pattern == "" || d.kind(ta.tool, ta.arg) != kindCode {
			continue
		}
		if v := spelledCode(ts, ta.arg); v != "" {
			filled[ta.arg.Name] = true
			h.slots[ta.arg.Name] = v
			if d.isKey(ta.arg.Name) {
				hasKeyValue = true
			}
		}
	}
	// Free text named by its argument ("the note ring twice"): the words
	// after the name, to the end of the clause. Naming the argument says
	// more than a capitalized word guessed to be a name.
	for _, ta := range args {
		if filled[ta.arg.Name] && !guessed[ta.arg.Name] || d.kind(ta.tool, ta.arg) != kindText || target == "" {
			continue
		}
		if v := namedText(text, ta.arg.Name); v != "" && matches(ta.arg, v) {
			filled[ta.arg.Name] = true
			h.slots[ta.arg.Name] = v
		}
	}
	// A withdrawal needs something to withdraw. "Cancel that" while a
	// request is in force withdraws it; only a record named with it asks
	// for a cancel of its own.
	if action != "" && (negateRe.MatchString(text) && (len(h.slots) == 0 || !fixRe.MatchString(text)) ||
		cancelRe.MatchString(text) && !hasKeyValue && !d.cancels(action)) {
		h.negate = true
		h.action = ""
	}
	h.proceed = proceedRe2.MatchString(text)
	return h
}

// cancels reports a tool that cancels or deletes: "cancel" asks for it
// rather than withdrawing it.
func (d *genericDomain) cancels(tool string) bool {
	t, _ := trace.Catalog(d.cat, tool)
	if t.Effect == trace.EffectCancel || t.Effect == trace.EffectDelete {
		return true
	}
	for _, w := range nameWords(t.Name) {
		if cancelRe.MatchString(w) {
			return true
		}
	}
	return false
}

// toolScore weighs how much the words and values heard point at tool t;
// name counts the hits on the tool's own name.
func (d *genericDomain) toolScore(t trace.ToolSpec, stems map[string]bool, ents []entity.Entity, fresh bool) (name, score int) {
	seen := map[string]bool{}
	for _, w := range nameWords(t.Name) {
		if s := stem(w); !stopWords[w] && stems[s] && !seen[s] {
			seen[s] = true
			name++
		}
	}
	score = 2 * name
	for _, w := range nameWords(t.Description) {
		if s := stem(w); !stopWords[w] && stems[s] && !seen[s] {
			seen[s] = true
			score++
		}
	}
	if fresh {
		for _, v := range effectVerbs[t.Effect] {
			if s := stem(v); stems[s] && !seen[s] {
				seen[s] = true
				score++
			}
		}
	}
	if score == 0 {
		return 0, 0
	}
	for _, en := range ents {
		for _, a := range t.Args {
			if _, ok := d.fit(t, a, en); ok {
				score++
				break
			}
		}
	}
	return name, score
}

// argsOf lists the arguments a value may be for: the tool's, else every
// writer's.
func (d *genericDomain) argsOf(tool string) []toolArg {
	var out []toolArg
	for _, t := range d.writers() {
		if tool != "" && t.Name != tool {
			continue
		}
		for _, a := range t.Args {
			out = append(out, toolArg{t, a})
		}
	}
	return out
}

type toolArg struct {
	tool trace.ToolSpec
	arg  trace.ArgSpec
}

// properNames finds names for free-text arguments: capitalized words
// that no extractor took, that do not open a sentence and are not "I"
// ("... under the name Okafor").
func properNames(text string, ts []string, ents []entity.Entity) []entity.Entity {
	used := make([]bool, len(ts))
	for _, en := range ents {
		for k := en.Span.Start; k < en.Span.End && k < len(used); k++ {
			used[k] = true
		}
	}
	var out []entity.Entity
	k := 0 // the token the next raw word starts at
	opens := true
	for _, raw := range strings.Fields(text) {
		word := strings.Trim(raw, ".,!?;:\"'()")
		n := len(entity.Tokenize(raw))
		// A lone capital is a character of a spelled code ("B I zero
		// six"), not a name.
		if n == 1 && k < len(ts) && !used[k] && !opens && len(word) > 1 && word[0] >= 'A' && word[0] <= 'Z' &&
			!strings.HasPrefix(strings.ToLower(word), "i'") && word != "I" && !stopWords[strings.ToLower(word)] {
			out = append(out, entity.Entity{Dim: entity.DimNone, Value: word, Span: entity.Span{Start: k, End: k + 1}, Text: word})
		}
		k += n
		opens = strings.ContainsAny(raw[len(raw)-1:], ".!?")
	}
	return out
}

// namedText returns the words after the argument's last name word, up to
// the end of the clause ("... and the note birthday." → "birthday").
func namedText(text, arg string) string {
	names := nameWords(arg)
	if len(names) == 0 {
		return ""
	}
	last := names[len(names)-1]
	words := strings.Fields(text)
	for i, w := range words {
		if strings.ToLower(strings.Trim(w, ".,;:!?\"'")) != last {
			continue
		}
		var out []string
		for _, x := range words[i+1:] {
			bare := strings.Trim(x, ".,;:!?\"'")
			switch l := strings.ToLower(bare); {
			case len(out) == 0 && (l == "is" || l == "to" || l == "as" || l == "should" || l == "be" || l == "reads" || l == "say" || l == "says"):
				continue
			case textEnds[l] || bare == "":
				return strings.Join(out, " ")
			}
			out = append(out, bare)
			if bare != x {
				break // punctuation ends the clause
			}
		}
		return strings.Join(out, " ")
	}
	return ""
}

// textEnds are words that close a free-text value rather than belong to
// it: "make the note side door instead", "... ring twice, please", "... and
// the date ...".
var textEnds = map[string]bool{"and": true, "please": true, "instead": true, "then": true, "thanks": true,
	"thank": true, "rather": true, "but": true}

// digitWords are the digits said as words inside a spelled code.
var digitWords = map[string]string{
	"zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4",
	"five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}

// spelledCode finds the longest run of single letters, digits and digit
// words that matches the argument's pattern; the last such run wins.
func spelledCode(ts []string, a trace.ArgSpec) string {
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return ""
	}
	found := ""
	for i := 0; i < len(ts); i++ {
		var b strings.Builder
		best, end := "", i
		for k := i; k < len(ts) && b.Len() < 16; k++ {
			t := strings.Trim(ts[k], "-.")
			switch {
			case digitWords[t] != "":
				b.WriteString(digitWords[t])
			case len(t) == 1 && (t[0] >= 'a' && t[0] <= 'z' || t[0] >= '0' && t[0] <= '9'):
				b.WriteString(strings.ToUpper(t))
			case entity.DigitsOf(t) == t && t != "":
				b.WriteString(t)
			default:
				k = len(ts)
				continue
			}
			if re.MatchString(b.String()) {
				best, end = b.String(), k
			}
		}
		if best != "" {
			found, i = best, end // a run is read once, from its start
		}
	}
	return found
}

// priorValue reports a value said as the one being replaced ("not the
// 8th", "instead of 4", "rather than Tuesday").
func priorValue(ts []string, en entity.Entity) bool {
	i := en.Span.Start
	prev := func(k int) string {
		if i-k >= 0 {
			return ts[i-k]
		}
		return ""
	}
	switch prev(1) {
	case "not", "than", "was", "originally", "previously":
		return true
	case "of":
		return prev(2) == "instead"
	}
	return false
}

// assign picks the argument a value is for: one named just before it
// ("reference R4M9", "party of 6"), else one not yet given in this
// utterance, else the first that takes it.
func (d *genericDomain) assign(args []toolArg, ts []string, en entity.Entity, filled map[string]bool) (string, string) {
	type cand struct {
		name, v string
		cue     bool
		kind    argKind
	}
	var cands []cand
	seen := map[string]bool{}
	for _, ta := range args {
		if seen[ta.arg.Name] {
			continue
		}
		v, ok := d.fit(ta.tool, ta.arg, en)
		if !ok {
			continue
		}
		seen[ta.arg.Name] = true
		cands = append(cands, cand{ta.arg.Name, v, cued(ts, en.Span.Start, ta.arg.Name), d.kind(ta.tool, ta.arg)})
	}
	if len(cands) == 0 {
		return "", ""
	}
	// A number of four digits or more names a record rather than counts
	// people or units, whatever word came before it.
	long := en.Dim == entity.DimNumber && len(en.Value) >= 4 && !strings.Contains(en.Value, ".")
	for _, c := range cands {
		if c.cue && !(long && c.kind == kindInt) {
			return c.name, c.v
		}
	}
	if long {
		for _, c := range cands {
			if d.isKey(c.name) && !filled[c.name] {
				return c.name, c.v
			}
		}
	}
	for _, c := range cands {
		if !filled[c.name] {
			return c.name, c.v
		}
	}
	return cands[0].name, cands[0].v
}

// cued reports a word of the argument's name within three words before i.
func cued(ts []string, i int, arg string) bool {
	for _, w := range nameWords(arg) {
		if stopWords[w] {
			continue
		}
		for k := i - 1; k >= 0 && k >= i-3; k-- {
			if stem(ts[k]) == stem(w) {
				return true
			}
		}
	}
	return false
}

// fit puts an entity in an argument's form, if it can be that argument.
func (d *genericDomain) fit(t trace.ToolSpec, a trace.ArgSpec, en entity.Entity) (string, bool) {
	var vals []string
	switch d.kind(t, a) {
	case kindDate:
		if en.Dim == entity.DimDate {
			vals = en.Values()
		}
	case kindTime:
		if en.Dim == entity.DimTime {
			vals = en.Values()
		}
	case kindInt:
		if en.Dim == entity.DimNumber && !strings.Contains(en.Value, ".") && !(en.Ordinal) {
			vals = []string{en.Value}
		}
	case kindNumber:
		if en.Dim == entity.DimMoney || en.Dim == entity.DimNumber && !en.Ordinal {
			vals = en.Values()
			if isAmount(a) {
				vals = append(moneyReadings(en), vals...)
			}
		}
	case kindMoney:
		if en.Dim == entity.DimMoney || en.Dim == entity.DimNumber && !en.Ordinal {
			for _, v := range append(moneyReadings(en), en.Values()...) {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					vals = append(vals, fmt.Sprintf("%.2f", f), v)
				}
			}
		}
	case kindEnum:
		if en.Dim == entity.DimName {
			if v, ok := d.alias[strings.ToLower(en.Value)]; ok && contains(a.Enum, v) {
				vals = []string{v}
			}
		}
	case kindCode:
		switch en.Dim {
		case entity.DimCode:
			// The code as written too: a pattern may want its dash.
			vals = append(en.Values(), strings.ToUpper(en.Text))
		case entity.DimNumber:
			if !en.Ordinal && !strings.Contains(en.Value, ".") {
				vals = []string{en.Value}
			}
		}
	case kindText:
		if en.Dim == entity.DimNone {
			vals = []string{en.Value}
		}
	}
	for _, v := range vals {
		if matches(a, v) {
			return v, true
		}
	}
	return "", false
}

// moneyReadings are the readings of a number said as a pair that come
// before its whole reading: "eighty-six twenty-five" is 86.25 rather than
// 8625, but "two fifty" is 250 rather than 2.50 (dollars under ten are
// not said in pairs).
func moneyReadings(en entity.Entity) []string {
	var out []string
	for _, a := range en.Alternatives {
		if f, err := strconv.ParseFloat(a.Value, 64); err == nil && a.Dim == entity.DimMoney && f >= 10 {
			out = append(out, a.Value)
		}
	}
	return out
}

// isAmount reports a number argument that holds money.
func isAmount(a trace.ArgSpec) bool {
	return hasAny(nameWords(a.Name+" "+a.Description), "amount", "price", "cost", "dollars", "euros", "total", "fee")
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// matches checks a value against the argument's enum and pattern.
func matches(a trace.ArgSpec, v string) bool {
	if len(a.Enum) > 0 && !contains(a.Enum, v) {
		return false
	}
	if a.Pattern == "" {
		return true
	}
	re, err := regexp.Compile(a.Pattern)
	return err == nil && re.MatchString(v)
}

// Keypad digits are a record's key, said as a number.
func (d *genericDomain) dtmf(digits string) string { return "number " + digits }

func (d *genericDomain) keyArg(tool string) string {
	t, _ := trace.Catalog(d.cat, tool)
	return t.KeyArg
}

func (d *genericDomain) argsFor(tool string, slots map[string]string) map[string]string {
	t, ok := trace.Catalog(d.cat, tool)
	args := map[string]string{}
	if !ok {
		return args
	}
	for _, a := range t.Args {
		v := slots[a.Name]
		if v == "" && a.Required && len(a.Enum) == 1 {
			v = a.Enum[0] // the only value there is: a status a cancel writes
		}
		if v != "" && matches(a, v) {
			args[a.Name] = v
		}
	}
	return args
}

func (d *genericDomain) ask(tool string, args map[string]string) string {
	t, ok := trace.Catalog(d.cat, tool)
	if !ok {
		return ""
	}
	if t.KeyArg != "" && args[t.KeyArg] == "" {
		return fmt.Sprintf("Which %s is that?", d.noun(t))
	}
	for _, a := range t.Args {
		if a.Required && args[a.Name] == "" {
			return fmt.Sprintf("What %s would you like?", strings.Join(nameWords(a.Name), " "))
		}
	}
	if t.Effect == trace.EffectUpdate && len(args) < 2 {
		return fmt.Sprintf("What would you like to change on %s %s?", d.noun(t), args[t.KeyArg])
	}
	return ""
}

func (d *genericDomain) readTool(tool string) trace.ToolSpec {
	t, _ := trace.Catalog(d.cat, tool)
	for _, r := range d.cat {
		if r.Effect == trace.EffectRead && r.Table == t.Table && r.KeyArg != "" && keyOnly(r) {
			return r
		}
	}
	return trace.ToolSpec{}
}

// keyOnly reports a read that needs nothing but its key: one that wants
// more cannot be called with what a write knows.
func keyOnly(r trace.ToolSpec) bool {
	for _, a := range r.Args {
		if a.Required && a.Name != r.KeyArg {
			return false
		}
	}
	return true
}

func (d *genericDomain) updateTool(tool string) trace.ToolSpec {
	t, _ := trace.Catalog(d.cat, tool)
	if t.Effect == trace.EffectUpdate {
		return t
	}
	for _, u := range d.cat {
		if u.Effect == trace.EffectUpdate && u.Table == t.Table && u.KeyArg != "" {
			return u
		}
	}
	return trace.ToolSpec{}
}

func (d *genericDomain) undoTool(table string) trace.ToolSpec {
	for _, t := range d.cat {
		if t.Table != table || t.KeyArg == "" {
			continue
		}
		if t.Effect == trace.EffectCancel || t.Effect == trace.EffectDelete {
			return t
		}
		if t.Effect == trace.EffectUpdate && isCancelUpdate(t, d.argsFor(t.Name, nil)) {
			return t
		}
	}
	return trace.ToolSpec{}
}

func (d *genericDomain) lookups(tool string, args map[string]string) []lookup {
	t, _ := trace.Catalog(d.cat, tool)
	var out []lookup
	for _, a := range t.Args {
		if a.Name == t.KeyArg || args[a.Name] == "" {
			continue
		}
		for _, r := range d.cat {
			if r.Effect == trace.EffectRead && r.KeyArg == a.Name && r.Table != t.Table && keyOnly(r) {
				out = append(out, lookup{tool: r, key: args[a.Name]})
				break
			}
		}
	}
	return out
}
