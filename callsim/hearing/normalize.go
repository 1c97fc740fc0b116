package hearing

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Entity kinds, with their values in the claim reader's canonical forms
// (scorer/values.go).
const (
	KindCode = "code" // "4471", "bk4471"
	// KindDate values: "2026-12-09"; "wd:3" for a weekday said alone (0 =
	// Sunday), "next:wd:3" for "next wednesday"; "rel:1" for a day
	// relative to the call's ("today" 0, "tomorrow" 1, "the day after
	// tomorrow" 2); "dom:8" for a day of the month alone ("the eighth"),
	// "wd:2/dom:8" with its weekday ("tuesday the eighth").
	KindDate   = "date"
	KindTime   = "time"   // "19:30", or "~7:30" without am/pm
	KindAmount = "amount" // "45.5"
	KindCount  = "count"  // "4"
	KindValue  = "value"  // a record's text field or an enum value: "haddad"
)

// defaultYear completes dates said without a year, as the claim reader does.
const defaultYear = 2026

// Entity is one value heard in an utterance.
type Entity struct {
	Kind  string
	Value string
}

func (e Entity) String() string { return e.Kind + ":" + e.Value }

// Heard is an utterance made readable for the claim reader.
type Heard struct {
	// Text is what the reader should read: codes as digits ("4471"),
	// times as "7:30 pm", amounts as "$45.50", counts as digits, dates
	// and everything else as words.
	Text string
	// Uncertain means the recognition cannot be trusted to say what was
	// claimed; Why says why. A caller must then not let Text decide a
	// verdict (see doc.go, "Uncertainty").
	Uncertain bool
	Why       string
	Entities  []Entity
}

// Normalize turns recognizer words into text the claim reader reads well
// and lists the entities in it.
//
// Homophones: the grammar offers "to" and "for" as free words and "two",
// "four" only inside entity rules (codes, dates, times, amounts, counts), so
// which spelling the decoder returns already says whether it heard a
// number. Normalize re-reads the same entity shapes; a number word that
// fits none of them ("moved it two wednesday", from this or another
// recognizer) is not guessed to be "to": it makes the utterance Uncertain.
// The reverse slip is guessed neither: "for for" or "to to" (in our trials
// always a "four" or "two" heard as the function word) makes it Uncertain.
// "one" alone stays a word ("one moment").
func (g *Grammar) Normalize(words []string) Heard {
	ws := make([]string, 0, len(words))
	for _, w := range words {
		if w = strings.ToLower(strings.TrimSpace(w)); w != "" {
			ws = append(ws, w)
		}
	}
	var h Heard
	if len(ws) == 0 {
		h.Uncertain, h.Why = true, "nothing was recognized"
		return h
	}
	nums := numberWords()
	var out []string
	var stray []string
	for i := 0; i < len(ws); {
		if text, ents, n := g.entityAt(ws, i); n > 0 {
			out = append(out, text)
			h.Entities = append(h.Entities, ents...)
			i += n
			continue
		}
		if nums[ws[i]] && ws[i] != "one" {
			stray = append(stray, ws[i])
		}
		out = append(out, ws[i])
		i++
	}
	h.Text = strings.Join(out, " ")
	for i := 1; i < len(ws); i++ {
		// "for for" is a number heard as its homophone ("a table for
		// four", "four four seven one"): not guessed back, but not trusted.
		if (ws[i] == "for" || ws[i] == "to") && ws[i-1] == ws[i] {
			h.Uncertain, h.Why = true, fmt.Sprintf("%q twice: a number may have been heard as its homophone", ws[i])
		}
	}
	if len(stray) > 0 {
		h.Uncertain = true
		h.Why = fmt.Sprintf("number words outside any code, date, time, amount or count: %s", strings.Join(stray, " "))
	}
	return h
}

