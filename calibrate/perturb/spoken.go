package perturb

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Dimension is the kind of a value, which decides how it can be said.
type Dimension string

// The dimensions, plus Verb for paraphrases of the claim itself.
const (
	Money Dimension = "money"
	Date  Dimension = "date"
	Clock Dimension = "time"
	Count Dimension = "count"
	Code  Dimension = "code"
	Name  Dimension = "name"
	Verb  Dimension = "verb"
)

// Dimensions lists every dimension in report order.
func Dimensions() []Dimension { return []Dimension{Money, Date, Clock, Count, Code, Name, Verb} }

var (
	reISODate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	reHHMM    = regexp.MustCompile(`^([01]\d|2[0-3]):([0-5]\d)$`)
	reAmount  = regexp.MustCompile(`^(\d+)\.(\d\d)$`)
	reSmall   = regexp.MustCompile(`^\d{1,2}$`)
	reCode    = regexp.MustCompile(`^[A-Z0-9]{3,8}$`)
)

// dimensionOf classifies a value by its argument's declared type and its
// shape.
func dimensionOf(argType, value string) (Dimension, bool) {
	switch {
	case argType == "date" || reISODate.MatchString(value):
		return Date, true
	case argType == "time" || reHHMM.MatchString(value):
		return Clock, true
	case reAmount.MatchString(value):
		return Money, true
	case reSmall.MatchString(value):
		return Count, true
	case reCode.MatchString(value) && strings.ContainsAny(value, "0123456789"):
		return Code, true
	case value != "" && !strings.ContainsAny(value, "0123456789"):
		return Name, true
	}
	return "", false
}

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

// below100 says 0..99: "seventy-five".
func below100(n int) string {
	if n < 20 {
		return unitWords[n]
	}
	if n%10 == 0 {
		return decadeWords[n/10]
	}
	return decadeWords[n/10] + "-" + unitWords[n%10]
}

// inWords says 0..999999; and: "two hundred and fifteen" (true) or "two
// hundred fifteen" (false).
func inWords(n int, and bool) string {
	if n < 100 {
		return below100(n)
	}
	if n < 1000 {
		s := unitWords[n/100] + " hundred"
		if r := n % 100; r > 0 {
			if and {
				s += " and"
			}
			s += " " + below100(r)
		}
		return s
	}
	s := inWords(n/1000, and) + " thousand"
	if r := n % 1000; r > 0 {
		if r < 100 && and {
			s += " and"
		}
		s += " " + inWords(r, and)
	}
	return s
}

// ordinal says a day of the month: "8th" (digits) or "eighth".
func ordinal(d int, digits bool) string {
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

// moneyForms says an amount "215.00" every way this package knows.
func moneyForms(v string) []string {
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
		out = append(out, "$"+m[1], m[1]+" dollars", inWords(d, true)+" "+unit, inWords(d, false)+" "+unit)
		if d >= 100 && d < 1000 && d%100 >= 10 {
			// "two fifty": hundreds, then the rest as one number.
			out = append(out, unitWords[d/100]+" "+below100(d%100))
		}
		if d%100 == 0 && d >= 100 && d < 1000 {
			out = append(out, unitWords[d/100]+" hundred bucks")
		}
		return out
	}
	out = append(out, inWords(d, true)+" "+unit+" and "+below100(c)+" cents",
		inWords(d, false)+" "+unit+" "+below100(c))
	if d < 100 && c >= 10 {
		out = append(out, below100(d)+" "+below100(c)) // "forty-five fifty"
	}
	return out
}

