package scenarios

import (
	"fmt"
	"github.com/callproof/callproof/internal/doccheck"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/trace"
)

// The script defaults docs/PROTOCOL.md and docs/SCENARIOS.md state, checked
// against the compiler: its constants, and for the values compact scripts
// write as literals, the scripts it compiles.

// protocolConsts is every scenarios constant PROTOCOL.md states as
// VALUE (`scenarios.Name`).
func protocolConsts() map[string]time.Duration {
	return map[string]time.Duration{
		"scenarios.DefaultStepTimeout": DefaultStepTimeout,
		"scenarios.DefaultCallTimeout": DefaultCallTimeout,
		"scenarios.DefaultQuiet":       DefaultQuiet,
		"scenarios.WordDuration":       WordDuration,
		"scenarios.defaultNoiseLen":    defaultNoiseLen,
		"scenarios.defaultHoldMax":     defaultHoldMax,
	}
}

var protocolRef = regexp.MustCompile("(`[^`]+`|[0-9][0-9.,]*(?:ms|s|m|h)?(?: (?:KiB|MiB|bytes))?) \\(`(scenarios\\.\\w+)`\\)")

// readDoc returns a doc with every run of white space made one space, so a
// phrase may be checked across line breaks.
func readDoc(t *testing.T, name string) (raw, flat string) {
	t.Helper()
	b, err := os.ReadFile("../docs/" + name)
	require.NoError(t, err)
	return string(b), doccheck.Flat(string(b))
}

// spoken matches d as the docs may write it: 1500ms, 1500 ms, 1.5s, 1.5 s,
// 2m, 2 min.
func spoken(d time.Duration) string { return doccheck.Spoken(d) }

// compileCase compiles one compact case written as YAML.
func compileCase(t *testing.T, category, setup string) *Compiled {
	t.Helper()
	y := fmt.Sprintf("id: doc\ncategory: %s\nsetup: %s\nexpected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}\n", category, setup)
	s, err := LoadBytes("doc.yaml", []byte(y))
	require.NoError(t, err)
	c, err := Compile(s)
	require.NoError(t, err)
	return c
}

func stepOf(t *testing.T, c *Compiled, id string) trace.Step {
	t.Helper()
	for _, st := range c.Script.Steps {
		if st.ID == id {
			return st
		}
	}
	t.Fatalf("no step %q", id)
	return trace.Step{}
}

// compactValues are the literals of compact scripts the docs state.
type compactValues struct {
	greeting, fallback, quietBound   time.Duration
	heldDelay, holdMax, release      time.Duration
	retryStatus, retryTimes          int
	retryDelay                       time.Duration
	bargeDelay, noiseDelay, noiseLen time.Duration
}

func compact(t *testing.T) compactValues {
	t.Helper()
	var v compactValues
	prep := compileCase(t, "correction", "{field: order_number, initial_value: \"5590\", corrected_value: \"5599\", interrupt_stage: during_tool_prep}")
	ask := stepOf(t, prep, "ask")
	require.Equal(t, trace.KindAgentSpeechEnd, ask.On.Event, "the request waits for the greeting's end")
	v.greeting = ask.On.Timeout
	corr := stepOf(t, prep, "correct")
	require.Equal(t, trace.KindAgentToolIntent, corr.On.Event)
	v.fallback = corr.On.Fallback
	v.quietBound = stepOf(t, prep, "quiet").On.Timeout

	sent := compileCase(t, "correction", "{field: order_number, initial_value: \"5590\", corrected_value: \"5599\", interrupt_stage: after_tool_sent}")
	require.Equal(t, trace.KindToolHeld, stepOf(t, sent, "correct").On.Event)
	v.heldDelay = stepOf(t, sent, "correct").On.Delay
	v.holdMax = stepOf(t, sent, "hold").Duration
	rel := stepOf(t, sent, "release").On
	require.Equal(t, trace.KindAgentState, rel.Event, "the release waits for the agent's state report")
	v.release = rel.Timeout

	retry := compileCase(t, "correction", "{field: order_number, initial_value: \"5590\", corrected_value: \"5599\", interrupt_stage: during_retry}")
	require.Len(t, retry.Faults, 1)
	v.retryStatus, v.retryTimes, v.retryDelay = retry.Faults[0].Status, retry.Faults[0].Times, retry.Faults[0].Delay
	require.Equal(t, v.release, stepOf(t, retry, "release").On.Timeout)

	barge := compileCase(t, "interruption", "{interrupt_stage: before_agent_finishes, invalidates: false}")
	v.bargeDelay = stepOf(t, barge, "interrupt").On.Delay
	noise := compileCase(t, "interruption", "{interrupt_stage: background_noise, sound: cough}")
	v.noiseDelay, v.noiseLen = stepOf(t, noise, "noise").On.Delay, stepOf(t, noise, "noise").Duration
	return v
}

// phrase is a regular expression with one %s per value, each filled with
// spoken(value).
type phrase struct {
	re     string
	values []time.Duration
}

