package callsim_test

import (
	"fmt"
	"github.com/callproof/callproof/internal/doccheck"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
)

// docs/PROTOCOL.md states a checked value as VALUE (`pkg.Name`): a number
// with an optional unit, a Go duration, or a `quoted` string, followed by
// the constant it must equal. This test checks every such reference to a
// callsim or nativews constant, and that every constant below is
// referenced.

// callsimDocConsts is every agent-visible constant of callsim and nativews
// by the name the docs use.
func callsimDocConsts() map[string]any {
	return map[string]any{
		"callsim.DefaultMaxFrameBytes":        callsim.DefaultMaxFrameBytes,
		"callsim.DefaultMaxMessagesPerSecond": callsim.DefaultMaxMessagesPerSecond,
		"callsim.DefaultMaxMessagesPerCall":   callsim.DefaultMaxMessagesPerCall,
		"callsim.DefaultMaxEventTextBytes":    callsim.DefaultMaxEventTextBytes,
		"callsim.DefaultMaxCallTextBytes":     callsim.DefaultMaxCallTextBytes,
		"callsim.DefaultMaxHistoryBytes":      callsim.DefaultMaxHistoryBytes,
		"callsim.DefaultMaxHistoryEvents":     callsim.DefaultMaxHistoryEvents,
		"callsim.DefaultMinIdleTimeout":       callsim.DefaultMinIdleTimeout,
		"callsim.DefaultAckWait":              callsim.DefaultAckWait,
		"callsim.DefaultDialTimeout":          callsim.DefaultDialTimeout,
		"callsim.DefaultStopTimeout":          callsim.DefaultStopTimeout,
		"callsim.DefaultCloseTimeout":         callsim.DefaultCloseTimeout,
		"callsim.DefaultFlushTimeout":         callsim.DefaultFlushTimeout,
		"callsim.ReasonBehind":                callsim.ReasonBehind,
		"callsim.JitterAllowance":             callsim.JitterAllowance,
		"callsim.DefaultStepTimeout":          callsim.DefaultStepTimeout,
		"callsim.DefaultCallTimeout":          callsim.DefaultCallTimeout,
		"callsim.DefaultQuiet":                callsim.DefaultQuiet,
		"callsim.DefaultNoise":                callsim.DefaultNoise,
		"callsim.WordDuration":                callsim.WordDuration,
		"callsim.MinSpeech":                   callsim.MinSpeech,
		"callsim.CallDeadlineSlack":           callsim.CallDeadlineSlack,
		"callsim.TruncationMarker":            callsim.TruncationMarker,
		"callsim.ReasonDial":                  callsim.ReasonDial,
		"callsim.ReasonClosed":                callsim.ReasonClosed,
		"callsim.ReasonConnLost":              callsim.ReasonConnLost,
		"callsim.ReasonGarbageFrame":          callsim.ReasonGarbageFrame,
		"callsim.ReasonOversizedFrame":        callsim.ReasonOversizedFrame,
		"callsim.ReasonFlood":                 callsim.ReasonFlood,
		"callsim.ReasonTextBudget":            callsim.ReasonTextBudget,
		"callsim.ReasonHistoryBudget":         callsim.ReasonHistoryBudget,
		"callsim.ReasonUnresponsive":          callsim.ReasonUnresponsive,
		"callsim.ReasonNoResponse":            callsim.ReasonNoResponse,
		"callsim.ReasonCallTimeout":           callsim.ReasonCallTimeout,
		"nativews.DefaultWriteTimeout":        nativews.DefaultWriteTimeout,
		"nativews.CloseGrace":                 nativews.CloseGrace,
		"nativews.PingsPerIdle":               nativews.PingsPerIdle,
		"nativews.MinPingInterval":            nativews.MinPingInterval,
	}
}

// callsimUndocumented are exported constants PROTOCOL.md leaves out on
// purpose, with why.
var callsimUndocumented = map[string]string{
	"nativews.DefaultMaxFrameBytes": "the transport's limit until callsim sets its own (callsim.DefaultMaxFrameBytes) before the first read",
	"callsim.ReasonAborted":         "only for a Call.Abort without a reason; the harness always gives one (the backend's tool_flood violation)",
}

// docRef is VALUE (`pkg.Name`) anywhere in a doc.

// docRefs reads every checked reference of a doc whose package is one of
// pkgs: name -> the values written for it.
func docRefs(t *testing.T, path string, pkgs ...string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return doccheck.Refs(string(raw), pkgs...)
}

// docValue reads a written value as the type of want: a Go duration, a
// count with an optional KiB/MiB/bytes unit (commas allowed), or a
// `quoted` string.
func docValue(want any, s string) (any, error) { return doccheck.Value(want, s) }

// normalise makes constants of any integer kind comparable with docValue.
func normalise(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	}
	return v
}

// exportedConsts lists the exported constants declared in the non-test Go
// files of dir, as pkg.Name.
func exportedConsts(t *testing.T, dir, pkg string) []string {
	t.Helper()
	names, err := doccheck.ExportedConsts(dir, pkg)
	require.NoError(t, err)
	return names
}

func TestProtocolDocMatchesCallsim(t *testing.T) {
	code := callsimDocConsts()
	declared := append(exportedConsts(t, ".", "callsim"), exportedConsts(t, "nativews", "nativews")...)
	for _, name := range declared {
		_, mapped := code[name]
		_, skipped := callsimUndocumented[name]
		assert.True(t, mapped || skipped, "%s: a new constant; add it to docs/PROTOCOL.md and callsimDocConsts (or callsimUndocumented, with why)", name)
	}

	doc := docRefs(t, "../docs/PROTOCOL.md", "callsim", "nativews")
	for name, want := range code {
		written, ok := doc[name]
		if !assert.True(t, ok, "docs/PROTOCOL.md never states %s as VALUE (`%s`)", name, name) {
			continue
		}
		for _, w := range written {
			got, err := docValue(want, w)
			if assert.NoError(t, err, "%s: value %q", name, w) {
				assert.Equal(t, normalise(want), normalise(got), "%s: docs/PROTOCOL.md says %s", name, w)
			}
		}
	}
	for name := range doc {
		_, ok := code[name]
		assert.True(t, ok, "docs/PROTOCOL.md refers to %s, which callsimDocConsts does not know", name)
	}
}