// Hear normalizes a recognition: Normalize of its words, marked Uncertain
// when the cross-check decode (Recognizer.CrossCheck) heard other entities.
func (g *Grammar) Hear(res Result) Heard {
	h := g.Normalize(res.Words)
	if h.Uncertain || res.Check == nil {
		return h
	}
	c := g.Normalize(res.Check)
	switch {
	case !sameEntities(h.Entities, c.Entities):
		h.Uncertain = true
		h.Why = fmt.Sprintf("two decodes disagree on the values: %v and %v", h.Entities, c.Entities)
	case c.Uncertain:
		h.Uncertain = true
		h.Why = "the cross-check decode: " + c.Why
	case !slices.Equal(g.cueKinds(res.Words), g.cueKinds(res.Check)):
		h.Uncertain = true
		h.Why = fmt.Sprintf("two decodes disagree on the kinds of claim words: %v and %v", g.cueKinds(res.Words), g.cueKinds(res.Check))
	case res.Free != nil && g.snapped(h.Entities, g.Normalize(res.Free).Entities):
		h.Uncertain = true
		h.Why = fmt.Sprintf("a record's code heard only with the records' codes offered: without them the decoder heard %v", codesOf(g.Normalize(res.Free).Entities))
	}
	return h
}

// snapped reports whether heard has a record's code that the decode
// offered no record codes (free) did not hear: the code may have been
// pulled onto the record's by the grammar, not by the audio.
func (g *Grammar) snapped(heard, free []Entity) bool {
	fc := codesOf(free)
	for _, e := range heard {
		if e.Kind == KindCode && slices.Contains(g.codes, e.Value) && !slices.Contains(fc, e.Value) {
			return true
		}
	}
	return false
}

// codesOf lists the code entities' values.
func codesOf(es []Entity) []string {
	var out []string
	for _, e := range es {
		if e.Kind == KindCode {
			out = append(out, e.Value)
		}
	}
	return out
}

