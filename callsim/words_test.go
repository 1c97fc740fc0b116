package callsim

import (
	"strings"
	"testing"
	"unsafe"
)

// wordsPrefix must give exactly what joining the words would, sliced from
// the text when it can be.
func TestWordsPrefix(t *testing.T) {
	for _, text := range []string{
		"Hi, I'd like to change order 5590.",
		"  leading and trailing  ",
		"double  spaced words",
		"tab\tseparated words",
		"one",
		"new\nline here",
		"",
	} {
		words := strings.Fields(text)
		for k := 0; k <= len(words); k++ {
			want := strings.Join(words[:k], " ")
			if got := wordsPrefix(text, words, k); got != want {
				t.Errorf("wordsPrefix(%q, %d) = %q, want %q", text, k, got, want)
			}
		}
	}
	text := "Hi, I'd like to change order 5590."
	if got := wordsPrefix(text, strings.Fields(text), 3); got != "Hi, I'd like" || unsafe.StringData(got) != unsafe.StringData(text) {
		t.Errorf("a singly spaced text's prefix should be a slice of it, got %q", got)
	}
}
