package entity

import (
	"strconv"
	"strings"
)

// countNouns follow a number that counts something ("four people"), so the
// number is not a time ("at 8 people" is not 8 o'clock).
var countNouns = map[string]bool{
	"people": true, "persons": true, "person": true, "guests": true, "guest": true, "adults": true,
	"children": true, "kids": true, "diners": true, "units": true, "unit": true, "items": true,
	"item": true, "pieces": true, "piece": true, "pcs": true, "copies": true, "nights": true,
	"night": true, "seats": true, "seat": true, "tickets": true, "ticket": true, "rooms": true,
	"room": true, "bags": true, "boxes": true,
}

// leadWords before an hour and its minutes make them a time ("at seven
// thirty", "by 9 30").
var leadWords = map[string]bool{"at": true, "for": true, "to": true, "by": true, "until": true, "till": true, "from": true}

// IsCountNoun reports a noun that makes the number before it a count.
func IsCountNoun(t string) bool { return countNouns[t] }

// Clock is a time of day read at a position: canonical 24-hour "HH:MM" and,
// when the half of the day was not said ("9:00", "nine thirty"), Alt the
// other half ("21:00"); Used tokens.
type Clock struct {
	Value, Alt string
	Used       int
}

// HalfOfDay reads "am", "pm", "a.m.", "a m", "in the morning", "in the
// afternoon", "in the evening", "at night", "tonight", "this morning".
func HalfOfDay(ts []string, i int) (string, int) {
	switch word(ts, i) {
	case "am", "a.m":
		return "am", 1
	case "pm", "p.m":
		return "pm", 1
	case "a", "p":
		if word(ts, i+1) == "m" {
			return ts[i] + "m", 2
		}
	case "in":
		if word(ts, i+1) == "the" {
			switch word(ts, i+2) {
			case "morning":
				return "am", 3
			case "afternoon", "evening":
				return "pm", 3
			}
		}
	case "this":
		switch word(ts, i+1) {
		case "morning":
			return "am", 2
		case "afternoon", "evening":
			return "pm", 2
		}
	case "at":
		if word(ts, i+1) == "night" {
			return "night", 2
		}
	case "tonight":
		return "pm", 1
	}
	return "", 0
}

// ClockOf renders hour h and minute m: with ampm "am"/"pm"/"night" a
// definite time; without, a definite time when h is 0 or above 12 or
// the hour was written with a leading zero (zero), else the morning reading
// with the evening one as Alt. Empty when out of range.
func ClockOf(h, m int, ampm string, zero bool) (string, string) {
	if h < 0 || h > 23 || m < 0 || m > 59 {
		return "", ""
	}
	switch ampm {
	case "am":
		if h > 12 || h == 0 {
			return "", ""
		}
		return twoDigits(h%12) + ":" + twoDigits(m), ""
	case "pm":
		if h > 12 || h == 0 {
			return "", ""
		}
		return twoDigits(h%12+12) + ":" + twoDigits(m), ""
	case "night":
		if h > 12 || h == 0 {
			return "", ""
		}
		if h == 12 || h < 5 {
			return twoDigits(h%12) + ":" + twoDigits(m), "" // "12 at night", "2 at night"
		}
		return twoDigits(h+12) + ":" + twoDigits(m), ""
	}
	if h == 0 || h > 12 || zero {
		return twoDigits(h) + ":" + twoDigits(m), ""
	}
	return twoDigits(h) + ":" + twoDigits(m), twoDigits((h+12)%24) + ":" + twoDigits(m)
}

