package scenarios

import (
	"fmt"
	"strings"
)

// Error is one problem in a scenario file.
type Error struct {
	File  string
	Line  int    // 0 when unknown
	Field string // path inside the scenario: "expected.captured", "steps[2].on.after"
	Msg   string
}

// Error formats as "file:line: field: msg", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found at once. It is an error; errors.As finds
// each *Error through Unwrap.
type Errors []error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap returns the individual errors.
func (es Errors) Unwrap() []error { return es }

// orNil returns es as an error, or nil when empty.
func (es Errors) orNil() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// source remembers where a scenario came from so that Validate can point at
// lines: lines maps a field path to the line of its key (or value).
type source struct {
	file  string
	lines map[string]int
	bad   map[string]bool // paths that already failed to decode
}

// line finds the line of path or of its nearest ancestor.
func (s *source) line(path string) int {
	if s == nil {
		return 0
	}
	for p := path; ; p = parentPath(p) {
		if l, ok := s.lines[p]; ok {
			return l
		}
		if p == "" {
			return 0
		}
	}
}

// written reports whether the file spelt out path (false for a scenario
// built in code).
func (s *source) written(path string) bool {
	if s == nil {
		return false
	}
	_, ok := s.lines[path]
	return ok
}

// decodeFailed reports whether path or an ancestor failed to decode, so
// Validate does not report the same mistake twice.
func (s *source) decodeFailed(path string) bool {
	if s == nil {
		return false
	}
	for p := path; ; p = parentPath(p) {
		if s.bad[p] {
			return true
		}
		if p == "" {
			return false
		}
	}
}

// parentPath strips the last ".name" or "[i]" of a field path.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// join builds a field path.
func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func index(parent string, i int) string { return fmt.Sprintf("%s[%d]", parent, i) }
