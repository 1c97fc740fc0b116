package scorer

import (
	"strconv"
	"strings"
)

// claim is what an agent utterance says about the requested action.
type claim uint8

const (
	claimNone    claim = iota
	claimDone          // "done", "updated", "has been"...
	claimNotDone       // "not", "won't", "nothing was changed"... (wins over done)
)

func (c claim) String() string {
	switch c {
	case claimDone:
		return "done"
	case claimNotDone:
		return "not-done"
	}
	return "no claim"
}

// facts is what the normaliser reads from free text.
type facts struct {
	orders []string // 4-digit order numbers
	dates  []string // YYYY-MM-DD
	qtys   []string // quantities, digits without leading zeros
	claim  claim
	wait   bool // "pending", "one moment", "let me check"...
}

// valueClass says in which list of facts an argument's value shows up in speech.
type valueClass uint8

const (
	classNone valueClass = iota
	classOrder
	classDate
	classQty
)

func (f *facts) values(c valueClass) []string {
	switch c {
	case classOrder:
		return f.orders
	case classDate:
		return f.dates
	case classQty:
		return f.qtys
	}
	return nil
}

// defaultYear completes dates spoken without a year (docs/ARCHITECTURE.md).
const defaultYear = 2026

var months = map[string]int{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

var numberWords = map[string]string{
	"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
	"eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13",
	"fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18",
	"nineteen": "19", "twenty": "20",
}

var (
	doneWords    = []string{"done", "updated", "changed", "shipped", "confirmed"}
	donePhrases  = []string{"has been", "have been", "all set"}
	notDoneWords = []string{"not", "won't", "wont", "didn't", "haven't", "hasn't", "couldn't", "can't",
		"cannot", "unable", "wasn't", "isn't", "cancelled", "canceled"}
	notDonePhrases = []string{"nothing was changed", "no change"}
	waitWords      = []string{"pending", "processing", "checking", "verifying"}
	waitPhrases    = []string{"in progress", "one moment", "let me check", "let me verify"}
	qtyFiller      = map[string]bool{"of": true, "to": true, "is": true, "now": true, "set": true, "at": true,
		"be": true, "will": true, "changed": true, "updated": true, "the": true, "a": true, "from": true}
	qtyUnits = map[string]bool{"unit": true, "units": true, "item": true, "items": true, "piece": true,
		"pieces": true, "pcs": true, "copies": true}
)

// tokens lower-cases s and splits it into words, keeping apostrophes and
// hyphens inside words so "won't" and "2026-12-03" survive.
func tokens(s string) []string {
	s = strings.ToLower(strings.ReplaceAll(s, "\u2019", "'"))
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'' || r == '-')
	})
}

// digits returns the number a token spells ("3", "3rd", "three"), or "".
func digits(t string) string {
	if w, ok := numberWords[t]; ok {
		return w
	}
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
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return ""
	}
	b := make([]byte, 0, 10)
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return string(b)
}

// parseISO accepts YYYY-MM-DD (and single-digit month or day).
func parseISO(t string) string {
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

func dayNum(t string) int {
	d := digits(t)
	if d == "" || len(d) > 2 {
		return 0
	}
	n, _ := strconv.Atoi(d)
	if n < 1 || n > 31 {
		return 0
	}
	return n
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

func hasPhrase(joined string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(joined, " "+p+" ") {
			return true
		}
	}
	return false
}

// readText extracts order numbers, dates, quantities and the claim from
// free text. Dates are read first so that a year is never taken for an
// order number and a day never for a quantity.
func readText(s string) facts {
	ts := tokens(s)
	used := make([]bool, len(ts))
	var f facts
	for i, t := range ts {
		if d := parseISO(t); d != "" {
			f.dates = appendUniq(f.dates, d)
			used[i] = true
			continue
		}
		m, ok := months[t]
		if !ok || used[i] {
			continue
		}
		day, at := 0, -1
		switch {
		case i+1 < len(ts) && !used[i+1] && dayNum(ts[i+1]) > 0: // December 3(rd)
			day, at = dayNum(ts[i+1]), i+1
		case i >= 1 && !used[i-1] && dayNum(ts[i-1]) > 0: // 3 December
			day, at = dayNum(ts[i-1]), i-1
		case i >= 2 && ts[i-1] == "of" && !used[i-2] && dayNum(ts[i-2]) > 0: // 3rd of December
			day, at = dayNum(ts[i-2]), i-2
		}
		if day == 0 {
			continue
		}
		used[i], used[at] = true, true
		y := defaultYear
		if j := max(i, at) + 1; j < len(ts) && year(ts[j]) > 0 {
			y = year(ts[j])
			used[j] = true
		}
		if d := isoDate(y, m, day); d != "" {
			f.dates = appendUniq(f.dates, d)
		}
	}
	for i, t := range ts {
		if used[i] {
			continue
		}
		if t == "quantity" || t == "qty" {
			if j := qtyAfter(ts, used, i); j >= 0 {
				f.qtys = appendUniq(f.qtys, trimZeros(digits(ts[j])))
				used[j] = true
			}
			continue
		}
		d := digits(t)
		switch {
		case d == "":
		case len(t) == 4 && len(d) == 4:
			f.orders = appendUniq(f.orders, d)
			used[i] = true
		case len(d) <= 3 && i+1 < len(ts) && qtyUnits[ts[i+1]]:
			f.qtys = appendUniq(f.qtys, trimZeros(d))
			used[i] = true
		}
	}
	joined := " " + strings.Join(ts, " ") + " "
	switch {
	case hasWord(ts, notDoneWords) || hasPhrase(joined, notDonePhrases):
		f.claim = claimNotDone
	case hasWord(ts, doneWords) || hasPhrase(joined, donePhrases):
		f.claim = claimDone
	}
	f.wait = hasWord(ts, waitWords) || hasPhrase(joined, waitPhrases)
	return f
}

// qtyAfter finds the number that follows "quantity" within four words,
// preferring the one after "to" ("quantity from 7 to 2" means 2).
func qtyAfter(ts []string, used []bool, i int) int {
	first := -1
	for j := i + 1; j < len(ts) && j <= i+4; j++ {
		if used[j] {
			break
		}
		if d := digits(ts[j]); d != "" && len(d) <= 3 {
			if ts[j-1] == "to" {
				return j
			}
			if first < 0 {
				first = j
			}
			continue
		}
		if !qtyFiller[ts[j]] {
			break
		}
	}
	return first
}

func trimZeros(d string) string {
	t := strings.TrimLeft(d, "0")
	if t == "" && d != "" {
		return "0"
	}
	return t
}

func appendUniq(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// normValue puts one argument or slot value in canonical form for its
// schema type, so "December 3" equals "2026-12-03" and "four" equals "4".
func normValue(typ, v string) string {
	v = strings.TrimSpace(v)
	switch typ {
	case "date":
		if d := parseISO(v); d != "" {
			return d
		}
		if f := readText(v); len(f.dates) == 1 {
			return f.dates[0]
		}
	case "integer":
		l := strings.ToLower(v)
		if w, ok := numberWords[l]; ok {
			return w
		}
		if l != "" && strings.Trim(l, "0123456789") == "" {
			return trimZeros(l)
		}
	}
	return strings.TrimPrefix(v, "#")
}

// classOf says how a value of this type is heard in speech.
func classOf(typ, norm string) valueClass {
	switch typ {
	case "date":
		return classDate
	case "integer":
		return classQty
	}
	if len(norm) == 4 && digits(norm) == norm {
		return classOrder
	}
	return classNone
}