// dateForms says "2026-12-08" every way this package knows; relative
// forms ("tomorrow") are against today, when given.
func dateForms(v string, today time.Time) []string {
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return nil
	}
	wd, mo, d := t.Weekday().String(), t.Month().String(), t.Day()
	out := []string{
		wd + ", " + mo + " " + strconv.Itoa(d),
		mo + " " + strconv.Itoa(d),
		mo + " " + ordinal(d, true),
		"the " + ordinal(d, true) + " of " + mo,
		wd + " the " + ordinal(d, true),
		wd + " " + mo + " " + ordinal(d, true),
		wd + ", the " + ordinal(d, false) + " of " + mo,
		strconv.Itoa(d) + " " + mo,
		"the " + ordinal(d, true),
		"the " + ordinal(d, false),
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

// clockForms says "19:30" every way this package knows.
func clockForms(v string) []string {
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
	hw := inWords(h12, false)
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
		fmt.Sprintf("%d:%02d %s", h12, mi, part), hw+" "+below100(mi)+" "+ampm, hw+" "+below100(mi)+" "+part)
	switch mi {
	case 30:
		out = append(out, "half past "+hw+" "+part)
	case 15:
		out = append(out, "quarter past "+hw+" "+part)
	case 45:
		next := h12%12 + 1
		out = append(out, "quarter to "+inWords(next, false)+" "+part)
	}
	return out
}

// countForms says a small count: "4", "four".
func countForms(v string) []string {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 99 {
		return nil
	}
	return []string{v, below100(n)}
}

// codeForms says a code character by character every way this package
// knows: "R4M9", "R 4 M 9", "R four M nine", "Romeo four Mike nine";
// all-digit codes also in pairs ("forty-four seventy-one") and with
// "double".
func codeForms(v string) []string {
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
			out = append(out, below100(a)+" "+below100(b))
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

// nameForms says a name or enum value as written and with its dashes
// spoken as spaces ("rainy-day" → "rainy day").
func nameForms(v string) []string {
	out := []string{v}
	if s := strings.ReplaceAll(v, "-", " "); s != v {
		out = append(out, s)
	}
	return out
}

// forms says v in every form of its dimension.
func forms(d Dimension, v string, today time.Time) []string {
	var out []string
	switch d {
	case Money:
		out = moneyForms(v)
	case Date:
		out = dateForms(v, today)
	case Clock:
		out = clockForms(v)
	case Count:
		out = countForms(v)
	case Code:
		out = codeForms(v)
	case Name:
		out = nameForms(v)
	}
	return dedupe(out)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// neighbours are single-value perturbations of v: each a value the
// confirmation must not be read as matching. others are the values other
// records (or the catalogue's enum) hold for the same field.
func neighbours(d Dimension, v string, others []string) []string {
	var out []string
	switch d {
	case Money:
		m := reAmount.FindStringSubmatch(v)
		dollars, _ := strconv.Atoi(m[1])
		for _, delta := range []int{1, -1, 10, -10, 100} {
			if n := dollars + delta; n > 0 {
				out = append(out, fmt.Sprintf("%d.%s", n, m[2]))
			}
		}
		if m[2] != "00" {
			out = append(out, m[1]+".00")
		}
	case Date:
		t, _ := time.Parse(time.DateOnly, v)
		out = append(out, t.AddDate(0, 0, -1).Format(time.DateOnly), t.AddDate(0, 0, 1).Format(time.DateOnly),
			t.AddDate(0, 0, 7).Format(time.DateOnly))
	case Clock:
		m := reHHMM.FindStringSubmatch(v)
		h, _ := strconv.Atoi(m[1])
		out = append(out, fmt.Sprintf("%02d:%s", (h+12)%24, m[2]), fmt.Sprintf("%02d:%s", (h+1)%24, m[2]),
			fmt.Sprintf("%02d:%s", (h+23)%24, m[2]))
		if m[2] == "00" {
			out = append(out, fmt.Sprintf("%02d:30", h))
		} else {
			out = append(out, fmt.Sprintf("%02d:00", h))
		}
	case Count:
		n, _ := strconv.Atoi(v)
		out = append(out, strconv.Itoa(n+1))
		if n > 1 {
			out = append(out, strconv.Itoa(n-1))
		}
	case Code:
		// One character changed, at each position.
		for i := 0; i < len(v); i++ {
			b := []byte(v)
			switch c := b[i]; {
			case c >= '0' && c <= '9':
				b[i] = '0' + (c-'0'+1)%10
			default:
				b[i] = 'A' + (c-'A'+1)%26
			}
			out = append(out, string(b))
		}
	}
	for _, o := range others {
		if od, ok := dimensionOf("", o); ok && (od == d || d == Name) && o != v {
			out = append(out, o)
		}
	}
	return dedupe(out)
}