func checkPhrases(t *testing.T, doc, flat string, ps []phrase) {
	t.Helper()
	for _, p := range ps {
		args := make([]any, len(p.values))
		for i, v := range p.values {
			args[i] = spoken(v)
		}
		re := regexp.MustCompile(fmt.Sprintf(p.re, args...))
		assert.True(t, re.MatchString(flat), "docs/%s: no %q for %v", doc, p.re, p.values)
	}
}

func TestProtocolDocScriptDefaults(t *testing.T) {
	raw, flat := readDoc(t, "PROTOCOL.md")
	code := protocolConsts()
	seen := map[string]bool{}
	for _, m := range protocolRef.FindAllStringSubmatch(raw, -1) {
		want, ok := code[m[2]]
		if !assert.True(t, ok, "docs/PROTOCOL.md refers to %s, which protocolConsts does not know", m[2]) {
			continue
		}
		seen[m[2]] = true
		if got, err := time.ParseDuration(m[1]); assert.NoError(t, err, "%s: %q", m[2], m[1]) {
			assert.Equal(t, want, got, "%s: docs/PROTOCOL.md says %s", m[2], m[1])
		}
	}
	for name := range code {
		assert.True(t, seen[name], "docs/PROTOCOL.md never states %s as VALUE (`%s`)", name, name)
	}
	for _, name := range declaredCompileConsts(t) {
		_, ok := code["scenarios."+name]
		assert.True(t, ok, "compile.go declares %s: state it in docs/PROTOCOL.md and protocolConsts", name)
	}

	v := compact(t)
	checkPhrases(t, "PROTOCOL.md", flat, []phrase{
		{`\| greeting window [^|]*\| %s \|`, []time.Duration{v.greeting}},
		{`\| tool-intent fallback [^|]*\| %s \|`, []time.Duration{v.fallback}},
		{"\\| bound of the final `wait_quiet` \\| %s \\|", []time.Duration{v.quietBound}},
		{`as soon as your first utterance ends\*\*, or \*\*%s \(script time\)\*\*`, []time.Duration{v.greeting}},
		{`a greeting still going after %s is talked over`, []time.Duration{v.greeting}},
		{`\(script time; %s in the built-in packs\)`, []time.Duration{v.fallback}},
		{`bounded: \*\*%s \(script time\)\*\* in compact scripts`, []time.Duration{v.quietBound}},
		{`quiet period: %s of script time in a scenario file`, []time.Duration{DefaultQuiet}},
		{`within the step timeout: %s of script time unless`, []time.Duration{DefaultStepTimeout}},
		{`\(script time: %s in a scenario file unless`, []time.Duration{DefaultCallTimeout}},
		{`time per word \(script time\): %s a word in a scenario file`, []time.Duration{WordDuration}},
		{`else %s \(scenario file\)`, []time.Duration{defaultNoiseLen}},
		{`Greet in under %s of script time`, []time.Duration{v.greeting}},
	})
}

