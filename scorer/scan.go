package scorer

import (
	"strconv"
	"strings"

	"github.com/callproof/callproof/entity"
)

// valueSet is the values an utterance names, by class, in heard form:
// cur are named as they are (or will be); prior are named as the old
// values ("from Tuesday", "instead of 7 pm").
type valueSet struct {
	cur, prior map[valueClass][]string
	// unplaced are values named that cannot be compared with any record:
	// relative dates ("tomorrow") in a history without the call's date.
	unplaced []string
	// pairs are numbers said as two groups in words that no class took
	// ("forty-four seventy-one", "two fifteen"), as "hi:lo": a code
	// (4471), an amount (215 or 2.15), whichever the record holds.
	pairs []string
}

func (s *valueSet) add(c valueClass, x string, prior bool) {
	if x == "" {
		return
	}
	m := &s.cur
	if prior {
		m = &s.prior
	}
	if *m == nil {
		*m = map[valueClass][]string{}
	}
	(*m)[c] = appendUniq((*m)[c], x)
}

// scanner reads typed values out of one clause's tokens.
type scanner struct {
	ts       []string
	used     []bool
	bareTime bool            // "at 8" is a time (the catalogue has a time argument)
	keyWords map[string]bool // words that introduce a record key ("booking 512")
	ref      entity.Ref      // the call's date: relative dates resolve against it
	out      *valueSet
}

// scanValues reads every value in s. bareTime lets "at 8" read as a time.
func scanValues(s string, bareTime bool) valueSet {
	var out valueSet
	ts := tokens(s)
	sc := scanner{ts: ts, used: make([]bool, len(ts)), bareTime: bareTime, out: &out}
	sc.scan()
	return out
}

// scan reads the classes in turn, each token used once. Times go before
// dates so that "8 tonight" is a time, not today; codes spelled with
// letters before dates ("Romeo four November nine"); other spoken codes
// before counts so that "four one two eight" is one code.
func (sc *scanner) scan() {
	sc.times()
	sc.spokenCodes(true)
	sc.dates()
	sc.amounts()
	sc.spokenCodes(false)
	sc.pairs()
	sc.counts()
	sc.ids()
}

// prior reports whether the value at ts[i] is named as the old one.
func (sc *scanner) prior(i int) bool {
	for j := i - 1; j >= 0 && j >= i-2; j-- {
		t := sc.ts[j]
		if !priorMarkers[t] {
			continue
		}
		if t == "from" {
			return sc.laterTo(i)
		}
		if t == "not" && j == i-2 && !isFiller(sc.ts[i-1]) {
			continue
		}
		return true
	}
	return false
}

func isFiller(t string) bool {
	switch t {
	case "on", "at", "for", "to", "of", "the", "a", "an", "be":
		return true
	}
	return false
}

func (sc *scanner) laterTo(i int) bool {
	for j := i + 1; j < len(sc.ts); j++ {
		if sc.ts[j] == "to" || sc.ts[j] == "until" {
			return true
		}
	}
	return false
}

func (sc *scanner) mark(from, to int) {
	for k := from; k < to && k < len(sc.used); k++ {
		sc.used[k] = true
	}
}

func (sc *scanner) free(i int) bool { return i >= 0 && i < len(sc.ts) && !sc.used[i] }

// each calls read at every free token with ts cut at the next used one,
// so a value is never read across another; read returns how many tokens
// it used (and marked), 0 for none.
func (sc *scanner) each(read func(ts []string, i int) int) {
	end := -1
	for i := 0; i < len(sc.ts); i++ {
		if sc.used[i] {
			continue
		}
		if end <= i {
			end = i
			for end < len(sc.ts) && !sc.used[end] {
				end++
			}
		}
		if n := read(sc.ts[:end], i); n > 0 {
			i += n - 1
			end = -1
		}
	}
}

// head skips the words a date starts with that are not the date itself
// ("on", "the", "next"), so a prior marker is looked for before the value.
func (sc *scanner) head(from, to int) int {
	for from+1 < to {
		switch sc.ts[from] {
		case "on", "the", "this", "next", "coming":
			from++
			continue
		}
		break
	}
	return from
}

