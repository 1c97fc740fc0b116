package scorer

import (
	"strconv"
	"strings"
	"time"
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

var months = map[string]int{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "tues": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "thurs": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

var units = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
	"nineteen": 19,
}

var tens = map[string]int{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
	"seventy": 70, "eighty": 80, "ninety": 90}

var ordinals = map[string]int{
	"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
	"eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
	"fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
	"nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}

// countNouns follow a number that counts something ("four people").
var countNouns = map[string]bool{
	"people": true, "persons": true, "person": true, "guests": true, "guest": true, "adults": true,
	"children": true, "kids": true, "diners": true, "units": true, "unit": true, "items": true,
	"item": true, "pieces": true, "piece": true, "pcs": true, "copies": true, "nights": true,
	"night": true, "seats": true, "seat": true, "tickets": true, "ticket": true, "rooms": true,
	"room": true, "bags": true, "boxes": true, "of": false,
}

// priorMarkers before a value mark it as the old one, not a claim ("from
// Tuesday to Wednesday", "instead of 7 pm", "no longer four").
var priorMarkers = map[string]bool{"from": true, "instead": true, "than": true, "longer": true,
	"originally": true, "previously": true, "was": true, "were": true, "not": true, "old": true}

// tokens lower-cases s and splits it into words, keeping apostrophes,
// hyphens, colons, dots and dollar signs inside words so "won't",
// "2026-12-03", "7:30" and "$45.50" survive.
func tokens(s string) []string {
	s = strings.ToLower(strings.ReplaceAll(s, "\u2019", "'"))
	s = dropThousands(s)
	ts := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("'-:.$#€£", r))
	})
	out := ts[:0]
	for _, t := range ts {
		t = strings.Trim(t, "'-:.")
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// dropThousands removes thousands separators ("$1,200" → "$1200"): a
// comma between a digit and exactly three digits not followed by another.
func dropThousands(s string) string {
	if !strings.Contains(s, ",") {
		return s
	}
	isDigit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == ',' && isDigit(i-1) && isDigit(i+1) && isDigit(i+2) && isDigit(i+3) && !isDigit(i+4) {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// numberAt reads a number spelled in digits or words at ts[i] ("4", "4th",
// "four", "twenty-one", "twenty one"); it returns the value and how many
// tokens it used, or -1.
func numberAt(ts []string, i int) (int, int) {
	t := ts[i]
	if d := digits(t); d != "" && len(d) <= 9 {
		n, _ := strconv.Atoi(d)
		return n, 1
	}
	if n, ok := units[t]; ok {
		return n, 1
	}
	if n, ok := ordinals[t]; ok {
		return n, 1
	}
	if a, b, ok := strings.Cut(t, "-"); ok {
		if x, ok1 := tens[a]; ok1 {
			if y, ok2 := units[b]; ok2 && y < 10 {
				return x + y, 1
			}
			if y, ok2 := ordinals[b]; ok2 && y < 10 {
				return x + y, 1
			}
		}
	}
	if x, ok := tens[t]; ok {
		if i+1 < len(ts) {
			if y, ok := units[ts[i+1]]; ok && y > 0 && y < 10 {
				return x + y, 2
			}
			if y, ok := ordinals[ts[i+1]]; ok && y < 10 {
				return x + y, 2
			}
		}
		return x, 1
	}
	return -1, 0
}

// digits returns the number a digit token spells ("3", "3rd"), or "".
func digits(t string) string {
	end := 0
	for end < len(t) && t[end] >= '0' && t[end] <= '9' {
		end++
	}
	if end == 0 {
		return ""
	}
	switch t[end:] {
	case "", "st", "nd", "rd", "th":
		return t[:end]
	}
	return ""
}

func isoDate(y, m, d int) string {
	if m < 1 || m > 12 || d < 1 || d > 31 || y < 1000 || y > 9999 {
		return ""
	}
	if d > daysIn(y, m) {
		return "" // February 30th and the like
	}
	b := make([]byte, 0, 10)
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return string(b)
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// parseISO accepts YYYY-MM-DD (and single-digit month or day).
func parseISO(t string) string {
	if len(t) < 8 || len(t) > 10 || t[4] != '-' || t[0] < '0' || t[0] > '9' {
		return ""
	}
	p := strings.Split(t, "-")
	if len(p) != 3 || len(p[0]) != 4 {
		return ""
	}
	y, e1 := strconv.Atoi(p[0])
	m, e2 := strconv.Atoi(p[1])
	d, e3 := strconv.Atoi(p[2])
	if e1 != nil || e2 != nil || e3 != nil {
		return ""
	}
	return isoDate(y, m, d)
}

func year(t string) int {
	if len(t) == 4 && (strings.HasPrefix(t, "19") || strings.HasPrefix(t, "20")) {
		y, err := strconv.Atoi(t)
		if err == nil {
			return y
		}
	}
	return 0
}

// dayAt reads a day of the month at ts[i] ("3", "3rd", "third", "twenty-first").
func dayAt(ts []string, i int) (int, int) {
	n, used := numberAt(ts, i)
	if n < 1 || n > 31 {
		return 0, 0
	}
	return n, used
}

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
	if h < 0 || h > 23 || m < 0 || m > 59 {
		return ""
	}
	switch ampm {
	case "am":
		if h > 12 {
			return ""
		}
		if h == 12 {
			h = 0
		}
	case "pm":
		if h > 12 {
			return ""
		}
		if h < 12 {
			h += 12
		}
	default:
		if h > 12 || h == 0 {
			return twoDigits(h) + ":" + twoDigits(m)
		}
		return "~" + strconv.Itoa(h) + ":" + twoDigits(m)
	}
	return twoDigits(h) + ":" + twoDigits(m)
}

// amount renders a decimal canonically: "45.50" -> "45.5", "45.00" -> "45".
func amount(s string) string {
	s = strings.TrimLeft(strings.ReplaceAll(s, ",", ""), "$€£")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return ""
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

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
		if _, ok := months[t]; ok {
			return true
		}
		if _, ok := weekdays[t]; ok {
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
// that weekday; a time without am/pm matches either half of the day.
func sameHeard(c valueClass, named, held string) bool {
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
	case classTime:
		if t, ok := strings.CutPrefix(named, "~"); ok && len(held) == 5 {
			h, _ := strconv.Atoi(held[:2])
			h12 := h % 12
			if h12 == 0 {
				h12 = 12
			}
			return t == strconv.Itoa(h12)+held[2:]
		}
	}
	return false
}
