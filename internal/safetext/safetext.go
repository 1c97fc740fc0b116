package safetext

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Safe says whether r may be written as itself: a printable character
// (strconv.IsPrint, the rule %q follows) or the ASCII space. Format
// characters (bidi controls, zero-width joiners, BOM) are not printable
// by that rule, nor are the XML-forbidden U+FFFE and U+FFFF.
func Safe(r rune) bool { return r == ' ' || strconv.IsPrint(r) }

// Escape returns s with every unsafe character, the line breaks and tabs
// included, written as a Go escape (\x1b, \n, \u202e) and each byte of
// invalid UTF-8 as \xNN. A string that needs none is returned as is.
// Backslashes are kept, so text that is already escaped reads the same.
func Escape(s string) string {
	i := firstUnsafe(s, false)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case Safe(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// firstUnsafe is the offset of the first byte Escape (lines false) or
// Writer (lines true: \n, \r and \t pass) would change, or -1.
func firstUnsafe(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if lines && (c == '\n' || c == '\r' || c == '\t') {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || !Safe(r) {
			return i
		}
		i += n
	}
	return -1
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// Writer passes text to an output stream with every unsafe character
// escaped, except the line breaks and tabs the program writes itself (a
// field that must not break a line is escaped with Escape first). Its
// escapes are also JSON's (\u001b, \u202e; surrogate pairs above U+FFFF),
// so JSON written through it stays valid and means the same. A character
// split across two writes is held until the next one; Flush writes what
// is held. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte // the start of a character the next write may complete
	buf  []byte
}

// NewWriter guards w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p, escaped; it reports len(p) when the whole was written.
func (sw *Writer) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	in := p
	if len(sw.held) > 0 {
		in = append(sw.held, p...)
		sw.held = nil
	}
	// Hold an incomplete character at the end for the next write.
	if k := partialTail(in); k > 0 {
		sw.held = append([]byte(nil), in[len(in)-k:]...)
		in = in[:len(in)-k]
	}
	out := sw.buf[:0]
	for i := 0; i < len(in); {
		c := in[i]
		if (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t' {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\x`...)
			out = append(out, hex2(c)...)
		case Safe(r):
			out = append(out, in[i:i+n]...)
		default:
			out = appendU(out, r)
		}
		i += n
	}
	sw.buf = out
	if _, err := sw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held partial character as escaped bytes.
func (sw *Writer) Flush() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if len(sw.held) == 0 {
		return nil
	}
	var out []byte
	for _, c := range sw.held {
		out = append(out, `\x`...)
		out = append(out, hex2(c)...)
	}
	sw.held = nil
	_, err := sw.w.Write(out)
	return err
}

// appendU writes r as \uXXXX, or as a surrogate pair above U+FFFF.
func appendU(b []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		b = appendU(b, 0xd800+(r>>10))
		return appendU(b, 0xdc00+(r&0x3ff))
	}
	const digits = "0123456789abcdef"
	return append(b, '\\', 'u', digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15])
}

// partialTail is how many bytes at the end of p start a character that
// is not complete yet (0 when p ends on a whole one or on invalid bytes).
func partialTail(p []byte) int {
	for k := 1; k <= min(utf8.UTFMax-1, len(p)); k++ {
		c := p[len(p)-k]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(p[len(p)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
