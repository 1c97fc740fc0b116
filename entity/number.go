package entity

import (
	"strconv"
	"strings"
)

// Number is a number read at a position: its canonical decimal Value
// ("215", "2.5"), how many tokens it took, and how it was said.
type Number struct {
	Value   string
	Int     int64 // the integer value; -1 when Value has a fraction
	Used    int   // tokens read
	Ordinal bool  // "8th", "eighth", "twenty-first"
	Words   bool  // said in words, at least in part ("2 hundred")
	// Pair: said as two groups, "two fifty" (250, or 2.50 as money),
	// "twenty twenty-six"; Hi and Lo are the groups.
	Pair   bool
	Hi, Lo int64
}

var unitWords = map[string]int64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
	"nineteen": 19,
}

var tensWords = map[string]int64{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
	"seventy": 70, "eighty": 80, "ninety": 90}

var ordinalWords = map[string]int64{
	"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
	"eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
	"fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
	"nineteenth": 19, "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50,
	"sixtieth": 60, "seventieth": 70, "eightieth": 80, "ninetieth": 90,
}

var scaleWords = map[string]int64{"hundred": 100, "thousand": 1000, "million": 1000000,
	"hundredth": 100, "thousandth": 1000}

// kinds of number words, for the grammar in NumberAt.
const (
	kNone = iota
	kUnit
	kTeen
	kTens
	kCompound // 21..99 in one hyphenated token
	kHundred
	kScale
	kAnd
	kA // "a hundred", "a dozen"
)

type numInfo struct {
	v    int64
	kind int
	ord  bool
}

// numLex is every number word with its value and kind, hyphenated
// compounds included, so reading a word is one lookup. Read-only.
var numLex = buildNumLex()

func buildNumLex() map[string]numInfo {
	m := map[string]numInfo{}
	for w, n := range unitWords {
		k := kTeen
		if n < 10 {
			k = kUnit
		}
		m[w] = numInfo{n, k, false}
	}
	for w, n := range tensWords {
		m[w] = numInfo{n, kTens, false}
		for u, un := range unitWords {
			if un > 0 && un < 10 {
				m[w+"-"+u] = numInfo{n + un, kCompound, false}
			}
		}
		for o, on := range ordinalWords {
			if on < 10 {
				m[w+"-"+o] = numInfo{n + on, kCompound, true}
			}
		}
	}
	for w, n := range ordinalWords {
		k := kTens
		switch {
		case n < 10:
			k = kUnit
		case n < 20:
			k = kTeen
		}
		m[w] = numInfo{n, k, true}
	}
	for w, n := range scaleWords {
		k := kScale
		if n == 100 {
			k = kHundred
		}
		m[w] = numInfo{n, k, strings.HasSuffix(w, "th")}
	}
	return m
}

// numWord reads one number word: its value, kind and whether it is an ordinal.
func numWord(t string) (int64, int, bool, bool) {
	if x, ok := numLex[t]; ok {
		return x.v, x.kind, x.ord, true
	}
	return 0, kNone, false, false
}

// IsNumberWord reports a word that can start or continue a number in words.
func IsNumberWord(t string) bool {
	_, _, _, ok := numWord(t)
	return ok
}

