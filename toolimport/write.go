package toolimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// quote writes s as a YAML double-quoted scalar (JSON's escapes are
// YAML's).
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// comment keeps a note on one comment line, with any character YAML does
// not allow in a comment replaced.
func comment(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return '?'
		}
		return r
	}, s)
}

// Write prints a catalogue file: the header says where the tools came
// from, each guess carries a "# review:" comment above the field it set,
// and skipped tools are listed at the end. The same input always writes the
// same bytes.
func Write(w io.Writer, from string, format Format, entries []Entry, skipped []Skipped) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# callproof catalogue, imported by `callproof init` from %s (%s).\n", comment(from), format)
	b.WriteString("# Every \"review:\" line is a guess: check it, fix the field below it, then\n")
	b.WriteString("# delete the line. `callproof validate` checks this file.\n")
	b.WriteString("tools:\n")
	for _, e := range entries {
		t := e.Tool
		notes := map[string]string{}
		for _, r := range e.Review {
			field, _, _ := strings.Cut(r, " ")
			field = strings.TrimSuffix(field, ":")
			notes[field] = r
		}
		note := func(field string) {
			if n, ok := notes[field]; ok {
				fmt.Fprintf(&b, "    # review: %s\n", comment(n))
			}
		}
		fmt.Fprintf(&b, "  - name: %s\n", quote(t.Name))
		if t.Description != "" {
			fmt.Fprintf(&b, "    description: %s\n", quote(t.Description))
		}
		note("effect")
		fmt.Fprintf(&b, "    effect: %s\n", t.Effect)
		note("table")
		fmt.Fprintf(&b, "    table: %s\n", quote(t.Table))
		if t.KeyArg != "" {
			note("key_arg")
			fmt.Fprintf(&b, "    key_arg: %s\n", quote(t.KeyArg))
		}
		if t.StatusField != "" {
			note("status_field")
			fmt.Fprintf(&b, "    status_field: %s\n    status_value: %s\n", quote(t.StatusField), quote(t.StatusValue))
		}
		note("consequential")
		fmt.Fprintf(&b, "    consequential: %t\n", t.Consequential)
		if len(t.Args) == 0 {
			continue
		}
		b.WriteString("    args:\n")
		for _, a := range t.Args {
			fmt.Fprintf(&b, "      - name: %s\n        type: %s\n", quote(a.Name), a.Type)
			if a.Required {
				b.WriteString("        required: true\n")
			}
			if len(a.Enum) > 0 {
				q := make([]string, len(a.Enum))
				for i, v := range a.Enum {
					q[i] = quote(v)
				}
				fmt.Fprintf(&b, "        enum: [%s]\n", strings.Join(q, ", "))
			}
			if a.Pattern != "" {
				fmt.Fprintf(&b, "        pattern: %s\n", quote(a.Pattern))
			}
			if a.Description != "" {
				fmt.Fprintf(&b, "        description: %s\n", quote(a.Description))
			}
		}
	}
	for _, s := range skipped {
		fmt.Fprintf(&b, "# skipped %s: %s\n", comment(s.Name), comment(s.Reason))
	}
	_, err := w.Write(b.Bytes())
	return err
}
