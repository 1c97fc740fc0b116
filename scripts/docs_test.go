package scripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/callproof/callproof/internal/doccheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Flakes section of docs/PERFORMANCE.md states make stress's counts and
// the tests it repeats; stress.sh must have the same defaults.
func TestStressDefaultsMatchDocs(t *testing.T) {
	script, err := os.ReadFile("stress.sh")
	require.NoError(t, err)
	doc, err := os.ReadFile("../docs/PERFORMANCE.md")
	require.NoError(t, err)
	_, flakes, ok := strings.Cut(string(doc), "\n## Flakes\n")
	require.True(t, ok, "docs/PERFORMANCE.md has a Flakes section")
	flakes, _, _ = strings.Cut(flakes, "\n## ")
	flakes = doccheck.Flat(flakes)

	def := func(name string) string {
		m := regexp.MustCompile(name + `="\$\{` + name + `:-([^}]*)\}"`).FindStringSubmatch(string(script))
		require.NotNil(t, m, "stress.sh defaults %s", name)
		return m[1]
	}
	assert.Contains(t, flakes, "`-count="+def("COUNT")+"`", "the count per named test")
	assert.Contains(t, flakes, "(`-count="+def("ROUNDS")+"`)", "the rounds of the live-call packages")
	assert.Contains(t, flakes, "`TIMEOUT` ("+def("TIMEOUT")+")", "the bound on each go test")
	for _, pt := range strings.Fields(def("STRESS_TESTS")) {
		pkg, name, _ := strings.Cut(pt, ":")
		assert.Contains(t, flakes, "`"+name+"` (`./"+pkg+"/`)", "a named test the docs list")
	}
	live := regexp.MustCompile(`LIVE_PACKAGES="([^"]*)"`).FindStringSubmatch(string(script))
	require.NotNil(t, live)
	assert.Contains(t, flakes, "`"+live[1]+"`", "the live-call packages")
}

// docs/INTEROP.md lists each suite make interop runs, with its test and
// package, and each line of make test's INTEROP_ONLY; each test exists.
func TestInteropSuitesMatchDocs(t *testing.T) {
	script, err := os.ReadFile("interop.sh")
	require.NoError(t, err)
	doc, err := os.ReadFile("../docs/INTEROP.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(doc), "\n## `make interop`\n")
	require.True(t, ok, "docs/INTEROP.md has a make interop section")
	sec, _, _ = strings.Cut(sec, "\n## ")
	flat := doccheck.Flat(sec)

	suites := regexp.MustCompile(`(?m)^\t"(\S+ \S+ \S+) (\./\S+/) (\S+)"$`).FindAllStringSubmatch(string(script), -1)
	require.NotEmpty(t, suites, "interop.sh's suites")
	for _, s := range suites {
		line, pkg, pat := s[1], s[2], s[3]
		name := strings.TrimSuffix(strings.TrimPrefix(strings.Split(pat, "/")[0], "^"), "$")
		full := name
		if _, sub, ok := strings.Cut(pat, "/"); ok {
			full += "/" + strings.TrimSuffix(strings.TrimPrefix(sub, "^"), "$")
		}
		assert.Contains(t, flat, "| `"+line+"` | `"+full+"` (`"+pkg+"`)", "the docs' row for %s", line)
		assertTestExists(t, "../"+pkg, name)
	}

	// make test's INTEROP_ONLY list: each line documented, its test
	// declared and run by one of the suites above, and free of a
	// top-level "|" (the lines are joined into one -skip pattern).
	sh, err := os.ReadFile("test.sh")
	require.NoError(t, err)
	list := regexp.MustCompile(`(?s)\nINTEROP_ONLY=\(\n(.*?)\n\)\n`).FindStringSubmatch(string(sh))
	require.NotNil(t, list, "test.sh's INTEROP_ONLY list")
	lines := regexp.MustCompile(`(?m)^\t'([^']+)'$`).FindAllStringSubmatch(list[1], -1)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		pat := l[1]
		assert.Contains(t, flat, "`"+pat+"`", "the documented INTEROP_ONLY line")
		assert.False(t, topLevelBar(pat), "%s: alternatives go in parentheses", pat)
		top, _, _ := strings.Cut(pat, "/")
		assertTestExists(t, "..", strings.TrimSuffix(strings.TrimPrefix(top, "^"), "$"))
		run := false
		for _, s := range suites {
			run = run || strings.Split(s[3], "/")[0] == top
		}
		assert.True(t, run, "%s: no make interop suite runs %s", pat, top)
	}
}

// topLevelBar reports whether pat has a "|" outside parentheses and
// brackets, which go test would read as separating whole patterns.
func topLevelBar(pat string) bool {
	depth, class := 0, false
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			return true
		}
	}
	return false
}

// assertTestExists checks that the tests of dir (with "..", of any
// package) declare func name.
func assertTestExists(t *testing.T, dir, name string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	if dir == ".." {
		for _, g := range []string{"../*/*_test.go", "../*/*/*_test.go", "../*/*/*/*_test.go"} {
			more, err := filepath.Glob(g)
			require.NoError(t, err)
			files = append(files, more...)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.Contains(string(b), "\nfunc "+name+"(t *testing.T)") {
			return
		}
	}
	t.Errorf("no func %s in %s*_test.go", name, dir)
}

func TestTopLevelBar(t *testing.T) {
	for pat, want := range map[string]bool{
		`^TestA$`:               false,
		`^TestA$/^(x|y)$`:       false,
		`^TestA$/^[|]$`:         false,
		`^TestA$/^\|$`:          false,
		`^TestA$|^TestB$`:       true,
		`^(TestA)$/x|^TestB$/y`: true,
	} {
		assert.Equal(t, want, topLevelBar(pat), pat)
	}
}