// cueKinds lists the kinds of claim words in ws (negation, done, verb,
// plan, restore, hedge, wait), sorted: what decides the claim, without
// the word-level noise of two decodes ("changed" against "moved").
func (g *Grammar) cueKinds(ws []string) []string {
	var out []string
	for _, w := range ws {
		if k := g.cues[w]; k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// sameEntities compares as multisets.
func sameEntities(a, b []Entity) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[Entity]int{}
	for _, e := range a {
		n[e]++
	}
	for _, e := range b {
		if n[e]--; n[e] < 0 {
			return false
		}
	}
	return true
}

// entityAt reads the longest entity starting at ws[i]: its text for the
// claim reader, its entities and the words it used (0 when none).
func (g *Grammar) entityAt(ws []string, i int) (string, []Entity, int) {
	if text, v, n := timeAt(ws, i); n > 0 {
		return text, []Entity{{KindTime, v}}, n
	}
	if text, v, n := amountAt(ws, i); n > 0 {
		return text, []Entity{{KindAmount, v}}, n
	}
	if text, v, n := dateAt(ws, i); n > 0 {
		return text, []Entity{{KindDate, v}}, n
	}
	if c, n := g.codeAt(ws, i); n > 0 {
		return c, []Entity{{KindCode, c}}, n
	}
	if countLead(ws[i]) && g.richerAt(ws, i+1) {
		return "", nil, 0 // "of forty five dollars": the amount, not a count, follows the lead
	}
	if text, v, n := countAt(ws, i); n > 0 {
		return text, []Entity{{KindCount, v}}, n
	}
	for _, v := range g.values {
		if i+len(v) <= len(ws) && slices.Equal(ws[i:i+len(v)], v) {
			return strings.Join(v, " "), []Entity{{KindValue, strings.Join(v, " ")}}, len(v)
		}
	}
	return "", nil, 0
}

// richerAt reports a time, amount, date or code at ws[i].
func (g *Grammar) richerAt(ws []string, i int) bool {
	if i >= len(ws) {
		return false
	}
	_, _, t := timeAt(ws, i)
	_, _, a := amountAt(ws, i)
	_, _, d := dateAt(ws, i)
	_, c := g.codeAt(ws, i)
	return t+a+d+c > 0
}

// codeAt reads a code: letters and digits spelled one by one ("four four
// seven one", "b k one two"; at least three characters), or a cardinal of
// a thousand or more that no currency follows ("four thousand four hundred
// seventy one").
func (g *Grammar) codeAt(ws []string, i int) (string, int) {
	var b strings.Builder
	j := i
	for j < len(ws) && len(ws[j]) == 1 && ws[j][0] >= 'a' && ws[j][0] <= 'z' {
		b.WriteString(ws[j])
		j++
	}
	letters := j - i
	for j < len(ws) {
		d, ok := digitValue(ws[j])
		if !ok {
			break
		}
		b.WriteByte(d)
		j++
	}
	if c := b.String(); j-i-letters >= 3 && (letters == 0 || slices.Contains(g.codes, c)) {
		return c, j - i
	}
	if letters > 0 {
		return "", 0
	}
	if n, used := cardinalAt(ws, i); n >= 1000 && slices.Contains(ws[i:i+used], "thousand") && !isCurrency(next(ws, i+used)) {
		return itoa(n), used
	}
	return "", 0
}

// countAt reads a count: a number before a count noun ("four people") or
// after a word that leads one ("for four", "quantity four", "to six").
func countAt(ws []string, i int) (string, string, int) {
	lead := 0
	if countLead(ws[i]) {
		lead = 1
	}
	n, used := cardinalAt(ws, i+lead)
	if n < 0 || n > 99 || used == 0 {
		return "", "", 0
	}
	if lead == 0 && !slices.Contains(countNouns(), next(ws, i+used)) {
		return "", "", 0
	}
	v := itoa(n)
	if lead == 1 {
		return ws[i] + " " + v, v, 1 + used
	}
	return v, v, used
}

// countLead reports a word a count can follow (the grammar's <count> rule).
func countLead(w string) bool {
	switch w {
	case "for", "of", "to", "from", "now", "is", "quantity", "size":
		return true
	}
	return false
}

// amountAt reads "forty five dollars fifty cents" as "$45.50".
func amountAt(ws []string, i int) (string, string, int) {
	n, used := cardinalAt(ws, i)
	if n < 0 || used == 0 {
		return "", "", 0
	}
	j := i + used
	if w := next(ws, j); w == "cents" || w == "cent" {
		if n > 99 {
			return "", "", 0
		}
		return fmt.Sprintf("$0.%02d", n), canonAmount(0, n), used + 1
	}
	if !isCurrency(next(ws, j)) {
		return "", "", 0
	}
	j++
	cents := 0
	k := j
	if w := next(ws, k); w == "and" || w == "am" || w == "an" {
		k++ // "am" and "an": the decoder's "and" before cents, heard as a free word
	}
	if c, u := cardinalAt(ws, k); c >= 0 && c < 100 && (next(ws, k+u) == "cents" || next(ws, k+u) == "cent") {
		cents, j = c, k+u+1
	}
	text := "$" + itoa(n)
	if cents > 0 {
		text += fmt.Sprintf(".%02d", cents)
	}
	return text, canonAmount(n, cents), j - i
}

func canonAmount(d, c int) string {
	return strconv.FormatFloat(float64(d)+float64(c)/100, 'f', -1, 64)
}

func isCurrency(w string) bool { return w == "dollars" || w == "dollar" }

// timeAt reads a time: "seven thirty p.m." → "7:30 pm", "seven o'clock",
// "half past seven", "quarter to eight", "noon", "at seven thirty" → "at 7:30".
func timeAt(ws []string, i int) (string, string, int) {
	switch ws[i] {
	case "noon", "midday":
		return ws[i], "12:00", 1
	case "midnight":
		return ws[i], "00:00", 1
	case "half", "quarter":
		if i+2 >= len(ws) || ws[i+1] != "past" && ws[i+1] != "to" {
			return "", "", 0
		}
		h := hourValue(ws[i+2])
		if h < 0 {
			return "", "", 0
		}
		m := 30
		if ws[i] == "quarter" {
			m = 15
			if ws[i+1] == "to" {
				m = 45
				if h--; h == 0 { // quarter to one is 12:45
					h = 12
				}
			}
		}
		ap, n := ampmAt(ws, i+3)
		text := strings.Join(ws[i:i+2], " ") + " " + itoa(hourValue(ws[i+2]))
		if ap != "" {
			text += " " + ap
		}
		return text, clock(h, m, ap), 3 + n
	case "at", "by", "until":
		if h := hourValue(next(ws, i+1)); h > 0 {
			m, mu := minuteAt(ws, i+2)
			if text, v, n := timeAt(ws, i+1); n > 0 {
				return ws[i] + " " + text, v, 1 + n
			}
			if mu == 0 {
				return ws[i] + " " + itoa(h), clock(h, 0, ""), 2 // "at 8": a time only where the catalogue has one
			}
			return fmt.Sprintf("%s %d:%02d", ws[i], h, m), clock(h, m, ""), 2 + mu
		}
		return "", "", 0
	}
	h := hourValue(ws[i])
	if h < 0 {
		return "", "", 0
	}
	if next(ws, i+1) == "o'clock" {
		ap, n := ampmAt(ws, i+2)
		text := itoa(h) + " o'clock"
		if ap != "" {
			text = itoa(h) + " " + ap
		}
		return text, clock(h, 0, ap), 2 + n
	}
	m, mu := minuteAt(ws, i+1)
	ap, n := ampmAt(ws, i+1+mu)
	if ap == "" {
		return "", "", 0
	}
	if mu == 0 {
		return itoa(h) + " " + ap, clock(h, 0, ap), 1 + n
	}
	return fmt.Sprintf("%d:%02d %s", h, m, ap), clock(h, m, ap), 1 + mu + n
}

func hourValue(w string) int {
	if n := unitValue(w); n >= 1 && n <= 12 {
		return n
	}
	return -1
}

// minuteAt reads minutes after an hour: "oh five", "fifteen", "thirty",
// "forty five".
func minuteAt(ws []string, i int) (int, int) {
	w := next(ws, i)
	if w == "oh" {
		if d := unitValue(next(ws, i+1)); d >= 1 && d <= 9 {
			return d, 2
		}
		return 0, 0
	}
	if n := unitValue(w); n >= 10 {
		return n, 1
	}
	if t := tensValue(w); t >= 20 && t <= 50 {
		if d := unitValue(next(ws, i+1)); d >= 1 && d <= 9 {
			return t + d, 2
		}
		return t, 1
	}
	return 0, 0
}

func ampmAt(ws []string, i int) (string, int) {
	switch next(ws, i) {
	case "a.m.", "a.m", "am":
		return "am", 1
	case "p.m.", "p.m", "pm", "tonight":
		return "pm", 1
	case "a", "p":
		// "nine a m": another recognizer's spelling of the letters.
		if next(ws, i+1) == "m" {
			return next(ws, i) + "m", 2
		}
	case "in":
		if next(ws, i+1) == "the" {
			switch next(ws, i+2) {
			case "morning":
				return "am", 3
			case "afternoon", "evening":
				return "pm", 3
			}
		}
	}
	return "", 0
}

// clock is the claim reader's canonical time: "19:30", or "~7:30" when
// am/pm was not said.
func clock(h, m int, ap string) string {
	switch ap {
	case "am":
		h %= 12
	case "pm":
		h = h%12 + 12
	default:
		return fmt.Sprintf("~%d:%02d", h, m)
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

// dateAt reads "[weekday] month day" (day as "ninth" or "nine"), "[weekday]
// the ninth of month", or a weekday alone. The text stays in words: the
// claim reader reads "december ninth".
func dateAt(ws []string, i int) (string, string, int) {
	if text, v, n := relativeDayAt(ws, i); n > 0 {
		return text, v, n
	}
	j := i
	var lead []string // the weekday, kept in the text
	wd := weekdayIndex(ws[i])
	if wd >= 0 {
		j++
		lead = ws[i:j]
		// The pause after "Wednesday," is often heard as a short word.
		if w := next(ws, j); (w == "the" || w == "a" || w == "to" || w == "it") && monthIndex(next(ws, j+1)) > 0 {
			j++
		}
	}
	if m := monthIndex(next(ws, j)); m > 0 {
		d, u := ordinalAt(ws, j+1)
		if d < 0 {
			d, u = readAt(ws, j+1)
		}
		if d >= 1 && d <= 31 {
			if iso := isoDate(defaultYear, m, d); iso != "" {
				text := append(slices.Clone(lead), ws[j:j+1+u]...)
				return strings.Join(text, " "), iso, j + 1 + u - i
			}
		}
	}
	if next(ws, j) == "the" {
		if d, u := ordinalAt(ws, j+1); d > 0 {
			if next(ws, j+1+u) == "of" {
				if m := monthIndex(next(ws, j+2+u)); m > 0 {
					if iso := isoDate(defaultYear, m, d); iso != "" {
						n := j + 3 + u - i
						return strings.Join(ws[i:i+n], " "), iso, n
					}
				}
			}
			// A day of the month alone ("on the eighth", "tuesday the
			// eighth"): the claim reader resolves it against the call's date.
			v := "dom:" + itoa(d)
			if wd >= 0 {
				v = "wd:" + itoa(wd) + "/" + v
			}
			n := j + 1 + u - i
			return strings.Join(ws[i:i+n], " "), v, n
		}
	}
	if wd >= 0 {
		return ws[i], "wd:" + itoa(wd), 1
	}
	return "", "", 0
}

// relativeDayAt reads a day said relative to the call's ("today",
// "tomorrow", "the day after tomorrow") or "next" and a weekday.
func relativeDayAt(ws []string, i int) (string, string, int) {
	switch {
	case ws[i] == "today":
		return ws[i], "rel:0", 1
	case ws[i] == "tomorrow":
		return ws[i], "rel:1", 1
	case ws[i] == "the" && next(ws, i+1) == "day" && next(ws, i+2) == "after" && next(ws, i+3) == "tomorrow":
		return strings.Join(ws[i:i+4], " "), "rel:2", 4
	case ws[i] == "next" && weekdayIndex(next(ws, i+1)) >= 0:
		return ws[i] + " " + ws[i+1], "next:wd:" + itoa(weekdayIndex(ws[i+1])), 2
	}
	return "", "", 0
}

func isoDate(y, m, d int) string {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return "" // February 30th
	}
	return t.Format(time.DateOnly)
}

func monthIndex(w string) int {
	for i, m := range monthNames() {
		if m == w {
			return i + 1
		}
	}
	return 0
}

func weekdayIndex(w string) int {
	for i, d := range weekdayNames() {
		if d == w {
			return i
		}
	}
	return -1
}

func next(ws []string, i int) string {
	if i >= 0 && i < len(ws) {
		return ws[i]
	}
	return ""
}

// Claims reports whether a first decode (Recognizer.Decode) could carry
// a claim or a read-back: it names a value or has claim words. Only such
// an utterance can have a cross-check change what a verdict reads of it,
// unless the claim itself was misheard away (the caller cross-checks the
// utterances where a claim is due whatever they say).
func (g *Grammar) Claims(res Result) bool {
	h := g.Normalize(res.Words)
	return !h.Uncertain && (len(h.Entities) > 0 || len(g.cueKinds(res.Words)) > 0)
}
