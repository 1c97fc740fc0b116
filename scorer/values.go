package scorer

import (
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/entity"
)

// valueClass says how an argument's value is heard in speech, and so in
// which list of an utterance's facts it shows up.
type valueClass uint8

const (
	classNone   valueClass = iota
	classID                // record keys and codes: tokens with digits ("5590", "BK-4471")
	classDate              // YYYY-MM-DD, or "wd:N" for a weekday named alone (N: 0=Sunday)
	classTime              // HH:MM (24 h), or "~H:MM" when am/pm was not said
	classAmount            // decimal without trailing zeros: "45.5", "45"
	classCount             // integer counts: "4"
	classText              // names and free text: matched as a phrase, never enumerated
)

var classNames = [...]string{"none", "id", "date", "time", "amount", "count", "text"}

func (c valueClass) String() string { return classNames[c] }

// Argument types a catalogue may declare (trace.ArgSpec.Type).
const (
	typeString  = "string"
	typeInteger = "integer"
	typeDate    = "date"
	typeTime    = "time"
	typeNumber  = "number"
	// typeKey is not a catalogue type: the scorer uses it for a tool's
	// key argument, which is a code or a name whatever its shape.
	typeKey = "key"
)

// defaultYear completes dates spoken without a year (docs/ARCHITECTURE.md).
const defaultYear = 2026

// priorMarkers before a value mark it as the old one, not a claim ("from
// Tuesday to Wednesday", "instead of 7 pm", "no longer four").
var priorMarkers = map[string]bool{"from": true, "instead": true, "than": true, "longer": true,
	"originally": true, "previously": true, "was": true, "were": true, "not": true, "old": true}

// tokens lower-cases s and splits it into words (entity.Tokenize): "won't",
// "2026-12-03", "7:30", "$45.50" and "12/08" stay whole.
func tokens(s string) []string { return entity.Tokenize(s) }

// numberAt reads a whole number at ts[i] in digits or words
// (entity.NumberAt: "4", "4th", "twenty-one", "two hundred and fifteen");
// it returns the value and how many tokens it used, or -1.
func numberAt(ts []string, i int) (int, int) {
	n := entity.NumberAt(ts, i)
	if n.Used == 0 || n.Int < 0 || len(digits(ts[i])) > 9 {
		return -1, 0
	}
	return int(n.Int), n.Used
}

// digits returns the number a digit token spells ("3", "3rd"), or "" (also
// for "#12").
func digits(t string) string {
	if strings.HasPrefix(t, "#") {
		return ""
	}
	return entity.DigitsOf(t)
}

func parseISO(t string) string { return entity.ParseISO(t) }

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// weekdayOf is the weekday of an ISO date, or -1.
func weekdayOf(iso string) time.Weekday {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return -1
	}
	return t.Weekday()
}

// clockTime renders a time: 24-hour "HH:MM" when the half of the day is
// known, "~H:MM" (hour 1..12) when it is not.
func clockTime(h, m int, ampm string) string {
	if (ampm == "am" || ampm == "pm") && h == 0 && m >= 0 && m <= 59 {
		h = 12 // "0:15 am" is 00:15, "0:15 pm" 12:15
	}
	v, alt := entity.ClockOf(h, m, ampm, false)
	return heardClock(v, alt)
}

// heardClock is an entity time in heard form: "HH:MM", or "~H:MM" when
// the other half of the day (alt) is as likely.
func heardClock(v, alt string) string {
	if v == "" || alt == "" {
		return v
	}
	h, _ := strconv.Atoi(v[:2])
	return "~" + strconv.Itoa(h) + v[2:]
}

// amount renders a decimal canonically: "45.50" -> "45.5", "45.00" -> "45".
func amount(s string) string { return entity.Decimal(s) }

// idForm is a code's canonical form: lower case, letters and digits only.
func idForm(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// textForm is free text's canonical form: its words, space-separated.
func textForm(s string) string { return textFormOf(tokens(s)) }

// textFormOf is textForm of tokens already split (not modified).
func textFormOf(ts []string) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.TrimSuffix(strings.Trim(t, "$#€£."), "'s")) // "rex's" names rex
	}
	return b.String()
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// normValue puts one argument or slot value in canonical form for its
// schema type, so "December 3" equals "2026-12-03", "four" equals "4" and
// "7:30 pm" equals "19:30". A value it cannot read stays as given, trimmed.
func normValue(typ, v string) string {
	v = strings.TrimSpace(v)
	switch typ {
	case typeDate:
		if d := parseISO(v); d != "" {
			return d
		}
		if f := scanValues(v, true); len(f.cur[classDate]) == 1 && !strings.HasPrefix(f.cur[classDate][0], "wd:") {
			return f.cur[classDate][0]
		}
	case typeInteger:
		ts := tokens(v)
		if len(ts) > 0 {
			if n, used := numberAt(ts, 0); n >= 0 && used == len(ts) {
				return strconv.Itoa(n)
			}
		}
	case typeTime:
		if f := scanValues(v, true); len(f.cur[classTime]) == 1 {
			return f.cur[classTime][0]
		}
	case typeNumber:
		if a := amount(v); a != "" {
			return a
		}
		if f := scanValues(v, true); len(f.cur[classAmount]) == 1 {
			return f.cur[classAmount][0]
		}
	case typeKey:
	default:
		// A catalogue that declares everything a string still carries
		// dates, times and amounts: read them by their shape.
		if d := parseISO(v); d != "" {
			return d
		}
		if mayHoldValue(v) {
			if f := scanValues(v, false); onlyClass(f) != classNone {
				return f.cur[onlyClass(f)][0]
			}
		}
		if strings.ContainsAny(v, "$€£") {
			if a := amount(v); a != "" {
				return a
			}
		}
	}
	return strings.TrimPrefix(v, "#")
}

