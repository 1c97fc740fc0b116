package safetext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hostile is a sample of what an agent may put in any string it sends:
// a screen clear, an OSC 8 hyperlink, colour codes, bidi overrides and
// isolates, zero-width characters, C1 controls, DEL, line breaks.
const Hostile = "a\x1b[2J\x1b]8;;http://x.test\x1b\\link\x1b]8;;\x1b\\\x1b[31mred\x1b[0m" +
	"\u202eevil\u202c\u2066iso\u2069\u200bzw\u200d\ufeff\u0085c1\u009b\x7f\r\n\tend\u2028"

// unsafe reports the first character in s no output may carry as such.
func unsafe(s string, lines bool) (rune, bool) {
	for _, r := range s {
		if lines && (r == '\n' || r == '\r' || r == '\t') {
			continue
		}
		if r == utf8.RuneError || !Safe(r) {
			return r, true
		}
	}
	return 0, false
}

func TestEscapeLeavesNothingUnsafe(t *testing.T) {
	got := Escape(Hostile)
	r, bad := unsafe(got, false)
	assert.False(t, bad, "%U left in %q", r, got)
	assert.Equal(t, `a\x1b[2J\x1b]8;;http://x.test\x1b\link\x1b]8;;\x1b\\x1b[31mred\x1b[0m`+
		`\u202eevil\u202c\u2066iso\u2069\u200bzw\u200d\ufeff\u0085c1\u009b\x7f\r\n\tend\u2028`, got)
}

func TestEscapeKeepsPrintableTextAsIs(t *testing.T) {
	for _, s := range []string{"", "order 4471 — £12.50, café, 東京, emoji 🙂", `back\slash "quotes"`} {
		assert.Equal(t, s, Escape(s))
	}
}

func TestEscapeInvalidUTF8ByteByByte(t *testing.T) {
	assert.Equal(t, `ok\xff\xc3`, Escape("ok\xff\xc3"))
}

func TestEscapeXMLForbidden(t *testing.T) {
	assert.Equal(t, `\x00\ufffe\uffff`, Escape("\x00\ufffe\uffff"))
}

func TestWriterKeepsLinesAndEscapesTheRest(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	_, err := w.Write([]byte("line one\n\tcol\r" + Hostile))
	require.NoError(t, err)
	r, bad := unsafe(b.String(), true)
	assert.False(t, bad, "%U left in %q", r, b.String())
	assert.True(t, strings.HasPrefix(b.String(), "line one\n\tcol\r"))
	assert.Contains(t, b.String(), `a\u001b[2J`)
}

func TestWriterOutputIsStillJSON(t *testing.T) {
	in, err := json.Marshal(map[string]string{"reason": Hostile + "\U000e0001\x7f"})
	require.NoError(t, err)
	var b bytes.Buffer
	_, err = NewWriter(&b).Write(in)
	require.NoError(t, err)
	var back map[string]string
	require.NoError(t, json.Unmarshal(b.Bytes(), &back), b.String())
	assert.Equal(t, Hostile+"\U000e0001\x7f", back["reason"])
	_, bad := unsafe(b.String(), false)
	assert.False(t, bad)
}

func TestWriterJoinsACharacterSplitAcrossWrites(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	s := "é\u202e"
	for i := range len(s) {
		n, err := w.Write([]byte{s[i]})
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	}
	assert.Equal(t, `é\u202e`, b.String())
	_, _ = w.Write([]byte{0xe2, 0x80})
	require.NoError(t, w.Flush())
	assert.Equal(t, `é\u202e\xe2\x80`, b.String())
}
