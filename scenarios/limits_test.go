package scenarios

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validCase is a compact case that loads cleanly; tests append to it.
const validCase = `id: t
category: correction
setup: {field: order_number, initial_value: "5590", corrected_value: "5599", interrupt_stage: early}
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true,
           backend_correct: true, confirmation_matches_backend: true, should_execute: true}
`

// stepsCase is an explicit script; %s is spliced into its second step.
const stepsCase = `id: t
category: combined
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true,
           backend_correct: true, confirmation_matches_backend: true, should_execute: true}
steps:
  - {id: ask, do: say, text: "Hi, please ship order 5590 today.", action: ship_order, slots: {order_number: "5590"}}
  - %s
  - {id: bye, do: hangup}
`

func TestLoadValidCases(t *testing.T) {
	_, err := LoadBytes("t.yaml", []byte(validCase))
	require.NoError(t, err)
	_, err = LoadBytes("t.yaml", []byte(fmt.Sprintf(stepsCase, `{do: silence}`)))
	require.NoError(t, err)
}

// Nulls anywhere are reported (or, where a field is optional, read as
// absent); none may panic.
func TestNullsNeverPanic(t *testing.T) {
	tests := []struct {
		name, file, data string
		want             []string // substrings of the errors, in order; nil means loads
	}{
		{"setup value yaml", "t.yaml", strings.Replace(validCase, "interrupt_stage: early", "interrupt_stage: early, a: ", 1) + "\n",
			[]string{"t.yaml:3: setup.a: unknown setup key"}},
		{"setup value block", "t.yaml", "id: t\ncategory: correction\nsetup:\n  a:\n", []string{
			"t.yaml:1: expected: required field missing",
			"t.yaml:3: setup.field: required",
			"t.yaml:4: setup.a: unknown setup key",
		}},
		{"setup value json", "t.json", `{"id":"t","category":"correction","setup":{"a":null}}`, []string{
			"t.json:1: expected: required field missing",
		}},
		{"setup itself", "t.yaml", "id: t\ncategory: correction\nsetup:\n", []string{"expected: required field missing", "setup: required"}},
		{"setup list item", "t.yaml", strings.Replace(validCase, "interrupt_stage: early", "interrupt_stage: [early, null]", 1),
			[]string{"setup.interrupt_stage: want a value"}},
		{"document", "t.yaml", "null\n", []string{"t.yaml:1: want mapping, got null"}},
		{"json document", "t.json", "null", []string{"t.json:1: want mapping, got null"}},
		{"expected", "t.yaml", "id: t\ncategory: correction\nexpected:\n", []string{"t.yaml:3: expected: required, got null"}},
		{"expected field", "t.yaml", strings.Replace(validCase, "captured: true", "captured: null", 1),
			[]string{"expected.captured: required, got null"}},
		{"steps", "t.yaml", validCase + "steps:\n", []string{"steps: want sequence, got null"}},
		{"step item", "t.yaml", fmt.Sprintf(stepsCase, "null"), []string{"t.yaml:7: steps[1]: want mapping, got null"}},
		{"step field", "t.yaml", fmt.Sprintf(stepsCase, "{do: silence, duration: null}"), nil},
		{"step on", "t.yaml", fmt.Sprintf(stepsCase, "{do: silence, on: null}"), nil},
		{"step slots value", "t.yaml", fmt.Sprintf(stepsCase, "{do: correct, slots: {order_number: null}}"),
			[]string{"steps[1].slots.order_number: want string, got null"}},
		{"step fault", "t.yaml", fmt.Sprintf(stepsCase, "{do: fault, fault: null}"), []string{"steps[1].fault: required for do: fault"}},
		{"fault match args", "t.yaml", fmt.Sprintf(stepsCase, "{do: fault, fault: {kind: timeout, match: {args: null}}}"), nil},
		{"tools item", "t.yaml", validCase + "tools: [null]\n", []string{"tools[0]: want mapping, got null"}},
		{"tool args item", "t.yaml", validCase + "tools: [{name: x, effect: create, table: t, args: [null, {name: null}]}]\n",
			[]string{"tools[0].args[0]: want mapping", "tools[0].args[1].name: required, got null"}},
		{"records item", "t.yaml", validCase + "records: [null, {table: orders, key: \"1\", fields: {a: null}}]\n",
			[]string{"records[0]: want mapping", "records[1].fields.a: want string, got null"}},
		{"faults", "t.yaml", validCase + "faults: [{kind: null}, null]\n", []string{"faults[0].kind: required, got null", "faults[1]: want mapping"}},
		{"timeouts", "t.yaml", validCase + "timeouts:\n", nil},
		{"timeouts field", "t.yaml", validCase + "timeouts: {call: null}\n", []string{"timeouts.call: want duration string"}},
		{"seed", "t.yaml", validCase + "seed: null\n", nil},
		{"null key", "t.yaml", validCase + "null: 1\n", []string{"want a string key, got null"}},
		{"json nulls everywhere", "t.json", `{"id":null,"category":null,"setup":null,"expected":null,"tools":[null],"records":[null],"faults":[null],"steps":[null],"timeouts":null}`,
			[]string{"id: required, got null"}},
		{"json number out of range", "t.json", `{"faults":[{"kind":"timeout","probability":1e400}]}`,
			[]string{`t.json:1: faults[0].probability: want number, got string "1e400"`}},
		{"wrong kinds", "t.yaml", "id: [1]\ncategory: {a: b}\nsetup: [1]\nexpected: 3\ntools: x\nsteps: {a: 1}\ntimeouts: []\nseed: x\n",
			[]string{"id: want string, got sequence", "category: want string, got mapping", "setup: want mapping, got sequence"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadBytes(tt.file, []byte(tt.data))
			if s != nil {
				_ = s.Validate()
				_, _ = Compile(s)
			}
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			got := strings.Join(errStrings(t, err), "\n")
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				require.GreaterOrEqual(t, i, 0, "want %q in order in:\n%s", w, got)
				rest = rest[i+len(w):]
			}
		})
	}
}