// mayHoldValue is a cheap test before reading a string by its shape: a
// date, time or amount has a digit, or names a month, a weekday, noon or
// midnight.
func mayHoldValue(v string) bool {
	if hasDigit(v) {
		return true
	}
	for _, t := range tokens(v) {
		if entity.Month(t) > 0 {
			return true
		}
		if _, ok := entity.Weekday(t); ok {
			return true
		}
		if t == "noon" || t == "midnight" || t == "midday" {
			return true
		}
	}
	return false
}

// onlyClass is the class of the single date, time or amount a whole value
// spells ("Wednesday, December 9", "7:30 pm"), or classNone.
func onlyClass(f valueSet) valueClass {
	found := classNone
	for c, xs := range f.cur {
		if len(xs) != 1 || found != classNone || c == classID || c == classCount || c == classText {
			return classNone
		}
		found = c
	}
	if found == classDate && strings.HasPrefix(f.cur[classDate][0], "wd:") {
		return classNone
	}
	if len(f.prior) > 0 || found == classNone {
		return classNone
	}
	return found
}

// classOf says how a canonical value of this type is heard in speech. A
// plain string is classed by its shape, so a catalogue that declares a
// date, a time or a party size as a string is still read right; a record
// key (typeKey) is always a code or a name.
func classOf(typ, norm string) valueClass {
	switch typ {
	case typeDate:
		return classDate
	case typeTime:
		return classTime
	case typeNumber:
		return classAmount
	case typeInteger:
		return classCount
	}
	if norm == "" {
		return classNone
	}
	if typ == typeKey && hasDigit(norm) {
		return classID
	}
	if typ == typeKey {
		return classText
	} else if parseISO(norm) == norm {
		return classDate
	} else if isClock(norm) {
		return classTime
	} else if strings.Trim(norm, "0123456789") == "" && len(norm) <= 3 {
		return classCount
	} else if strings.Count(norm, ".") == 1 && strings.Trim(norm, "0123456789.") == "" && amount(norm) != "" {
		return classAmount
	} else if hasDigit(norm) {
		return classID
	}
	return classText
}

// namesPhrase reports whether text (in textForm) has the phrase w (in
// textForm) as whole words, a hyphen and a space being the same:
// "rainy-day" is named by "rainy day" and the reverse.
func namesPhrase(text, w string) bool {
	if strings.Contains(" "+text+" ", " "+w+" ") {
		return true
	}
	if !strings.Contains(text, "-") && !strings.Contains(w, "-") {
		return false
	}
	text, w = strings.ReplaceAll(text, "-", " "), strings.ReplaceAll(w, "-", " ")
	return strings.Contains(" "+text+" ", " "+w+" ")
}

// rawClass is classOf, told also by the value as stored: a string field
// holding "215.00" is an amount although its canonical form "215" has the
// shape of a count.
func rawClass(typ, raw, norm string) valueClass {
	c := classOf(typ, norm)
	if c == classCount && typ != typeInteger && strings.Count(raw, ".") == 1 && amount(strings.TrimSpace(raw)) == norm {
		return classAmount
	}
	return c
}

// isClock reports the canonical time forms "HH:MM" and "~H:MM".
func isClock(s string) bool {
	s = strings.TrimPrefix(s, "~")
	h, m, ok := strings.Cut(s, ":")
	return ok && len(m) == 2 && len(h) >= 1 && len(h) <= 2 && strings.Trim(h+m, "0123456789") == ""
}

// heardForm is the form in which a canonical value of class c is compared
// with what speech names.
func heardForm(c valueClass, norm string) string {
	switch c {
	case classID:
		return idForm(norm)
	case classText:
		return textForm(norm)
	}
	return norm
}

// sameHeard reports whether a value named in speech (class c, heard form)
// can be the canonical value held: a weekday named alone matches a date on
// that weekday, a day of the month ("dom:8") a date on that day; a time
// without am/pm matches either half of the day; "250|2.5" (a reading and
// its alternatives) matches any of them.
func sameHeard(c valueClass, named, held string) bool {
	if strings.Contains(named, "|") {
		for _, x := range strings.Split(named, "|") {
			if sameHeard(c, x, held) {
				return true
			}
		}
		return false
	}
	held = heardForm(c, held)
	if named == held {
		return true
	}
	switch c {
	case classDate:
		if w, ok := strings.CutPrefix(named, "wd:"); ok {
			n, _ := strconv.Atoi(w)
			return weekdayOf(held) == time.Weekday(n)
		}
		if d, ok := strings.CutPrefix(named, "dom:"); ok {
			return len(held) == 10 && parseISO(held) == held && strings.TrimPrefix(held[8:], "0") == d
		}
	case classTime:
		if t, ok := strings.CutPrefix(named, "~"); ok && len(held) == 5 {
			return t == twelveHour(held)
		}
		if t, ok := strings.CutPrefix(held, "~"); ok && len(named) == 5 {
			return t == twelveHour(named) // a backend that stores "9:00" holds either half
		}
	}
	return false
}

// twelveHour renders "21:30" as "9:30", "00:15" as "12:15".
func twelveHour(hhmm string) string {
	h, _ := strconv.Atoi(hhmm[:2])
	h12 := h % 12
	if h12 == 0 {
		h12 = 12
	}
	return strconv.Itoa(h12) + hhmm[2:]
}
