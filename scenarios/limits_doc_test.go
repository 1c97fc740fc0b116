package scenarios

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitValues is every limit constant by name. The test below checks that
// it names exactly the constants limits.go declares, so a new limit cannot
// skip the docs.
func limitValues() map[string]any {
	return map[string]any{
		"MaxFileSize":        MaxFileSize,
		"MaxNodes":           MaxNodes,
		"MaxExpandedBytes":   MaxExpandedBytes,
		"MaxDepth":           MaxDepth,
		"MaxItems":           MaxItems,
		"MaxKeyLen":          MaxKeyLen,
		"MaxCallTimeout":     MaxCallTimeout,
		"MaxStepTimeout":     MaxStepTimeout,
		"MaxQuiet":           MaxQuiet,
		"MaxStepDuration":    MaxStepDuration,
		"MaxHold":            MaxHold,
		"MaxFaultDelay":      MaxFaultDelay,
		"MaxFaultTimes":      MaxFaultTimes,
		"MaxHoldSkip":        MaxHoldSkip,
		"MaxTriggerPartials": MaxTriggerPartials,
		"MaxRecordVersion":   MaxRecordVersion,

		"MaxLimitEventTextBytes":        MaxLimitEventTextBytes,
		"MaxLimitCallTextBytes":         MaxLimitCallTextBytes,
		"MaxLimitHistoryBytes":          MaxLimitHistoryBytes,
		"MaxLimitHistoryEvents":         MaxLimitHistoryEvents,
		"MaxLimitToolRequestsPerSecond": MaxLimitToolRequestsPerSecond,
		"MaxLimitToolRequestsPerCall":   MaxLimitToolRequestsPerCall,
		"MaxLimitIdleTimeout":           MaxLimitIdleTimeout,
		"MaxLimitToolConnections":       MaxLimitToolConnections,
		"MaxLimitToolHeaderBytes":       MaxLimitToolHeaderBytes,
		"MaxLimitToolHeaderTimeout":     MaxLimitToolHeaderTimeout,
		"MaxCustomParameters":           MaxCustomParameters,
		"MaxCustomParameterBytes":       MaxCustomParameterBytes,
	}
}

// declaredLimits lists the exported constants of limits.go.
func declaredLimits(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "limits.go", nil, 0)
	require.NoError(t, err)
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if n.IsExported() {
					names = append(names, n.Name)
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

var limitRow = regexp.MustCompile("^\\| (.+) \\| ([^|]+) \\| `(\\w+)` \\|$")

// docLimits reads the Limits table of docs/SCENARIOS.md: constant -> value
// as written.
func docLimits(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../docs/SCENARIOS.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(raw), "\n## Limits\n")
	require.True(t, ok, "docs/SCENARIOS.md has no ## Limits section")
	sec, _, _ = strings.Cut(sec, "\n## ")
	out := map[string]string{}
	for _, line := range strings.Split(sec, "\n") {
		if m := limitRow.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			_, dup := out[m[3]]
			require.False(t, dup, "%s is listed twice", m[3])
			out[m[3]] = m[2]
		}
	}
	return out
}

// parseDocValue reads "1 MiB", "64 bytes", "20000" or a Go duration.
func parseDocValue(want any, s string) (any, error) {
	if _, isDur := want.(time.Duration); isDur {
		return time.ParseDuration(s)
	}
	num, unit, _ := strings.Cut(s, " ")
	n, err := strconv.Atoi(num)
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
		return nil, strconv.ErrSyntax
	}
	return n, nil
}

func TestLimitsDocMatchesCode(t *testing.T) {
	code := limitValues()
	var mapped []string
	for name := range code {
		mapped = append(mapped, name)
	}
	sort.Strings(mapped)
	require.Equal(t, declaredLimits(t), mapped, "limitValues must name every constant of limits.go")

	doc := docLimits(t)
	for _, name := range mapped {
		written, ok := doc[name]
		if !assert.True(t, ok, "docs/SCENARIOS.md ## Limits does not list %s", name) {
			continue
		}
		got, err := parseDocValue(code[name], written)
		if assert.NoError(t, err, "%s: value %q", name, written) {
			assert.Equal(t, code[name], got, "%s: docs say %q", name, written)
		}
	}
	for name := range doc {
		_, ok := code[name]
		assert.True(t, ok, "docs/SCENARIOS.md ## Limits lists %s, which is no limit constant", name)
	}
}