// billionLaughs is the classic alias bomb: nine levels of nine aliases,
// 9^9 strings once expanded, in well under a kilobyte.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for c := 'b'; c <= 'i'; c++ {
		prev := string(c - 1)
		fmt.Fprintf(&b, "%c: &%c [%s]\n", c, c, strings.Repeat("*"+prev+",", 8)+"*"+prev)
	}
	return b.String()
}

func TestAliasBombIsRefusedCheaply(t *testing.T) {
	bomb := billionLaughs()
	require.Less(t, len(bomb), 1024)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadBytes("bomb.yaml", []byte(bomb))
	runtime.ReadMemStats(&after)
	assert.Equal(t, []string{"bomb.yaml:5: e[1][5][2][2][4]: more than 20000 YAML nodes once aliases are expanded (MaxNodes)"},
		errStrings(t, err))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated")
}

func TestLimitsAreFileLineFieldErrors(t *testing.T) {
	deep := "id: t\nsetup: " + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "\n"
	var many strings.Builder
	many.WriteString("id: t\nsetup:\n")
	for i := range MaxItems + 1 {
		fmt.Fprintf(&many, "  k%d: v\n", i)
	}
	big := strings.Repeat("x", 100000)
	tests := []struct {
		name, file, data, want string
	}{
		{"depth", "t.yaml", deep, "t.yaml:2: setup[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested more than 16 deep (MaxDepth)"},
		{"json depth", "t.json", `{"id":"t","setup":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}",
			"t.json:1: setup[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested more than 16 deep (MaxDepth)"},
		{"self alias", "t.yaml", "id: t\nsetup: &x [*x]\n", "t.yaml:2: setup[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested more than 16 deep (MaxDepth)"},
		{"items", "t.yaml", many.String(), "t.yaml:3: setup: 257 entries, more than 256 (MaxItems)"},
		{"key", "t.yaml", "id: t\nsetup: {" + strings.Repeat("k", MaxKeyLen+1) + ": 1}\n", "t.yaml:2: setup: key of 65 bytes, longer than 64 (MaxKeyLen)"},
		{"text", "t.yaml", "id: t\nsetup: {a: &a " + big + ", b: [" + strings.Repeat("*a, ", 25) + "]}\n",
			"t.yaml:2: setup.b[19]: more than 2097152 bytes of text once aliases are expanded (MaxExpandedBytes)"},
		{"file", "t.yaml", "id: t\n" + strings.Repeat("# comment\n", MaxFileSize/10+1), "t.yaml:104859: file is over 1048576 bytes (MaxFileSize)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadBytes(tt.file, []byte(tt.data))
			assert.Nil(t, s)
			assert.Equal(t, []string{tt.want}, errStrings(t, err))
		})
	}
}

func TestDurationAndCountBounds(t *testing.T) {
	step := func(s string) string { return fmt.Sprintf(stepsCase, s) }
	tests := []struct {
		name, data, want string
	}{
		{"call timeout overflow", validCase + "timeouts: {call: 2562047h}\n",
			"t.yaml:6: timeouts.call: 2562047h0m0s is over the limit of 1h0m0s (MaxCallTimeout)"},
		{"step timeout", validCase + "timeouts: {step: 11m, call: 1h}\n",
			"t.yaml:6: timeouts.step: 11m0s is over the limit of 10m0s (MaxStepTimeout)"},
		{"quiet", validCase + "timeouts: {quiet: 2m}\n", "t.yaml:6: timeouts.quiet: 2m0s is over the limit of 1m0s (MaxQuiet)"},
		{"zero call timeout", validCase + "timeouts: {call: 0s}\n",
			"t.yaml:6: timeouts.call: must be more than 0 (leave it out for the default)"},
		{"speech duration", step(`{do: correct, slots: {order_number: "5599"}, text: "Sorry.", duration: 11m}`),
			"t.yaml:7: steps[1].duration: 11m0s is over the limit of 10m0s (MaxStepDuration)"},
		{"zero speech", step(`{do: correct, slots: {order_number: "5599"}, text: "Sorry.", duration: 0s}`),
			"t.yaml:7: steps[1].duration: must be more than 0 (leave it out for the default)"},
		{"long speech", step(`{do: correct, slots: {order_number: "5599"}, text: "` + strings.Repeat("word ", 3001) + `"}`),
			"t.yaml:7: steps[1].text: takes 10m0.2s to say at 200ms a word, over the limit of 10m0s (MaxStepDuration)"},
		{"delay", step(`{do: silence, on: {delay: 10m1s}}`), "t.yaml:7: steps[1].on.delay: 10m1s is over the limit of 10m0s (MaxStepDuration)"},
		{"timeout", step(`{do: silence, on: {event: tool.held, timeout: 0s}}`),
			"t.yaml:7: steps[1].on.timeout: must be more than 0 (leave it out for the default)"},
		{"fallback", step(`{do: silence, on: {event: tool_intent, fallback: 1000h}}`),
			"t.yaml:7: steps[1].on.fallback: 1000h0m0s is over the limit of 10m0s (MaxStepDuration)"},
		{"hold max", step(`{do: hold, hold: h, max: 1h}`), "t.yaml:7: steps[1].max: 1h0m0s is over the limit of 10m0s (MaxHold)"},
		{"zero hold max", step(`{do: hold, hold: h, max: 0s}`), "t.yaml:7: steps[1].max: must be more than 0 (leave it out for the default)"},
		{"skip", step(`{do: hold, hold: h, match: {skip: 101}}`), "t.yaml:7: steps[1].match.skip: 101 is over the limit of 100 (MaxHoldSkip)"},
		{"fault delay", validCase + "faults: [{kind: latency, delay: 61s}]\n",
			"t.yaml:6: faults[0].delay: 1m1s is over the limit of 1m0s (MaxFaultDelay)"},
		{"step fault delay", step(`{do: fault, fault: {kind: latency, delay: 2m}}`),
			"t.yaml:7: steps[1].fault.delay: 2m0s is over the limit of 1m0s (MaxFaultDelay)"},
		{"fault times", validCase + "faults: [{kind: timeout, times: 1000}]\n",
			"t.yaml:6: faults[0].times: 1000 is over the limit of 100 (MaxFaultTimes)"},
		{"nan probability", validCase + "faults: [{kind: timeout, probability: .nan}]\n",
			"t.yaml:6: faults[0].probability: NaN is outside 0..1"},
		{"record version", validCase + "records: [{table: orders, key: \"5590\", version: 9223372036854775807}]\n",
			"t.yaml:6: records[0].version: 9223372036854775807 is over the limit of 1000000 (MaxRecordVersion)"},
		{"setup delay_ms", strings.Replace(validCase, `category: correction
setup: {field: order_number, initial_value: "5590", corrected_value: "5599", interrupt_stage: early}`, `category: tool_failure
setup: {fault: latency, delay_ms: "60001"}`, 1),
			`t.yaml:3: setup.delay_ms: "60001": want an integer 1..60000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(tt.data))
			assert.Equal(t, []string{tt.want}, errStrings(t, err))
		})
	}
}