// The defaults PROTOCOL.md states in prose are the ones a Simulator fills
// in: DefaultLimits carries the budget constants checked above.
func TestProtocolDocDefaultLimits(t *testing.T) {
	l := callsim.DefaultLimits()
	assert.Equal(t, callsim.Limits{
		MaxFrameBytes:        callsim.DefaultMaxFrameBytes,
		MaxMessagesPerSecond: callsim.DefaultMaxMessagesPerSecond,
		MaxMessagesPerCall:   callsim.DefaultMaxMessagesPerCall,
		MaxEventTextBytes:    callsim.DefaultMaxEventTextBytes,
		MaxCallTextBytes:     callsim.DefaultMaxCallTextBytes,
		MaxHistoryBytes:      callsim.DefaultMaxHistoryBytes,
		MaxHistoryEvents:     callsim.DefaultMaxHistoryEvents,
	}, l)
	assert.Equal(t, callsim.DefaultMaxFrameBytes, nativews.DefaultMaxFrameBytes, "one frame limit before and after SetFrameLimit")
}

// spoken matches d as prose writes it: 300 ms, 300ms, 1.5 s, 2 min.
func spoken(d time.Duration) string { return doccheck.Spoken(d) }

// size writes a byte count as the docs do: 4 KiB, 1 MiB, 100 bytes.
func size(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func flatDoc(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile("../docs/" + name)
	require.NoError(t, err)
	return doccheck.Flat(string(raw))
}

// TestProtocolDocProse checks the callsim values PROTOCOL.md repeats in
// its prose, outside the tables.
func TestProtocolDocProse(t *testing.T) {
	flat := flatDoc(t, "PROTOCOL.md")
	words := map[int]string{2: "two", 3: "three", 4: "four", 5: "five"}
	for _, p := range []string{
		fmt.Sprintf(`\*\*%s \(real time\)\*\* after sending .start.`, spoken(callsim.DefaultAckWait)),
		fmt.Sprintf(`\(≤ %s real\)`, spoken(callsim.DefaultAckWait)),
		fmt.Sprintf("%s a word with a minimum of %s for a bare `callsim` script", spoken(callsim.WordDuration), spoken(callsim.MinSpeech)),
		fmt.Sprintf("or %s \\(bare `callsim`\\)", spoken(callsim.DefaultNoise)),
		fmt.Sprintf(`but never less than %s\.`, spoken(callsim.DefaultMinIdleTimeout)),
		fmt.Sprintf(`Pings go out %s times per idle timeout, at most every %s\.`, words[nativews.PingsPerIdle], spoken(nativews.MinPingInterval)),
		fmt.Sprintf(`took over %s \(real\)`, spoken(callsim.DefaultDialTimeout)),
		fmt.Sprintf(`did not complete within %s \(real\) because you stopped reading`, spoken(nativews.DefaultWriteTimeout)),
		fmt.Sprintf("as `agent.unknown` \\(cut to %s\\)", size(callsim.DefaultMaxEventTextBytes)),
	} {
		assert.True(t, regexp.MustCompile(p).MatchString(flat), "docs/PROTOCOL.md: no %q", p)
	}
}

// PROTOCOL.md lists the agent_error reasons late frames leave the
// agent's, exactly callsim.PacingIndependentReasons.
func TestProtocolDocPacingIndependentReasons(t *testing.T) {
	rs := callsim.PacingIndependentReasons()
	quoted := make([]string, len(rs))
	for i, r := range rs {
		assert.True(t, callsim.PacingIndependent(r), r)
		quoted[i] = "`" + r + "`"
	}
	list := strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
	assert.Contains(t, flatDoc(t, "PROTOCOL.md"), list+" (the list is `callsim.PacingIndependentReasons`)")
	assert.False(t, callsim.PacingIndependent(callsim.ReasonFlood), "a flood is counted as frames are read")
	assert.False(t, callsim.PacingIndependent(callsim.ReasonUnresponsive))
}

// scenariosRef is `pkg.Name` (VALUE), the form docs/SCENARIOS.md's limits
// table uses.
var scenariosRef = regexp.MustCompile("`([a-z]+\\.\\w+)` \\(([^)]+)\\)")

// TestScenariosDocLimitDefaults checks the callsim defaults that
// docs/SCENARIOS.md's `limits` table names.
func TestScenariosDocLimitDefaults(t *testing.T) {
	code := callsimDocConsts()
	n := 0
	for _, m := range scenariosRef.FindAllStringSubmatch(flatDoc(t, "SCENARIOS.md"), -1) {
		if !strings.HasPrefix(m[1], "callsim.") && !strings.HasPrefix(m[1], "nativews.") {
			continue
		}
		n++
		want, ok := code[m[1]]
		if !assert.True(t, ok, "docs/SCENARIOS.md refers to %s, which callsimDocConsts does not know", m[1]) {
			continue
		}
		got, err := docValue(want, m[2])
		if assert.NoError(t, err, "%s: %q", m[1], m[2]) {
			assert.Equal(t, normalise(want), normalise(got), "%s: docs/SCENARIOS.md says %s", m[1], m[2])
		}
	}
	assert.NotZero(t, n, "docs/SCENARIOS.md names no callsim default")
}
