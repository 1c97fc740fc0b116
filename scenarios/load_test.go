package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errStrings flattens an Errors value into its lines.
func errStrings(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var es Errors
	require.True(t, errors.As(err, &es), "want Errors, got %T", err)
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Error()
	}
	return out
}

func TestSeed001CaseLoadsVerbatim(t *testing.T) {
	s, err := LoadFile("testdata/seed001_corr-02.json")
	require.NoError(t, err)
	assert.Equal(t, "corr-02", s.ID)
	assert.Equal(t, CatCorrection, s.Category)
	assert.Equal(t, "5599", s.Setup["corrected_value"])
	assert.Equal(t, Expected{true, true, true, true, true, true, true}, s.Expected)

	c, err := Compile(s)
	require.NoError(t, err)
	core, err := Pack("core")
	require.NoError(t, err)
	packed, err := Compile(find(t, core, "corr-02"))
	require.NoError(t, err)
	// The seed's case and the pack's corr-02 are the same call.
	assert.Equal(t, packed.Script, c.Script)
	assert.Equal(t, packed.Seed, c.Seed)

	// Any JSON layout parses the same, including tab indentation.
	raw, err := os.ReadFile("testdata/seed001_corr-02.json")
	require.NoError(t, err)
	var tabs, flat bytes.Buffer
	require.NoError(t, json.Indent(&tabs, raw, "", "\t"))
	require.NoError(t, json.Compact(&flat, raw))
	for _, data := range [][]byte{tabs.Bytes(), flat.Bytes()} {
		other, err := LoadBytes("seed.json", data)
		require.NoError(t, err)
		assert.Equal(t, s.Setup, other.Setup)
		assert.Equal(t, s.Expected, other.Expected)
	}
}

