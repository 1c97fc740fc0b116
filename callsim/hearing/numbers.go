package hearing

import (
	"strconv"
	"strings"
)

// Spoken number words. The tables are small and fixed; functions below
// build fresh slices so callers may not share them by accident.

func digitWord(d byte) string {
	return [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}[d-'0']
}

func unitWord(n int) string {
	return [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
		"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}[n]
}

func tensWord(n int) string {
	return [...]string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}[n]
}

func ordinalWord(n int) string {
	return [...]string{"", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
		"tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
		"eighteenth", "nineteenth", "twentieth"}[n]
}

// digitValue reads one digit word ("oh" is zero, as in "four oh seven one").
func digitValue(w string) (byte, bool) {
	switch w {
	case "zero", "oh":
		return '0', true
	}
	for d := byte('1'); d <= '9'; d++ {
		if digitWord(d) == w {
			return d, true
		}
	}
	return 0, false
}

func unitValue(w string) int {
	for n := 0; n < 20; n++ {
		if unitWord(n) == w {
			return n
		}
	}
	return -1
}

func tensValue(w string) int {
	for n := 2; n < 10; n++ {
		if tensWord(n) == w {
			return n * 10
		}
	}
	return -1
}

// ordinalValue reads "first".."twentieth" and "thirtieth"; compounds
// ("twenty first") are read by ordinalAt.
func ordinalValue(w string) int {
	if w == "thirtieth" {
		return 30
	}
	for n := 1; n <= 20; n++ {
		if ordinalWord(n) == w {
			return n
		}
	}
	return -1
}

// cardinalWords speaks 0..9999 as flite and most TTS engines do: "four
// thousand four hundred seventy one" (no "and").
func cardinalWords(n int) []string {
	if n == 0 {
		return []string{"zero"}
	}
	var out []string
	if n >= 1000 {
		out = append(out, unitWord(n/1000), "thousand")
		n %= 1000
	}
	if n >= 100 {
		out = append(out, unitWord(n/100), "hundred")
		n %= 100
	}
	switch {
	case n >= 20:
		out = append(out, tensWord(n/10))
		if n%10 != 0 {
			out = append(out, unitWord(n%10))
		}
	case n > 0:
		out = append(out, unitWord(n))
	}
	return out
}

// ordinalWords speaks a day of the month: "third", "twenty first".
func ordinalWords(n int) []string {
	switch {
	case n <= 20:
		return []string{ordinalWord(n)}
	case n == 30:
		return []string{"thirtieth"}
	}
	return []string{tensWord(n / 10), ordinalWord(n % 10)}
}

// spelledCode speaks a code character by character: "4471" → "four four
// seven one", "BK-12" → "b k one two". Other characters are skipped.
func spelledCode(code string) []string {
	var out []string
	for _, r := range strings.ToLower(code) {
		switch {
		case r >= '0' && r <= '9':
			out = append(out, digitWord(byte(r)))
		case r >= 'a' && r <= 'z':
			out = append(out, string(r))
		}
	}
	return out
}

// cardinalAt reads a cardinal 0..9999 spoken in words at ws[i] ("four
// thousand four hundred seventy one", "forty five", "twelve"); it returns
// the value and the number of words used, or -1.
func cardinalAt(ws []string, i int) (int, int) {
	if i < len(ws) && ws[i] == "zero" {
		return 0, 1
	}
	j, total := i, 0
	n, u := readAt(ws, j)
	if n < 0 {
		return -1, 0
	}
	if n <= 9 && j+u < len(ws) && ws[j+u] == "thousand" {
		total, j = n*1000, j+u+1
		if n, u = readAt(ws, j); n < 0 {
			return total, j - i
		}
	}
	if n <= 9 && j+u < len(ws) && ws[j+u] == "hundred" {
		total, j = total+n*100, j+u+1
		k := j
		if k < len(ws) && ws[k] == "and" {
			k++
		}
		if m, u2 := readAt(ws, k); m > 0 {
			return total + m, k + u2 - i
		}
		return total, j - i
	}
	return total + n, j + u - i
}

// readAt reads 1..99 at ws[j].
func readAt(ws []string, j int) (int, int) {
	if j >= len(ws) {
		return -1, 0
	}
	if t := tensValue(ws[j]); t > 0 {
		if j+1 < len(ws) {
			if u := unitValue(ws[j+1]); u >= 1 && u <= 9 {
				return t + u, 2
			}
		}
		return t, 1
	}
	if u := unitValue(ws[j]); u >= 1 {
		return u, 1
	}
	return -1, 0
}

// ordinalAt reads a day ordinal at ws[i]: "third", "twenty first", "thirtieth".
func ordinalAt(ws []string, i int) (int, int) {
	if i >= len(ws) {
		return -1, 0
	}
	if n := ordinalValue(ws[i]); n > 0 {
		return n, 1
	}
	if t := tensValue(ws[i]); t == 20 || t == 30 {
		if i+1 < len(ws) {
			if n := ordinalValue(ws[i+1]); n >= 1 && n <= 9 && t+n <= 31 {
				return t + n, 2
			}
		}
	}
	return -1, 0
}

func itoa(n int) string { return strconv.Itoa(n) }
