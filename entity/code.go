package entity

import "strings"

var natoWords = map[string]byte{
	"alpha": 'A', "alfa": 'A', "bravo": 'B', "charlie": 'C', "delta": 'D', "echo": 'E',
	"foxtrot": 'F', "golf": 'G', "hotel": 'H', "india": 'I', "juliet": 'J', "juliett": 'J',
	"kilo": 'K', "lima": 'L', "mike": 'M', "november": 'N', "oscar": 'O', "papa": 'P',
	"quebec": 'Q', "romeo": 'R', "sierra": 'S', "tango": 'T', "uniform": 'U', "victor": 'V',
	"whiskey": 'W', "whisky": 'W', "x-ray": 'X', "xray": 'X', "yankee": 'Y', "zulu": 'Z',
}

// CodeForm is a written code's canonical form: upper case, letters and
// digits only ("bk-4471" → "BK4471").
func CodeForm(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// WrittenCode reports a token that is a code as written: letters and
// digits mixed ("R4M9", "bk-4471", "#5590"), not an ordinal ("8th") or a
// time ("9am").
func WrittenCode(t string) bool {
	if !strings.ContainsAny(t, "0123456789") || DigitsOf(t) != "" {
		return false
	}
	if _, _, ok := cutHalf(t); ok {
		return false
	}
	return strings.Trim(t, "0123456789abcdefghijklmnopqrstuvwxyz-#") == ""
}

// codeChar reads one spoken character of a code at ts[i]: a digit word
// ("four", "oh" inside a code, "zero"), a digit, a single letter, a NATO
// word, "R as in Romeo", or "double four"/"triple seven". It returns the
// characters, the tokens used, and whether it was a letter.
func codeChar(ts []string, i int, inside bool) (string, int, bool) {
	t := word(ts, i)
	switch t {
	case "":
		return "", 0, false
	case "double", "triple":
		if c, n, l := codeChar(ts, i+1, true); n > 0 && len(c) == 1 {
			if t == "double" {
				return c + c, n + 1, l
			}
			return c + c + c, n + 1, l
		}
		return "", 0, false
	case "oh", "o":
		if inside {
			return "0", 1, false
		}
		return "", 0, false
	}
	if n, ok := unitWords[t]; ok && n < 10 {
		return string(rune('0' + n)), 1, false
	}
	if len(t) == 1 && isDigitByte(t[0]) {
		return t, 1, false
	}
	if len(t) == 1 && t[0] >= 'a' && t[0] <= 'z' && t != "a" && t != "i" {
		c := strings.ToUpper(t)
		// "R as in Romeo"
		if word(ts, i+1) == "as" && word(ts, i+2) == "in" && word(ts, i+3) != "" && word(ts, i+3)[0] == t[0] {
			return c, 4, true
		}
		return c, 1, true
	}
	if c, ok := natoWords[t]; ok {
		return string(c), 1, true
	}
	return "", 0, false
}

// SpokenCodeAt reads a code said character by character at ts[i]: "four
// one two eight", "R four M nine", "Romeo four Mike nine", "double four
// seven one", "oh" as zero inside. A run of digits needs three characters
// or more, a run with letters two or more and at least one digit or three
// letters. It returns the canonical code ("4128", "R4M9") and the tokens
// used.
func SpokenCodeAt(ts []string, i int) (string, int) {
	var b []byte
	k, letters, digits, repeat := i, 0, 0, false
	for {
		c, n, letter := codeChar(ts, k, k > i)
		if n == 0 {
			break
		}
		b = append(b, c...)
		if letter {
			letters += len(c)
		} else {
			digits += len(c)
		}
		repeat = repeat || ts[k] == "double" || ts[k] == "triple"
		k += n
	}
	ok := letters == 0 && (digits >= 3 || repeat && digits >= 2) ||
		letters > 0 && (digits >= 1 && letters+digits >= 2 || letters >= 3)
	if !ok || k-i < 2 && !repeat {
		return "", 0
	}
	return string(b), k - i
}