// declaredCompileConsts lists the exported constants of compile.go.
func declaredCompileConsts(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("compile.go")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(raw), "\nconst (\n")
	require.True(t, ok)
	block, _, _ = strings.Cut(block, "\n)\n")
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\t([A-Z]\w*)\s`).FindAllStringSubmatch(block, -1) {
		names = append(names, m[1])
	}
	require.NotEmpty(t, names)
	return names
}

func TestScenariosDocDefaults(t *testing.T) {
	_, flat := readDoc(t, "SCENARIOS.md")
	v := compact(t)
	checkPhrases(t, "SCENARIOS.md", flat, []phrase{
		{"`timeouts` \\| optional \\| `\\{step, call, quiet\\}`, defaults `%s`, `%s`, `%s`", []time.Duration{DefaultStepTimeout, DefaultCallTimeout, DefaultQuiet}},
		{"`noise` \\| `sound` \\(required\\), `duration` \\(default %s\\)", []time.Duration{defaultNoiseLen}},
		{"`max` \\(default %s\\) \\| arm a backend hold", []time.Duration{defaultHoldMax}},
		{"Speech `duration` defaults to %s per word, with no minimum", []time.Duration{WordDuration}},
		{"the default of a speech step: %s a word", []time.Duration{WordDuration}},
		{"or after %s \\(script time\\) if none comes; `quiet` waits at most %s", []time.Duration{v.greeting, v.quietBound}},
		{"compact scripts use %s", []time.Duration{v.quietBound}},
		{"`during_tool_prep` \\| `agent.tool_intent`, fallback %s", []time.Duration{v.fallback}},
		{"`after_tool_sent` \\| `tool.held` \\+ %s; required \\| hold `h1` on the action's tool \\(max %s\\) armed before `ask`; `release` h1 at the agent's first `agent.state` after the challenge, or %s after the challenge if none comes",
			[]time.Duration{v.heldDelay, v.holdMax, v.release}},
		{"`during_retry` \\| `tool.held` \\(the retry\\) \\+ %s; required", []time.Duration{v.heldDelay}},
		{"`release` at the agent's state report after the correction, or %s after it", []time.Duration{v.release}},
		{"`before_agent_finishes` \\| silence step `landed` \\(0s\\) on `tool.committed` of the action; then the interruption on `agent.speech_start` \\+ %s after `landed`", []time.Duration{v.bargeDelay}},
		{"cough, door, tv, music, traffic; %s\\) on `agent.speech_start` \\+ %s after `landed`", []time.Duration{v.noiseLen, v.noiseDelay}},
	})
	retry := fmt.Sprintf("fault `status %d` after %s, times %d, on the action's tool", v.retryStatus, spoken(v.retryDelay), v.retryTimes)
	assert.True(t, regexp.MustCompile(retry).MatchString(flat), "docs/SCENARIOS.md: no %q", retry)
	assert.Contains(t, flat, fmt.Sprintf("`sound`: %s;", strings.Join(Sounds(), ", ")))
	for _, p := range []string{
		fmt.Sprintf("`order` (default `%s`)", DefaultOrder),
		fmt.Sprintf("`date` (default `%s`;", DefaultDate),
		fmt.Sprintf("`quantity` (default `%s`)", DefaultQuantity),
	} {
		assert.Contains(t, flat, p)
	}
}

// TestScenariosDocFaultDefaults checks the tool_failure table of defaults:
// every fault kind is listed once, with what the compiler gives it.
func TestScenariosDocFaultDefaults(t *testing.T) {
	raw, _ := readDoc(t, "SCENARIOS.md")
	_, sec, ok := strings.Cut(raw, "| fault | defaults |")
	require.True(t, ok, "docs/SCENARIOS.md has no table of fault defaults")
	rows := map[trace.FaultKind]string{}
	for _, line := range strings.Split(sec, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 2, line)
		for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(cells[0], -1) {
			k := trace.FaultKind(m[1])
			_, dup := rows[k]
			require.False(t, dup, "%s listed twice", k)
			rows[k] = strings.TrimSpace(cells[1])
		}
	}
	for _, k := range faultKinds() {
		cell, ok := rows[k]
		if !assert.True(t, ok, "fault %s has no row of defaults", k) {
			continue
		}
		c := compileCase(t, "tool_failure", "{fault: "+string(k)+"}")
		require.Len(t, c.Faults, 1)
		f := c.Faults[0]
		var want []string
		if f.Delay > 0 {
			want = append(want, "delay "+spoken(f.Delay))
		}
		if f.Times > 0 {
			want = append(want, fmt.Sprintf("times %d", f.Times))
		} else {
			want = append(want, "every request")
		}
		if f.Status > 0 {
			want = append(want, fmt.Sprintf("status %d", f.Status))
		}
		if f.Record != "" {
			want = append(want, fmt.Sprintf("record `%s`", regexp.QuoteMeta(f.Record)))
		}
		assert.Regexp(t, "^"+strings.Join(want, ", ")+"$", cell, "fault %s", k)
	}
	assert.Len(t, rows, len(faultKinds()), "the table lists a fault kind the compiler does not know")
}

// TestProtocolDocLimitsBlock: the `limits:` fields PROTOCOL.md's budget
// table names are exactly the scenario format's, and its example block
// loads and reaches the compiled scenario.
func TestProtocolDocLimitsBlock(t *testing.T) {
	raw, _ := readDoc(t, "PROTOCOL.md")
	_, sec, ok := strings.Cut(raw, "| budget | default | when passed | `limits:` field |")
	require.True(t, ok, "docs/PROTOCOL.md has no budget table")
	field := regexp.MustCompile("\\| `(\\w+)`(?: \\([^)]*\\))? \\|$")
	var documented []string
	for _, line := range strings.Split(sec, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if m := field.FindStringSubmatch(line); m != nil {
			documented = append(documented, m[1])
		}
	}
	var fields []string
	typ := reflect.TypeOf(LimitsSpec{})
	for i := range typ.NumField() {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields = append(fields, tag)
	}
	sort.Strings(fields)
	sort.Strings(documented)
	assert.Equal(t, fields, documented, "the `limits:` field column of docs/PROTOCOL.md's budget table")

	m := regexp.MustCompile("(?s)```yaml\n(limits:.*?)```").FindStringSubmatch(raw)
	require.NotNil(t, m, "docs/PROTOCOL.md has no example limits: block")
	y := "id: doc\ncategory: tool_failure\nsetup: {fault: timeout}\n" + m[1] +
		"expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}\n"
	s, err := LoadBytes("doc.yaml", []byte(y))
	require.NoError(t, err, "the example of docs/PROTOCOL.md:\n%s", m[1])
	c, err := Compile(s)
	require.NoError(t, err)
	assert.NotEmpty(t, c.CustomParameters)
	assert.NotEqual(t, CallLimits{}, c.Limits)
}