// ClockAt reads a time of day at ts[i]: "9 am", "9am", "9:00 am", "09:00",
// "21:30", "nine in the morning", "quarter past nine", "half past two",
// "ten to five", "noon", "midnight", "7 o'clock", "nine oh five pm", and,
// after at/for/to/by/until, "seven thirty"; with bare, "at 8" too. A bare
// hour without am/pm is ambiguous: Value the morning reading, Alt the
// evening one.
func ClockAt(ts []string, i int, bare bool) Clock {
	t := word(ts, i)
	switch t {
	case "":
		return Clock{}
	case "noon", "midday":
		return Clock{Value: "12:00", Used: 1}
	case "midnight":
		return Clock{Value: "00:00", Used: 1}
	}
	if t == "12" || t == "twelve" {
		switch word(ts, i+1) {
		case "noon", "midday":
			return Clock{Value: "12:00", Used: 2}
		case "midnight":
			return Clock{Value: "00:00", Used: 2}
		}
	}
	withHalf := func(h, m, to int, zero bool) Clock {
		ap, n := HalfOfDay(ts, to)
		v, alt := ClockOf(h, m, ap, zero)
		if v == "" {
			return Clock{}
		}
		return Clock{Value: v, Alt: alt, Used: to + n - i}
	}
	// "half past two", "quarter to eight", "ten past nine", "twenty-five to six"
	if rel := word(ts, i+1); rel == "past" || rel == "after" || rel == "to" || rel == "minutes" {
		k := i + 2
		if rel == "minutes" {
			rel, k = word(ts, i+2), i+3
		}
		m := -1
		switch t {
		case "half":
			m = 30
		case "quarter":
			m = 15
		default:
			if n := NumberAt(ts, i); n.Used == 1 && !n.Ordinal && n.Int >= 1 && n.Int <= 29 {
				m = int(n.Int)
			}
		}
		n := NumberAt(ts, k)
		ok := m > 0 && n.Used > 0 && !n.Ordinal && !n.Pair && n.Int >= 1 && n.Int <= 12 && !countNouns[word(ts, k+n.Used)]
		switch rel {
		case "past", "after":
			// fine with any minute: "past" names a time
		case "to":
			// "from two to four" is a range: only a quarter, or five,
			// ten, twenty, twenty-five minutes in words, not after "from".
			ok = ok && (t == "quarter" || (m == 5 || m == 10 || m == 20 || m == 25) && IsNumberWord(t) && n.Words && word(ts, i-1) != "from" || k == i+3)
		default:
			ok = false
		}
		if ok {
			h := int(n.Int)
			if rel == "to" {
				h, m = (h+10)%12+1, 60-m
			}
			return withHalf(h, m, k+n.Used, false)
		}
	}
	if strings.Contains(t, ":") {
		hh, mm, _ := strings.Cut(t, ":")
		ap := ""
		for _, suf := range []string{"am", "pm"} {
			if x, ok := strings.CutSuffix(mm, suf); ok {
				mm, ap = x, suf
			}
		}
		h, e1 := strconv.Atoi(hh)
		m, e2 := strconv.Atoi(mm)
		if e1 != nil || e2 != nil || len(mm) != 2 || len(hh) > 2 {
			return Clock{}
		}
		if ap != "" {
			v, _ := ClockOf(h, m, ap, false)
			return Clock{Value: v, Used: 1}
		}
		return withHalf(h, m, i+1, len(hh) == 2 && hh[0] == '0')
	}
	if x, ap, ok := cutHalf(t); ok {
		if h, err := strconv.Atoi(x); err == nil && len(x) <= 2 {
			v, _ := ClockOf(h, 0, ap, false)
			if v != "" {
				return Clock{Value: v, Used: 1}
			}
		}
		return Clock{}
	}
	// "seven-thirty": an hour and its minutes in one hyphenated token
	if a, b, ok := strings.Cut(t, "-"); ok && !strings.Contains(b, "-") {
		hv, hk, hord, hok := numWord(a)
		mv, mk, mord, mok := numWord(b)
		ap, _ := HalfOfDay(ts, i+1)
		if hok && mok && !hord && !mord && (hk == kUnit || hk == kTeen) && hv >= 1 && hv <= 12 && (mk == kTens || mk == kTeen) && mv >= 10 &&
			(ap != "" || leadWords[word(ts, i-1)]) {
			return withHalf(int(hv), int(mv), i+1, false)
		}
	}
	// "half seven" (7:30, as said in Britain), with am/pm or after at/by/for
	if t == "half" {
		if n := NumberAt(ts, i+1); n.Used == 1 && n.Words && !n.Ordinal && n.Int >= 1 && n.Int <= 12 {
			ap, _ := HalfOfDay(ts, i+2)
			prev := word(ts, i-1)
			if ap != "" || prev == "at" || prev == "by" || prev == "for" || prev == "until" {
				return withHalf(int(n.Int), 30, i+2, false)
			}
		}
	}
	n := NumberAt(ts, i)
	// "twenty hundred hours", "nineteen thirty hours", "0900 hours"
	if n.Used > 0 && !n.Ordinal && n.Int >= 0 && n.Int <= 2359 && n.Int%100 <= 59 && word(ts, i+n.Used) == "hours" &&
		(n.Int >= 100 || len(DigitsOf(t)) == 4) {
		v, _ := ClockOf(int(n.Int/100), int(n.Int%100), "", true)
		return Clock{Value: v, Used: n.Used + 1}
	}
	if n.Used == 0 || n.Ordinal || n.Int < 1 || len(DigitsOf(t)) > 2 {
		return Clock{}
	}
	h, m, to := int(n.Int), 0, i+n.Used
	minutes := false
	if n.Pair {
		// "nine thirty", "twelve forty-five"
		if n.Hi > 12 || n.Lo > 59 {
			return Clock{}
		}
		h, m, minutes = int(n.Hi), int(n.Lo), true
	} else if n.Int > 12 {
		return Clock{}
	} else if w := word(ts, to); w == "oh" || w == "o" {
		if mm := NumberAt(ts, to+1); mm.Used == 1 && mm.Int >= 1 && mm.Int <= 9 && !mm.Ordinal {
			m, to, minutes = int(mm.Int), to+2, true
		}
	} else if mm := NumberAt(ts, to); mm.Used > 0 && !mm.Ordinal && !mm.Pair && mm.Int >= 10 && mm.Int <= 59 && !countNouns[word(ts, to+mm.Used)] && (n.Words == mm.Words) {
		m, to, minutes = int(mm.Int), to+mm.Used, true
	}
	if ap, _ := HalfOfDay(ts, to); ap != "" {
		return withHalf(h, m, to, false)
	}
	if w := word(ts, to); w == "o'clock" || w == "oclock" {
		c := withHalf(h, m, to+1, false)
		c.Used = max(c.Used, to+1-i)
		return c
	}
	prev := word(ts, i-1)
	at := prev == "at" && !countNouns[word(ts, to)]
	lead := at || leadWords[prev]
	if at && bare && !minutes || lead && minutes {
		return withHalf(h, m, to, false)
	}
	return Clock{}
}

// cutHalf splits "9am" into "9" and "am".
func cutHalf(t string) (string, string, bool) {
	for _, suf := range []string{"am", "pm"} {
		if x, ok := strings.CutSuffix(t, suf); ok && x != "" && isDigitByte(x[0]) {
			return x, suf, true
		}
	}
	return "", "", false
}
