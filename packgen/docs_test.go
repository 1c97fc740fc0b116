package packgen

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// The figures docs/CLI.md and docs/SCENARIOS.md give for generated packs
// are the code's.
func TestDocumentedFigures(t *testing.T) {
	cli, err := os.ReadFile("../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := os.ReadFile("../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	// Scenarios per tool of a full pack: the fewest (a tool with a key
	// and no value, or a create with one value) and the most.
	catalog := restaurant(t)
	files, err := Generate(catalog, Options{Rand: seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, f := range files[:len(files)-1] {
		per[f.tool]++
	}
	lo, hi := 1000, 0
	for _, n := range per {
		lo, hi = min(lo, n), max(hi, n)
	}
	for _, want := range []struct {
		doc  []byte
		text string
	}{
		{cli, fmt.Sprintf("`small` (%d per tool, `packgen.SizeSmall`", SizeSmall)},
		{cli, fmt.Sprintf("every scenario, %d to %d per tool", lo, hi)},
		{sc, fmt.Sprintf("`small` keeps %d", SizeSmall)},
		{sc, fmt.Sprintf("(bounded at %s", quietBound)},
		{sc, fmt.Sprintf("fallback %dms", prepFallback.Milliseconds())},
		{sc, fmt.Sprintf("released at the agent's first `agent.state` after the correction, or %s after it if none comes", releaseWait)},
		{sc, "(202, lands 800ms later, and not before the agent's first act after the 202"},
	} {
		if !strings.Contains(string(want.doc), want.text) {
			t.Errorf("docs do not say %q", want.text)
		}
	}
}

// A generated flight stage is the compact cases' after_tool_sent: the
// hold, the challenge on tool.held and the release at the agent's first
// state report after the challenge (docs/PROTOCOL.md, "withdraw before
// you report"), with the same figures.
func TestFlightStageIsCompacts(t *testing.T) {
	y := "id: doc\ncategory: correction\nsetup: {field: order_number, initial_value: \"5590\", corrected_value: \"5599\", interrupt_stage: after_tool_sent}\n" +
		"expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true, backend_correct: true, confirmation_matches_backend: true, should_execute: true}\n"
	s, err := scenarios.LoadBytes("doc.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	compact, err := scenarios.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(restaurant(t), Options{Rand: seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	flights := 0
	for _, f := range files[:len(files)-1] {
		if !strings.Contains(f.Name, "-flight") {
			continue
		}
		flights++
		c, err := scenarios.Compile(f.parsed)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"hold", "release"} {
			want, got := stepByID(t, compact.Script.Steps, id), stepByID(t, c.Script.Steps, id)
			want.Match, got.Match, want.On.After, got.On.After = nil, nil, "", ""
			if fmt.Sprint(want) != fmt.Sprint(got) {
				t.Errorf("%s: step %s is %+v, the compact cases' %+v", f.Name, id, got, want)
			}
		}
		rel := stepByID(t, c.Script.Steps, "release")
		if rel.On.Event != trace.KindAgentState || rel.On.Timeout != releaseWait {
			t.Errorf("%s: release on %+v, want the agent's first state report or %s", f.Name, rel.On, releaseWait)
		}
		// The release waits from the challenge: the step just before it.
		prev := c.Script.Steps[slices.IndexFunc(c.Script.Steps, func(s trace.Step) bool { return s.ID == "release" })-1]
		if rel.On.After != prev.ID || !prev.Required {
			t.Errorf("%s: release after %q, the challenge is %q", f.Name, rel.On.After, prev.ID)
		}
	}
	if flights == 0 {
		t.Fatal("the pack has no flight stage")
	}
}

func stepByID(t *testing.T, steps []trace.Step, id string) trace.Step {
	t.Helper()
	for _, s := range steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no step %q", id)
	return trace.Step{}
}