// DigitsOf returns the digits a digit token spells ("3", "3rd", "#12"), or "".
func DigitsOf(t string) string {
	t = strings.TrimPrefix(t, "#")
	end := 0
	for end < len(t) && isDigitByte(t[end]) {
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

// Decimal renders a decimal string canonically: "45.50" → "45.5",
// "045" → "45", "1200.00" → "1200"; "" when s is not a plain decimal.
func Decimal(s string) string {
	s = strings.TrimLeft(strings.ReplaceAll(s, ",", ""), "$€£")
	if s == "" || strings.Trim(s, "0123456789.") != "" || strings.Count(s, ".") > 1 {
		return ""
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return ""
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// NumberAt reads a number at ts[i]: digits ("215", "8th", "45.50"), words
// ("two hundred and fifteen", "one thousand two hundred", "a dozen",
// "twenty-one", "eighth"), mixed ("2 hundred"), a decimal in words ("two
// point five") or a pair ("two fifty"). Used is 0 when there is none.
func NumberAt(ts []string, i int) Number {
	if i < 0 || i >= len(ts) {
		return Number{}
	}
	t := ts[i]
	if d := DigitsOf(t); d != "" && len(d) <= 15 && !strings.HasPrefix(t, "#") {
		n, _ := strconv.ParseInt(d, 10, 64)
		out := Number{Value: strconv.FormatInt(n, 10), Int: n, Used: 1, Ordinal: len(d) < len(t)}
		if !out.Ordinal {
			if s, ok := scaleWords[word(ts, i+1)]; ok && n > 0 && n < 1000 {
				// "2 hundred", "5 thousand"
				rest := wordsNumber(ts, i+1, n)
				if rest.Used > 0 {
					rest.Used++
					rest.Words = true
					return rest
				}
				n *= s
				return Number{Value: strconv.FormatInt(n, 10), Int: n, Used: 2, Words: true}
			}
		}
		return out
	}
	if strings.Count(t, ".") == 1 && t[0] != '.' && isDigitByte(t[0]) {
		if v := Decimal(t); v != "" {
			return Number{Value: v, Int: -1, Used: 1}
		}
	}
	// "two-fifteen", "forty-four-seventy-one" is not a form: one hyphen
	if a, b, ok := strings.Cut(t, "-"); ok && !strings.Contains(b, "-") {
		if x, ok := numLex[a]; ok && !x.ord && (x.kind == kUnit || x.kind == kTeen) && x.v > 0 {
			if y, ok := numLex[b]; ok && !y.ord && (y.kind == kTeen || y.kind == kTens) && y.v >= 10 {
				n := x.v*100 + y.v
				return Number{Value: strconv.FormatInt(n, 10), Int: n, Used: 1, Words: true, Pair: true, Hi: x.v, Lo: y.v}
			}
		}
	}
	// "half a dozen", "a couple"
	if t == "half" && word(ts, i+1) == "a" && word(ts, i+2) == "dozen" {
		return Number{Value: "6", Int: 6, Used: 3, Words: true}
	}
	if t == "a" && word(ts, i+1) == "couple" {
		return Number{Value: "2", Int: 2, Used: 2, Words: true}
	}
	if _, ok := numLex[t]; !ok && t != "a" && t != "an" {
		return Number{}
	}
	n := wordsNumber(ts, i, 0)
	if n.Used == 0 || n.Ordinal {
		return n
	}
	// "two point five"
	if word(ts, i+n.Used) == "point" {
		frac := ""
		for j := i + n.Used + 1; j < len(ts); j++ {
			d, k, ord, ok := numWord(ts[j])
			if !ok || k != kUnit || ord {
				break
			}
			frac += strconv.FormatInt(d, 10)
		}
		if frac != "" {
			v := Decimal(strconv.FormatInt(n.Int, 10) + "." + frac)
			return Number{Value: v, Int: -1, Used: n.Used + 1 + len(frac), Words: true}
		}
	}
	return n
}

// wordsNumber reads a number in words at ts[i]; seed is a digit group
// already read before a scale word ("2 hundred"), else 0.
func wordsNumber(ts []string, i int, seed int64) Number {
	var total, group int64 = 0, seed
	last, lastScale := kNone, int64(0)
	if seed > 0 {
		last = kUnit
	}
	var best Number
	simple := true // no hundred or scale word: a candidate for a pair
	j := i
	for ; j < len(ts); j++ {
		t := ts[j]
		if t == "and" && (last == kHundred || last == kScale) {
			if _, k, _, ok := numWord(word(ts, j+1)); ok && k != kHundred && k != kScale {
				last = kAnd
				continue
			}
			break
		}
		if (t == "a" || t == "an") && last == kNone {
			if nx := word(ts, j+1); nx == "hundred" || nx == "thousand" || nx == "million" || nx == "dozen" {
				group, last = 1, kA
				continue
			}
			break
		}
		if t == "dozen" && (last == kA || last == kUnit && group < 10) {
			group *= 12
			last = kHundred
			simple = false
			best = Number{Int: total + group, Used: j - i + 1, Words: true}
			continue
		}
		v, k, ord, ok := numWord(t)
		if !ok {
			break
		}
		after := last == kNone || last == kHundred || last == kScale || last == kAnd
		switch k {
		case kUnit:
			if !(after || last == kTens && group%10 == 0 && v > 0) {
				ok = false
			}
		case kTeen, kTens, kCompound:
			ok = after
		case kHundred:
			ok = (last == kUnit || last == kTeen || last == kTens || last == kCompound || last == kA) && group > 0 && group < 100
		case kScale:
			ok = last != kNone && last != kAnd && group > 0 && (lastScale == 0 || v < lastScale)
		}
		if !ok {
			break
		}
		switch k {
		case kHundred:
			group *= 100
			simple = false
		case kScale:
			total += group * v
			group, lastScale = 0, v
			simple = false
		default:
			group += v
		}
		last = k
		best = Number{Int: total + group, Used: j - i + 1, Words: true, Ordinal: ord}
		if ord {
			break
		}
	}
	if best.Used == 0 {
		return Number{}
	}
	if seed > 0 {
		best.Used-- // the caller counts the seed's token
		if best.Used == 0 {
			return Number{}
		}
	}
	// "two fifty", "nineteen ninety", "twelve forty-five": a group of 1..99
	// followed by a group of 10..99 said as tens (not a digit: "four one"
	// is two digits, read as a code).
	if simple && seed == 0 && !best.Ordinal && best.Int >= 1 && best.Int <= 99 {
		if lo, used := tensGroup(ts, i+best.Used); used > 0 {
			hi := best.Int
			best = Number{Int: hi*100 + lo, Used: best.Used + used, Words: true, Pair: true, Hi: hi, Lo: lo}
		}
	}
	best.Value = strconv.FormatInt(best.Int, 10)
	return best
}

// tensGroup reads 10..99 in words at ts[i] ("fifty", "forty-five", "forty
// five", "fifteen"), not an ordinal.
func tensGroup(ts []string, i int) (int64, int) {
	v, k, ord, ok := numWord(word(ts, i))
	if !ok || ord {
		return 0, 0
	}
	switch k {
	case kTeen, kCompound:
		return v, 1
	case kTens:
		if u, k2, ord2, ok2 := numWord(word(ts, i+1)); ok2 && k2 == kUnit && !ord2 && u > 0 {
			return v + u, 2
		}
		return v, 1
	}
	return 0, 0
}
