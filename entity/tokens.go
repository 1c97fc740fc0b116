package entity

import "strings"

// Tokenize lower-cases s and splits it into words, keeping apostrophes,
// hyphens, colons, dots, dollar signs and "#" inside words so "won't",
// "2026-12-03", "7:30" and "$45.50" survive, and a slash between digits so
// "12/08" stays one token. Thousands separators are dropped ("$1,200" is
// "$1200").
func Tokenize(s string) []string {
	s = strings.ToLower(strings.ReplaceAll(s, "\u2019", "'"))
	s = DropThousands(s)
	ts := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("'-:.$#€£/", r))
	})
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		t = strings.Trim(t, "'-:./")
		if t == "" {
			continue
		}
		if strings.Contains(t, "/") && !slashDigits(t) {
			// A slash outside a numeric date separates words ("and/or").
			for _, p := range strings.Split(t, "/") {
				if p = strings.Trim(p, "'-:."); p != "" {
					out = append(out, p)
				}
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// slashDigits reports a token whose every slash sits between two digits.
func slashDigits(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] == '/' && (i == 0 || i+1 == len(t) || !isDigitByte(t[i-1]) || !isDigitByte(t[i+1])) {
			return false
		}
	}
	return true
}

func isDigitByte(b byte) bool { return b >= '0' && b <= '9' }

// DropThousands removes thousands separators ("$1,200" → "$1200"): a
// comma between a digit and exactly three digits not followed by another.
func DropThousands(s string) string {
	if !strings.Contains(s, ",") {
		return s
	}
	isDigit := func(i int) bool { return i >= 0 && i < len(s) && isDigitByte(s[i]) }
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == ',' && isDigit(i-1) && isDigit(i+1) && isDigit(i+2) && isDigit(i+3) && !isDigit(i+4) {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func word(ts []string, i int) string {
	if i >= 0 && i < len(ts) {
		return ts[i]
	}
	return ""
}
