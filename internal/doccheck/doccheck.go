// Package doccheck reads the values the docs state, so tests can compare
// them with the code's constants: every default and limit written in
// docs/ is checked against the code and cannot drift. Used by tests only.
package doccheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// refRe matches a value the docs tie to a constant: VALUE (`pkg.Name`).
var refRe = regexp.MustCompile("(`[^`]+`|[0-9][0-9.,]*(?:ms|s|m|h)?(?: (?:KiB|MiB|bytes))?) \\(`([a-z]+\\.\\w+)`\\)") // read-only

// Refs returns every VALUE (`pkg.Name`) in doc whose package is one of pkgs,
// keyed by pkg.Name.
func Refs(doc string, pkgs ...string) map[string][]string {
	out := map[string][]string{}
	for _, m := range refRe.FindAllStringSubmatch(doc, -1) {
		pkg, _, _ := strings.Cut(m[2], ".")
		for _, p := range pkgs {
			if p == pkg {
				out[m[2]] = append(out[m[2]], m[1])
			}
		}
	}
	return out
}

// Value reads a written value as the type of want: a Go duration, a count
// with an optional KiB/MiB/bytes unit (commas allowed, returned as int64),
// or a `quoted` string.
func Value(want any, s string) (any, error) {
	if q, ok := strings.CutPrefix(s, "`"); ok {
		return strings.TrimSuffix(q, "`"), nil
	}
	switch want.(type) {
	case time.Duration:
		return time.ParseDuration(s)
	case string:
		return nil, fmt.Errorf("want a `quoted` string")
	}
	num, unit, _ := strings.Cut(s, " ")
	n, err := strconv.ParseInt(strings.ReplaceAll(num, ",", ""), 10, 64)
	if err != nil {
		return nil, err
	}
	switch unit {
	case "", "bytes":
	case "KiB":
		n <<= 10
	case "MiB":
		n <<= 20
	default:
		return nil, fmt.Errorf("unknown unit %q", unit)
	}
	return n, nil
}

// Mismatches compares the constants code (keyed pkg.Name, as Refs keys
// them) with what doc states of them, and describes each one the doc
// never states or states otherwise; none means they agree. Integer
// constants compare by value, whatever their Go type.
func Mismatches(doc string, code map[string]any, pkgs ...string) []string {
	refs := Refs(doc, pkgs...)
	var out []string
	for _, name := range sortedKeys(code) {
		want := code[name]
		written, ok := refs[name]
		if !ok {
			out = append(out, fmt.Sprintf("never states %s as VALUE (`%s`)", name, name))
			continue
		}
		for _, w := range written {
			got, err := Value(want, w)
			switch {
			case err != nil:
				out = append(out, fmt.Sprintf("%s: %q: %v", name, w, err))
			case fmt.Sprint(normInt(want)) != fmt.Sprint(got):
				out = append(out, fmt.Sprintf("%s: says %q, the code %v", name, w, want))
			}
		}
	}
	return out
}

// normInt widens an integer constant to int64, as Value reads counts.
func normInt(v any) any {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Spoken is a regexp matching d as prose may write it: 1500ms, 1500 ms,
// 1.5s, 1.5 s, 2m, 2 min.
func Spoken(d time.Duration) string {
	alts := []string{fmt.Sprintf("%d ?ms", d/time.Millisecond)}
	if d >= time.Second {
		alts = append(alts, regexp.QuoteMeta(strconv.FormatFloat(d.Seconds(), 'f', -1, 64))+" ?s")
	}
	if d%time.Minute == 0 && d >= time.Minute {
		alts = append(alts, fmt.Sprintf("%d ?(?:m|min)", d/time.Minute))
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

// Flat joins a document's words with single spaces, so a phrase can be
// matched across line breaks.
func Flat(raw string) string { return strings.Join(strings.Fields(raw), " ") }

// ExportedConsts lists the exported constants declared in the non-test Go
// files of dir, as pkg.Name, sorted.
func ExportedConsts(dir, pkg string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.IsExported() {
						names = append(names, pkg+"."+n.Name)
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// PinMismatches compares the versions doc states of each Python package
// in names with the ones requirements (a pip requirements file's text,
// NAME==VERSION lines) pins. A version is stated as "`name` X.Y.Z",
// "`name[extras]` X.Y.Z" or "(name X.Y.Z"; a name the file does not pin,
// or that doc states no version of, is a mismatch too.
func PinMismatches(doc, requirements string, names ...string) []string {
	flat := Flat(doc)
	var out []string
	for _, name := range names {
		q := regexp.QuoteMeta(name)
		pin := regexp.MustCompile(`(?m)^` + q + `==(\S+) `).FindStringSubmatch(requirements)
		if pin == nil {
			out = append(out, fmt.Sprintf("%s: not pinned", name))
			continue
		}
		stated := regexp.MustCompile("(?:`"+q+"(?:\\[[a-z,]+\\])?`|\\("+q+") ([0-9][0-9.]*[0-9])").FindAllStringSubmatch(flat, -1)
		if len(stated) == 0 {
			out = append(out, fmt.Sprintf("%s: no version stated (pinned %s)", name, pin[1]))
		}
		for _, s := range stated {
			if s[1] != pin[1] {
				out = append(out, fmt.Sprintf("%s: stated %s, pinned %s", name, s[1], pin[1]))
			}
		}
	}
	return out
}
