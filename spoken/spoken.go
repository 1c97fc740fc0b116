package spoken

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	reHHMM   = regexp.MustCompile(`^([01]\d|2[0-3]):([0-5]\d)$`)
	reAmount = regexp.MustCompile(`^(\d+)\.(\d\d)$`)
)

var (
	unitWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	decadeWords = []string{"", "ten", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	alphabet    = []string{"Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India",
		"Juliett", "Kilo", "Lima", "Mike", "November", "Oscar", "Papa", "Quebec", "Romeo", "Sierra", "Tango",
		"Uniform", "Victor", "Whiskey", "X-ray", "Yankee", "Zulu"}
	dayOrdinals = []string{"", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
		"tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
		"eighteenth", "nineteenth", "twentieth"}
)

// Below100 says 0..99: "seventy-five".
func Below100(n int) string {
	if n < 20 {
		return unitWords[n]
	}
	if n%10 == 0 {
		return decadeWords[n/10]
	}
	return decadeWords[n/10] + "-" + unitWords[n%10]
}

// InWords says 0..999999; and: "two hundred and fifteen" (true) or "two
// hundred fifteen" (false).
func InWords(n int, and bool) string {
	if n < 100 {
		return Below100(n)
	}
	if n < 1000 {
		s := unitWords[n/100] + " hundred"
		if r := n % 100; r > 0 {
			if and {
				s += " and"
			}
			s += " " + Below100(r)
		}
		return s
	}
	s := InWords(n/1000, and) + " thousand"
	if r := n % 1000; r > 0 {
		if r < 100 && and {
			s += " and"
		}
		s += " " + InWords(r, and)
	}
	return s
}

// Ordinal says a day of the month: "8th" (digits) or "eighth".
func Ordinal(d int, digits bool) string {
	if !digits {
		if d <= 20 {
			return dayOrdinals[d]
		}
		if d == 30 {
			return "thirtieth"
		}
		return decadeWords[d/10] + "-" + dayOrdinals[d%10]
	}
	suffix := "th"
	if d < 11 || d > 13 {
		switch d % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(d) + suffix
}

// Money says an amount "215.00" every way this package knows.
func Money(v string) []string {
	m := reAmount.FindStringSubmatch(v)
	if m == nil {
		return nil
	}
	d, _ := strconv.Atoi(m[1])
	c, _ := strconv.Atoi(m[2])
	unit := "dollars"
	if d == 1 {
		unit = "dollar"
	}
	out := []string{"$" + m[1] + "." + m[2], m[1] + "." + m[2] + " dollars"}
	if c == 0 {
		out = append(out, "$"+m[1], m[1]+" dollars", InWords(d, true)+" "+unit, InWords(d, false)+" "+unit)
		if d >= 100 && d < 1000 && d%100 >= 10 {
			// "two fifty": hundreds, then the rest as one number.
			out = append(out, unitWords[d/100]+" "+Below100(d%100))
		}
		if d%100 == 0 && d >= 100 && d < 1000 {
			out = append(out, unitWords[d/100]+" hundred bucks")
		}
		return out
	}
	out = append(out, InWords(d, true)+" "+unit+" and "+Below100(c)+" cents",
		InWords(d, false)+" "+unit+" "+Below100(c))
	if d < 100 && c >= 10 {
		out = append(out, Below100(d)+" "+Below100(c)) // "forty-five fifty"
	}
	return out
}

// Date says "2026-12-08" every way this package knows; relative
// forms ("tomorrow") are against today, when given.
func Date(v string, today time.Time) []string {
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return nil
	}
	wd, mo, d := t.Weekday().String(), t.Month().String(), t.Day()
	out := []string{
		wd + ", " + mo + " " + strconv.Itoa(d),
		mo + " " + strconv.Itoa(d),
		mo + " " + Ordinal(d, true),
		"the " + Ordinal(d, true) + " of " + mo,
		wd + " the " + Ordinal(d, true),
		wd + " " + mo + " " + Ordinal(d, true),
		wd + ", the " + Ordinal(d, false) + " of " + mo,
		strconv.Itoa(d) + " " + mo,
		"the " + Ordinal(d, true),
		"the " + Ordinal(d, false),
		v,
	}
	if !today.IsZero() {
		switch int(t.Sub(today).Hours() / 24) {
		case 0:
			out = append(out, "today")
		case 1:
			out = append(out, "tomorrow")
		case 2:
			out = append(out, "the day after tomorrow")
		}
		if days := int(t.Sub(today).Hours() / 24); days > 1 && days < 7 {
			out = append(out, "this "+wd)
		}
	}
	return out
}

// Clock says "19:30" every way this package knows.
func Clock(v string) []string {
	m := reHHMM.FindStringSubmatch(v)
	if m == nil {
		return nil
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	h12 := h % 12
	if h12 == 0 {
		h12 = 12
	}
	ampm, dotted, part := "am", "a.m.", "in the morning"
	switch {
	case h >= 12 && h < 17:
		ampm, dotted, part = "pm", "p.m.", "in the afternoon"
	case h >= 17:
		ampm, dotted, part = "pm", "p.m.", "in the evening"
	}
	hw := InWords(h12, false)
	out := []string{v}
	if mi == 0 {
		out = append(out,
			fmt.Sprintf("%d %s", h12, ampm), fmt.Sprintf("%d%s", h12, ampm), fmt.Sprintf("%d:00 %s", h12, ampm),
			fmt.Sprintf("%d %s", h12, dotted), hw+" "+ampm, hw+" "+part, hw+" o'clock "+part,
			fmt.Sprintf("%d o'clock %s", h12, part))
		if h == 12 {
			out = append(out, "noon", "midday")
		}
		return out
	}
	out = append(out,
		fmt.Sprintf("%d:%02d %s", h12, mi, ampm), fmt.Sprintf("%d:%02d %s", h12, mi, dotted),
		fmt.Sprintf("%d:%02d %s", h12, mi, part), hw+" "+Below100(mi)+" "+ampm, hw+" "+Below100(mi)+" "+part)
	switch mi {
	case 30:
		out = append(out, "half past "+hw+" "+part)
	case 15:
		out = append(out, "quarter past "+hw+" "+part)
	case 45:
		next := h12%12 + 1
		out = append(out, "quarter to "+InWords(next, false)+" "+part)
	}
	return out
}

// Count says a small count: "4", "four".
func Count(v string) []string {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 99 {
		return nil
	}
	return []string{v, Below100(n)}
}

// Code says a code character by character every way this package
// knows: "R4M9", "R 4 M 9", "R four M nine", "Romeo four Mike nine";
// all-digit codes also in pairs ("forty-four seventy-one") and with
// "double".
func Code(v string) []string {
	var plain, spaced, named, nato []string
	digits := true
	for _, r := range v {
		s := string(r)
		plain = append(plain, s)
		switch {
		case r >= '0' && r <= '9':
			w := unitWords[r-'0']
			spaced, named, nato = append(spaced, s), append(named, w), append(nato, w)
		case r >= 'A' && r <= 'Z':
			digits = false
			spaced, named, nato = append(spaced, s), append(named, s), append(nato, alphabet[r-'A'])
		default:
			return nil
		}
	}
	out := []string{v, strings.Join(spaced, " "), strings.Join(named, " "), strings.Join(plain, "-")}
	if !digits {
		return append(out, strings.Join(nato, " "))
	}
	out = append(out, strings.Join(named, ", "))
	if len(v) == 4 {
		a, _ := strconv.Atoi(v[:2])
		b, _ := strconv.Atoi(v[2:])
		if v[0] != '0' && v[2] != '0' {
			out = append(out, Below100(a)+" "+Below100(b))
		}
		// "double four seven one"
		var dbl []string
		for i := 0; i < len(v); i++ {
			if i+1 < len(v) && v[i] == v[i+1] {
				dbl = append(dbl, "double "+unitWords[v[i]-'0'])
				i++
				continue
			}
			dbl = append(dbl, unitWords[v[i]-'0'])
		}
		if len(dbl) < len(v) {
			out = append(out, strings.Join(dbl, " "))
		}
	}
	return out
}

// Name says a name or enum value as written and with its dashes
// spoken as spaces ("rainy-day" → "rainy day").
func Name(v string) []string {
	out := []string{v}
	if s := strings.ReplaceAll(v, "-", " "); s != v {
		out = append(out, s)
	}
	return out
}
