package entity

import "strings"

// Vocabulary is a caller's list of names and enum values (record values,
// catalogue enums, the caller's own words), matched case- and
// punctuation-insensitively, longest phrase first. It is read-only after
// NewVocabulary and safe to share.
type Vocabulary struct {
	byFirst map[string][]vocabEntry
}

type vocabEntry struct {
	words []string
	value string
}

// NewVocabulary indexes values; empty ones are skipped, and a value
// given twice is one entry.
func NewVocabulary(values ...string) *Vocabulary {
	v := &Vocabulary{byFirst: map[string][]vocabEntry{}}
	seen := map[string]bool{}
	for _, x := range values {
		ws := nameWords(Tokenize(x))
		key := strings.Join(ws, " ")
		if len(ws) == 0 || seen[key] {
			continue
		}
		seen[key] = true
		v.byFirst[ws[0]] = append(v.byFirst[ws[0]], vocabEntry{words: ws, value: x})
	}
	return v
}

// nameWords keeps each token's letters and digits ("o'brien" → "obrien")
// and drops tokens left empty.
func nameWords(ts []string) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if k := nameKey(t); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func nameKey(t string) string {
	t = strings.TrimSuffix(t, "'s")
	clean := true
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			clean = false
			break
		}
	}
	if clean {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if c := t[i]; c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// NameAt matches the longest vocabulary value at ts[i] and returns it as
// given to NewVocabulary, with the tokens used.
func (v *Vocabulary) NameAt(ts []string, i int) (string, int) {
	if v == nil || i >= len(ts) {
		return "", 0
	}
	best, used := "", 0
	for _, e := range v.byFirst[nameKey(ts[i])] {
		if len(e.words) <= used || i+len(e.words) > len(ts) {
			continue
		}
		ok := true
		for k := 1; k < len(e.words); k++ {
			if nameKey(ts[i+k]) != e.words[k] {
				ok = false
				break
			}
		}
		if ok {
			best, used = e.value, len(e.words)
		}
	}
	return best, used
}