// dates (entity.DateAt): ISO, "12/08", month-name dates ("December 9", "9
// Dec", "the 9th of December", "Wednesday, December 9 2027") completed
// with the call's year (defaultYear without a call date), weekdays named
// alone ("wd:N"), the day of the month alone ("dom:N"), and relative days
// ("tomorrow", "in three days") when the call's date is known.
func (sc *scanner) dates() {
	sc.each(func(ts []string, i int) int {
		d, n := entity.DateAt(ts, i)
		if n == 0 {
			return 0
		}
		prior := sc.prior(sc.head(i, i+n))
		if h := sc.heardDate(d); h != "" {
			sc.out.add(classDate, h, prior)
		} else if !prior {
			sc.out.unplaced = appendUniq(sc.out.unplaced, strings.Join(ts[i:i+n], " "))
		}
		sc.mark(i, i+n)
		return n
	})
}

// heardDate is a date said, in heard form: an ISO date, "wd:N" for a
// weekday alone (also "next Tuesday": which week is not certain), "dom:N"
// for a day of the month alone, or "" for a relative date with no call
// date to resolve it against.
func (sc *scanner) heardDate(d entity.DateSpec) string {
	switch {
	case d.Month > 0:
		v, _ := d.Resolve(sc.ref, defaultYear)
		return v
	case d.Relative:
		v, _ := d.Resolve(sc.ref, 0)
		return v
	case d.HasWeekday:
		return "wd:" + strconv.Itoa(int(d.Weekday))
	case d.Day > 0:
		return "dom:" + strconv.Itoa(d.Day)
	}
	return ""
}

// times (entity.ClockAt): "7:30 pm", "7pm", "9 am", "09:00", "19:30",
// "seven thirty" after at/for/to/by/until/from (after "for" only with a
// time argument in the catalogue), "half past eight in the
// evening", "quarter to eight", "noon", "midnight", "7 o'clock", and "at 8"
// when the catalogue has a time argument.
func (sc *scanner) times() {
	sc.each(func(ts []string, i int) int {
		c := entity.ClockAt(ts, i, sc.bareTime)
		if c.Used > 0 && c.Used <= 2 && !sc.bareTime && c.Alt != "" && i > 0 && ts[i-1] == "for" && wordsOnly(ts[i:i+c.Used]) {
			// No time argument in the catalogue: "goes out for two
			// fifty", a bare pair without am/pm after "for", is an
			// amount or a code (a pair), not a clock time.
			return 0
		}
		if c.Used > 0 {
			sc.out.add(classTime, heardClock(c.Value, c.Alt), sc.prior(i))
			sc.mark(i, i+c.Used)
		}
		return c.Used
	})
}

// wordsOnly: no token has a digit ("two fifteen", not "2:15").
func wordsOnly(ts []string) bool {
	for _, t := range ts {
		if hasDigit(t) {
			return false
		}
	}
	return true
}

// amounts: "$45.50", "45.50", "45 dollars and 50 cents", "forty-five
// dollars", "two hundred and fifteen dollars", "forty cents" (entity.MoneyAt);
// "two fifty dollars" names 250 or 2.5 ("250|2.5").
func (sc *scanner) amounts() {
	sc.each(func(ts []string, i int) int {
		if t := ts[i]; strings.Contains(t, ".") && hasDigit(t) && !strings.HasPrefix(t, "$") {
			if a := amount(t); a != "" {
				sc.out.add(classAmount, a, sc.prior(i))
				sc.used[i] = true
				return 1
			}
			return 0
		}
		m := entity.MoneyAt(ts, i)
		if m.Used == 0 {
			return 0
		}
		v := m.Value
		if m.Alt != "" {
			v += "|" + m.Alt
		}
		sc.out.add(classAmount, v, sc.prior(i))
		sc.mark(i, i+m.Used)
		return m.Used
	})
}

// spokenCodes: a code said one character at a time ("four one two
// eight", "R four M nine", "Romeo four Mike nine", "double four seven
// one"), read as the written code ("4128", "r4m9").
//
// lettered: only codes with a letter and a digit and three characters or
// more ("Romeo four November nine"), read before dates so that "four
// November" inside one is not the 4th of November; the rest are read
// after dates and amounts.
func (sc *scanner) spokenCodes(lettered bool) {
	sc.each(func(ts []string, i int) int {
		c, n := entity.SpokenCodeAt(ts, i)
		if n > 0 && lettered && !(len(c) >= 3 && strings.ContainsAny(c, "0123456789") && strings.Trim(c, "0123456789") != "") {
			n = 0
		}
		if n > 0 {
			sc.out.add(classID, idForm(c), sc.prior(i))
			sc.mark(i, i+n)
		}
		return n
	})
}