func TestThreeMistakesAllReported(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"testdata/three_mistakes.yaml", []string{
			`testdata/three_mistakes.yaml:4: colour: unknown field (want one of id, category, description, seed, setup, expected, tools, records, faults, steps, timeouts, limits, custom_parameters, call)`,
			`testdata/three_mistakes.yaml:6: expected.captured: want bool, got string "yes"`,
			`testdata/three_mistakes.yaml:22: steps[1].on.after: names no step: "asked"`,
		}},
		{"testdata/three_mistakes.json", []string{
			`testdata/three_mistakes.json:10: expected.backend_correct: want bool, got int 1`,
			`testdata/three_mistakes.json:20: steps[0].volume: unknown field (want one of id, do, on, text, slots, action, execute, invalidates, duration, sound, audio, digits, hold, match, status, fault, max, required)`,
			`testdata/three_mistakes.json:27: steps[1].on.after: names no step: "nowhere"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := LoadFile(tt.file)
			require.NotNil(t, s, "a file that parses still returns what it decoded")
			assert.Equal(t, tt.want, errStrings(t, err))
		})
	}
}

func TestErrorNamesFileLineAndField(t *testing.T) {
	data, err := os.ReadFile("packs/core/corr-02.yaml")
	require.NoError(t, err)
	bad := strings.Replace(string(data), "captured: true", `captured: "yes"`, 1)
	_, err = LoadBytes("core/corr-02.yaml", []byte(bad))
	assert.Equal(t, []string{`core/corr-02.yaml:10: expected.captured: want bool, got string "yes"`}, errStrings(t, err))
}

func TestLoaderStrictness(t *testing.T) {
	const head = "id: x\ncategory: tool_failure\nexpected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}\n"
	tests := []struct {
		name, file, body string
		want             []string
	}{
		{"missing expected axis", "a.yaml", "id: x\ncategory: tool_failure\nsetup: {fault: empty}\nexpected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true}\n",
			[]string{"a.yaml:4: expected.should_execute: required field missing"}},
		{"unquoted number in a string field", "a.yaml", head + "setup: {fault: empty}\nrecords: [{table: orders, key: 5590}]\n",
			[]string{"a.yaml:5: records[0].key: want string, got int 5590"}},
		{"bad duration", "a.yaml", head + "setup: {fault: empty}\ntimeouts: {step: 3 seconds}\n",
			[]string{`a.yaml:5: timeouts.step: bad duration "3 seconds" (want e.g. "300ms", "1.5s")`}},
		{"duplicate key", "a.yaml", head + "setup: {fault: empty}\nid: y\n",
			[]string{"a.yaml:5: id: duplicate key"}},
		{"two documents", "a.yaml", head + "---\nid: y\n",
			[]string{"a.yaml:4: more than one document (a file holds one scenario)"}},
		{"yaml syntax", "a.yaml", "id: [x\n", []string{"a.yaml:2: did not find expected ',' or ']'"}},
		{"json with a comment", "a.json", "{\n  \"id\": \"x\", # yaml comment\n}\n",
			[]string{"a.json:2: invalid JSON: invalid character '#' looking for beginning of object key string"}},
		{"unknown extension", "a.txt", head, []string{"a.txt: unknown file type (want .yaml, .yml or .json)"}},
		{"setup is free-form but checked per category", "a.yaml", head + "setup: {fault: empty, colour: blue}\n",
			[]string{"a.yaml:4: setup.colour: unknown setup key for category tool_failure (want one of fault, status, delay_ms, times, tool, record, field, order, date, quantity)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes(tt.file, []byte(tt.body))
			got := errStrings(t, err)
			if strings.HasPrefix(tt.name, "yaml syntax") {
				require.Len(t, got, 1)
				assert.True(t, strings.HasPrefix(got[0], "a.yaml:"), got[0])
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	const body = `id: many
category: combined
description: "Everything wrong at once."
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: maybe}
faults:
  - {kind: meltdown, match: {tool: delete_order}}
steps:
  - {id: ask, do: say, text: "Hi, please ship order 5590 today.", action: ship_order, slots: {order_number: "5590"}}
  - {id: ask, do: dance}
  - {id: hold, do: hold, hold: h1, match: {tool: cancel_order}}
  - {id: rel, do: release, hold: h2}
  - {id: stop, do: interrupt, text: "Wait.", digits: "12"}
  - {id: late, do: hangup, on: {after: later, event: agent_sneezes, delay: 1 minute}}
`
	_, err := LoadBytes("many.yaml", []byte(body))
	assert.Equal(t, []string{
		`many.yaml:4: expected.should_execute: want bool, got string "maybe"`,
		`many.yaml:6: faults[0].kind: unknown fault "meltdown" (want one of latency, timeout, status, status_after_commit, empty, wrong_record, late_success, duplicate, drop_response)`,
		`many.yaml:6: faults[0].match.tool: tool "delete_order" is not in the catalogue (get_order, update_order, ship_order, get_shipment)`,
		`many.yaml:9: steps[1].id: duplicate step id "ask" (also steps[0])`,
		`many.yaml:9: steps[1].do: unknown step kind "dance" (want one of say, correct, negate, interrupt, noise, silence, dtmf, hangup, hold, release, fail, fault, wait_quiet)`,
		`many.yaml:10: steps[2].match.tool: tool "cancel_order" is not in the catalogue (get_order, update_order, ship_order, get_shipment)`,
		`many.yaml:11: steps[3].hold: names no earlier hold: "h2"`,
		`many.yaml:12: steps[4].digits: not used by do: interrupt`,
		`many.yaml:12: steps[4].invalidates: required for do: interrupt (does it cancel the pending action?)`,
		`many.yaml:13: steps[5].on.delay: bad duration "1 minute" (want e.g. "300ms", "1.5s")`,
		`many.yaml:13: steps[5].on.after: names no step: "later"`,
		`many.yaml:13: steps[5].on.event: unknown event "agent_sneezes" (want a trace kind such as tool.held, or an alias such as tool_reaches_backend)`,
	}, errStrings(t, err))
}

func TestCompactSetupErrors(t *testing.T) {
	const exp = "expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}\n"
	tests := []struct {
		name, body string
		want       []string
	}{
		{"missing stage and corrected value", "id: c\ncategory: correction\nsetup:\n  field: order_number\n",
			[]string{"c.yaml:3: setup.interrupt_stage: required for category correction", "c.yaml:3: setup.corrected_value: required for category correction"}},
		{"bad enum and bad value", "id: c\ncategory: correction\nsetup:\n  field: order_number\n  interrupt_stage: whenever\n  corrected_value: 55\n",
			[]string{`c.yaml:5: setup.interrupt_stage: "whenever": want one of early, during_tool_prep, after_tool_sent, during_retry`, `c.yaml:6: setup.corrected_value: "55": an order number is 4 digits`}},
		{"bad date", "id: c\ncategory: correction\nsetup: {field: delivery_date, corrected_value: December 45, interrupt_stage: early}\n",
			[]string{`c.yaml:3: setup.corrected_value: bad date "December 45" (want "2026-12-03" or "December 3")`}},
		{"interrupt without invalidates", "id: c\ncategory: interruption\nsetup: {interrupt_stage: during_tool_prep}\n",
			[]string{"c.yaml:3: setup.invalidates: required (true or false) for this stage"}},
		{"non-invalidating with a new value", "id: c\ncategory: interruption\nsetup: {interrupt_stage: during_tool_prep, invalidates: false, corrected_value: December 7}\n",
			[]string{"c.yaml:3: setup.corrected_value: a non-invalidating interruption changes nothing"}},
		{"fault parameter the fault does not use", "id: c\ncategory: tool_failure\nsetup: {fault: timeout, status: 500}\n",
			[]string{"c.yaml:3: setup.status: not used by fault timeout"}},
		{"combined needs steps", "id: c\ncategory: combined\nsetup: {anything: goes}\n",
			[]string{"c.yaml:1: steps: required for category combined (it has no compact form)"}},
		{"no setup, no steps", "id: c\ncategory: correction\n",
			[]string{"c.yaml:1: setup: required: write a compact setup or explicit steps"}},
		{"bad category", "id: c\ncategory: chaos\nsetup: {}\n",
			[]string{`c.yaml:2: category: unknown category "chaos" (want one of correction, interruption, tool_failure, combined, dtmf)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("c.yaml", []byte(tt.body+exp))
			assert.Equal(t, tt.want, errStrings(t, err))
		})
	}
}

func TestPackLevelChecks(t *testing.T) {
	dir := t.TempDir()
	body := "id: same\ncategory: tool_failure\nsetup: {fault: empty}\nexpected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}\n"
	require.NoError(t, os.WriteFile(dir+"/a.yaml", []byte("description: one\n"+body), 0o644))
	require.NoError(t, os.WriteFile(dir+"/b.json", []byte(`{"id": "same", "category": "tool_failure", "setup": {"fault": "empty"},
 "expected": {"captured": true, "active_state_correct": true, "tool_args_correct": true, "stale_write_prevented": true, "backend_correct": true, "confirmation_matches_backend": true, "should_execute": true}}`), 0o644))
	pack, err := LoadDir(dir)
	require.Len(t, pack, 2)
	assert.Equal(t, []string{
		dir + "/b.json:1: description: required in a pack: one line naming the bug the scenario catches",
		dir + `/b.json:1: id: duplicate scenario id "same" (also in ` + dir + `/a.yaml)`,
	}, errStrings(t, err))
	assert.Len(t, ValidatePack(pack), 2)
}

func find(t *testing.T, pack []*Scenario, id string) *Scenario {
	t.Helper()
	for _, s := range pack {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no scenario %q", id)
	return nil
}
