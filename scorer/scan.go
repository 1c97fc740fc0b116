package scorer

import (
	"strconv"
	"strings"
)

// valueSet is the values an utterance names, by class, in heard form:
// cur are named as they are (or will be); prior are named as the old
// values ("from Tuesday", "instead of 7 pm").
type valueSet struct {
	cur, prior map[valueClass][]string
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

func (sc *scanner) scan() {
	sc.dates()
	sc.times()
	sc.amounts()
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

// dates: ISO dates and month-name dates ("December 9", "9 Dec", "the 9th of
// December", "Wednesday, December 9 2027"), then weekdays named alone.
func (sc *scanner) dates() {
	ts := sc.ts
	for i, t := range ts {
		if d := parseISO(t); d != "" && sc.free(i) {
			sc.out.add(classDate, d, sc.prior(i))
			sc.used[i] = true
		}
	}
	for i, t := range ts {
		m, ok := months[t]
		if !ok || !sc.free(i) {
			continue
		}
		day, from, to := 0, i, i+1
		if sc.free(i + 1) {
			if n, used := dayAt(ts, i+1); n > 0 {
				day, to = n, i+1+used
			}
		}
		if day == 0 && sc.free(i-1) {
			if n, _ := dayAt(ts, i-1); n > 0 {
				day, from = n, i-1
			}
		}
		if day == 0 && i >= 2 && ts[i-1] == "of" && sc.free(i-2) {
			if n, _ := dayAt(ts, i-2); n > 0 {
				day, from = n, i-2
			}
		}
		if day == 0 {
			continue
		}
		y := defaultYear
		if to < len(ts) && year(ts[to]) > 0 {
			y = year(ts[to])
			to++
		}
		d := isoDate(y, m, day)
		if d == "" {
			continue
		}
		// A weekday just before the date is always free here: only ISO
		// dates and the tokens of earlier dates (which cannot reach past
		// this date's own free tokens) are marked so far.
		if from >= 1 {
			if _, ok := weekdays[ts[from-1]]; ok {
				from-- // "Wednesday, December 9": the weekday belongs to the date
			} else if from >= 2 && ts[from-1] == "the" {
				if _, ok := weekdays[ts[from-2]]; ok {
					from -= 2
				}
			}
		}
		sc.out.add(classDate, d, sc.prior(from))
		sc.mark(from, to)
	}
	for i, t := range ts {
		if w, ok := weekdays[t]; ok && sc.free(i) && (len(t) > 3 || t == "wed" || t == "fri") {
			sc.out.add(classDate, "wd:"+strconv.Itoa(int(w)), sc.prior(i))
			sc.used[i] = true
		}
	}
}

func ampmAt(ts []string, i int) (string, int) {
	if i >= len(ts) {
		return "", 0
	}
	switch ts[i] {
	case "am", "a.m":
		return "am", 1
	case "pm", "p.m":
		return "pm", 1
	case "a", "p":
		if i+1 < len(ts) && ts[i+1] == "m" {
			return ts[i] + "m", 2
		}
	case "in":
		if i+2 < len(ts) && ts[i+1] == "the" {
			switch ts[i+2] {
			case "morning":
				return "am", 3
			case "afternoon", "evening":
				return "pm", 3
			}
		}
	case "tonight":
		return "pm", 1
	}
	return "", 0
}

// times: "7:30 pm", "7pm", "19:30", "seven thirty", "7 o'clock", "half past
// seven", "quarter to eight", "noon", "midnight", and "at 8" when bareTime.
func (sc *scanner) times() {
	ts := sc.ts
	for i := range ts {
		if !sc.free(i) {
			continue
		}
		t := ts[i]
		h, m, to := -1, 0, i+1
		if t == "noon" || t == "midday" {
			sc.out.add(classTime, "12:00", sc.prior(i))
			sc.used[i] = true
			continue
		} else if t == "midnight" {
			sc.out.add(classTime, "00:00", sc.prior(i))
			sc.used[i] = true
			continue
		} else if (t == "half" || t == "quarter") && i+2 < len(ts) && (ts[i+1] == "past" || ts[i+1] == "to") {
			n, used := numberAt(ts, i+2)
			if n < 1 || n > 12 {
				continue
			}
			h, m, to = n, 30, i+2+used
			if t == "quarter" {
				m = 15
				if ts[i+1] == "to" {
					h, m = (n+10)%12+1, 45
				}
			}
		} else if strings.Contains(t, ":") {
			hh, mm, _ := strings.Cut(t, ":")
			ap := ""
			for _, suf := range []string{"am", "pm"} {
				if x, ok := strings.CutSuffix(mm, suf); ok {
					mm, ap = x, suf
				}
			}
			a, e1 := strconv.Atoi(hh)
			b, e2 := strconv.Atoi(mm)
			if e1 != nil || e2 != nil || len(mm) != 2 {
				continue
			}
			if ap == "" {
				ap, _ = ampmAt(ts, i+1)
				_, n := ampmAt(ts, i+1)
				to += n
			}
			if x := clockTime(a, b, ap); x != "" {
				sc.out.add(classTime, x, sc.prior(i))
				sc.mark(i, to)
			}
			continue
		} else if strings.HasSuffix(t, "am") || strings.HasSuffix(t, "pm") {
			if n, err := strconv.Atoi(t[:len(t)-2]); err == nil {
				if x := clockTime(n, 0, t[len(t)-2:]); x != "" {
					sc.out.add(classTime, x, sc.prior(i))
					sc.used[i] = true
				}
			}
			continue
		} else {
			n, used := numberAt(ts, i)
			if n < 1 || n > 12 || used == 0 || len(digits(t)) > 2 {
				continue
			}
			h, to = n, i+used
			minutes := false
			if sc.free(to) {
				if w := nextWord(ts, to); w == "oh" || w == "o" {
					if mm, u := numberAt(ts, to+1); mm >= 1 && mm <= 9 {
						m, to, minutes = mm, to+1+u, true
					}
				} else if mm, u := numberAt(ts, to); mm >= 10 && mm <= 59 && u > 0 && !countNouns[nextWord(ts, to+u)] {
					m, to, minutes = mm, to+u, true
				}
			}
			ap, _ := ampmAt(ts, to)
			oclock := nextWord(ts, to) == "o'clock" || nextWord(ts, to) == "oclock"
			prev := ""
			if i >= 1 {
				prev = ts[i-1]
			}
			at := prev == "at" && !countNouns[nextWord(ts, to)]
			lead := at || prev == "for" || prev == "to" || prev == "by" || prev == "until"
			if ap == "" && !oclock && !(at && sc.bareTime) && !(lead && minutes) {
				m = 0
				continue
			}
			if oclock {
				to++
			}
		}
		ap, n2 := ampmAt(ts, to)
		if x := clockTime(h, m, ap); x != "" {
			sc.out.add(classTime, x, sc.prior(i))
			sc.mark(i, to+n2)
		}
	}
}

func nextWord(ts []string, i int) string {
	if i < len(ts) {
		return ts[i]
	}
	return ""
}

var currencyWords = map[string]bool{"dollars": true, "dollar": true, "usd": true, "bucks": true,
	"euros": true, "euro": true, "eur": true, "pounds": true, "pound": true, "gbp": true}

// amounts: "$45.50", "45.50", "45 dollars and 50 cents", "forty-five dollars".
func (sc *scanner) amounts() {
	ts := sc.ts
	for i, t := range ts {
		if !sc.free(i) {
			continue
		}
		if strings.ContainsAny(t[:1], "$€£") {
			if a := amount(t); a != "" {
				sc.out.add(classAmount, a, sc.prior(i))
				sc.used[i] = true
			}
			continue
		}
		if strings.Contains(t, ".") && hasDigit(t) {
			if a := amount(t); a != "" {
				sc.out.add(classAmount, a, sc.prior(i))
				sc.used[i] = true
			}
			continue
		}
		n, used := numberAt(ts, i)
		if n < 0 || used == 0 || !currencyWords[nextWord(ts, i+used)] {
			continue
		}
		to := i + used + 1
		val := strconv.Itoa(n)
		if nextWord(ts, to) == "and" && to+1 < len(ts) {
			if c, u := numberAt(ts, to+1); c >= 0 && c < 100 && (nextWord(ts, to+1+u) == "cents" || nextWord(ts, to+1+u) == "cent") {
				val = amount(strconv.Itoa(n) + "." + twoDigits(c))
				to += 2 + u
			}
		}
		sc.out.add(classAmount, val, sc.prior(i))
		sc.mark(i, to)
	}
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
		if _, ord := ordinals[ts[i]]; ord {
			continue
		}
		next := nextWord(ts, i+used)
		prev := ""
		if i > 0 {
			prev = ts[i-1]
		}
		if countNouns[next] || prev == "for" || prev == "of" {
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