// pairs: a number said as two groups in words ("forty-four seventy-one")
// left over by times, dates, amounts and codes, unless it counts
// something ("two fifty people") or is a year after a date.
func (sc *scanner) pairs() {
	sc.each(func(ts []string, i int) int {
		n := entity.NumberAt(ts, i)
		if !n.Pair || !n.Words || entity.IsCountNoun(nextWord(ts, i+n.Used)) || sc.prior(i) {
			return 0
		}
		if i > 0 && sc.used[i-1] && n.Hi >= 19 && n.Hi <= 20 {
			return 0 // "December 8, twenty twenty-six": a year
		}
		sc.out.pairs = appendUniq(sc.out.pairs, strconv.FormatInt(n.Hi, 10)+":"+strconv.FormatInt(n.Lo, 10))
		sc.mark(i, i+n.Used)
		return n.Used
	})
}

// pairReadings are the values a pair "hi:lo" can name: the code and the
// amount hi*100+lo, and the amount hi.lo.
func pairReadings(p string) (code, whole, cents string) {
	a, b, _ := strings.Cut(p, ":")
	lo, _ := strconv.Atoi(b)
	return idForm(a + twoDigits(lo)), amount(a + twoDigits(lo)), amount(a + "." + twoDigits(lo))
}

var countLeads = map[string]bool{"quantity": true, "qty": true, "size": true, "count": true}

// counts: a number before a count noun ("four people"), after "for" or
// "of" ("a table for four", "party of 4"), or within four words after
// "quantity" ("quantity from 7 to 2" names 2).
func (sc *scanner) counts() {
	ts := sc.ts
	for i := range ts {
		if !sc.free(i) {
			continue
		}
		if countLeads[ts[i]] {
			if j, used := sc.countAfter(i); j >= 0 {
				n, _ := numberAt(ts, j)
				sc.out.add(classCount, strconv.Itoa(n), sc.prior(j))
				sc.mark(j, j+used)
			}
			continue
		}
		n, used := numberAt(ts, i)
		if n < 0 || used == 0 || len(digits(ts[i])) > 3 {
			continue
		}
		if entity.NumberAt(ts, i).Ordinal && digits(ts[i]) == "" {
			continue // "for third": an ordinal in words counts nothing
		}
		next := nextWord(ts, i+used)
		prev := ""
		if i > 0 {
			prev = ts[i-1]
		}
		if entity.IsCountNoun(next) || prev == "for" || prev == "of" {
			sc.out.add(classCount, strconv.Itoa(n), sc.prior(i))
			sc.mark(i, i+used)
		}
	}
}

var countFiller = map[string]bool{"of": true, "to": true, "is": true, "now": true, "set": true, "at": true,
	"be": true, "will": true, "changed": true, "updated": true, "the": true, "a": true, "from": true}

// countAfter finds the number that follows a count word within four
// words, preferring the one after "to".
func (sc *scanner) countAfter(i int) (int, int) {
	ts := sc.ts
	first, firstUsed := -1, 0
	for j := i + 1; j < len(ts) && j <= i+4; j++ {
		if sc.used[j] {
			break
		}
		if n, used := numberAt(ts, j); n >= 0 && used > 0 && len(digits(ts[j])) <= 3 {
			if ts[j-1] == "to" {
				return j, used
			}
			if first < 0 {
				first, firstUsed = j, used
			}
			continue
		}
		if !countFiller[ts[j]] {
			break
		}
	}
	return first, firstUsed
}

var idLeads = map[string]bool{"number": true, "no": true, "ref": true, "reference": true, "id": true,
	"code": true, "confirmation": true, "#": true}

// ids: what is left with digits in it: codes ("bk-4471"), numbers of four
// or more digits, and shorter numbers after "number", "ref", "#" or a
// record noun.
func (sc *scanner) ids() {
	for i, t := range sc.ts {
		if !sc.free(i) || !hasDigit(t) {
			continue
		}
		id := idForm(t)
		d := digits(strings.TrimPrefix(t, "#"))
		if d == "" || strings.HasPrefix(t, "#") {
			// a code with letters, or a "#" number
		} else if len(d) >= 4 && d == strings.TrimPrefix(t, "#") {
			// a number of four digits or more
		} else if i > 0 && (idLeads[sc.ts[i-1]] || sc.keyWords[sc.ts[i-1]]) && d == t {
			// a shorter number after "number", "ref", "#" or a record noun
		} else {
			continue
		}
		sc.out.add(classID, id, sc.prior(i))
		sc.used[i] = true
	}
}

func nextWord(ts []string, i int) string {
	if i < len(ts) {
		return ts[i]
	}
	return ""
}
