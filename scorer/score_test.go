package scorer

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/callproof/callproof/trace"
)

func fixtureNamed(t testing.TB, name string) fixture {
	for _, f := range fixtures {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no fixture %s", name)
	return fixture{}
}

// relabel returns a copy of h whose call.start carries other labels.
func relabel(h *trace.History, scenario, category string) *trace.History {
	c := h.Clone()
	s := *c.Events[0].Data.(*trace.CallStart)
	s.ScenarioID, s.Category = scenario, category
	c.Events[0].Data = &s
	return c
}

func TestLabelsAreNotInputs(t *testing.T) {
	for _, f := range fixtures {
		h := load(t, f)
		want := Score(h)
		for _, cat := range []string{"", "noise", "tool_failure", "correction", "made-up"} {
			got := Score(relabel(h, "other-id", cat))
			if got.Scenario != "other-id" || got.Category != cat {
				t.Errorf("%s: labels not copied", f.name)
			}
			got.Scenario, got.Category = want.Scenario, want.Category
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: category %q changed the score", f.name, cat)
			}
		}
	}
}

// without returns a copy of h minus the events of kind k for ref.
func without(h *trace.History, k trace.Kind, ref string) *trace.History {
	c := &trace.History{Call: h.Call}
	for _, e := range h.Events {
		if te, ok := e.Data.(*trace.ToolEvent); ok && e.Kind == k && te.Ref == ref {
			continue
		}
		c.Events = append(c.Events, e)
	}
	return c
}

func TestDeletingCancelFlipsVerdict(t *testing.T) {
	h := load(t, fixtureNamed(t, "interrupt_stop_cancelled"))
	if !Score(h).Integrity {
		t.Fatal("fixture should pass")
	}
	cut := without(h, trace.KindToolCancelled, "r1")
	if len(cut.Events) != len(h.Events)-1 {
		t.Fatal("no tool.cancelled removed")
	}
	cs := Score(cut)
	if cs.Integrity || cs.Axis(StaleWritePrevented).Verdict != Fail || cs.Primary == "" {
		t.Errorf("an invalidated call left open must fail stale_write_prevented:\n%s", dump(cs))
	}
	checkCitations(t, cut, cs)
}

func TestPureAndDeterministic(t *testing.T) {
	for _, f := range fixtures {
		h := load(t, f)
		before := encode(t, h)
		a, b := Score(h), Score(h.Clone())
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s: two scores differ", f.name)
		}
		if !bytes.Equal(before, encode(t, h)) {
			t.Errorf("%s: Score modified the history", f.name)
		}
	}
}

func TestMalformedHistories(t *testing.T) {
	h := load(t, fixtureNamed(t, "plain_quantity"))
	noEnd := &trace.History{Call: h.Call, Events: h.Events[:len(h.Events)-1]}
	for name, x := range map[string]*trace.History{
		"empty":    {Call: "x"},
		"no start": {Call: h.Call, Events: h.Events[1:]},
		"no end":   noEnd,
	} {
		cs := Score(x)
		if cs.Outcome != trace.OutcomeHarnessError || cs.Integrity || vector(cs) != "uuuuuu" || cs.Primary != "" {
			t.Errorf("%s: got %s %s integrity=%v primary=%q", name, cs.Outcome, vector(cs), cs.Integrity, cs.Primary)
		}
	}
}

func TestScoreAll(t *testing.T) {
	var hs []*trace.History
	for _, f := range fixtures {
		hs = append(hs, load(t, f))
	}
	got := ScoreAll(hs)
	if len(got) != len(hs) {
		t.Fatalf("%d scores for %d histories", len(got), len(hs))
	}
	for i, h := range hs {
		if !reflect.DeepEqual(got[i], Score(h)) {
			t.Errorf("%s: ScoreAll differs from Score", fixtures[i].name)
		}
	}
}

// TestAgentErrorNeverIntegrity: the same passing events under an
// agent_error outcome keep their axes but never count as integrity.
func TestAgentErrorNeverIntegrity(t *testing.T) {
	h := load(t, fixtureNamed(t, "plain_quantity")).Clone()
	last := &h.Events[len(h.Events)-1]
	last.Data = &trace.CallEnd{Outcome: trace.OutcomeAgentError, Reason: "protocol violation"}
	cs := Score(h)
	if cs.Outcome != trace.OutcomeAgentError || cs.Integrity || vector(cs) != "pppppp" || cs.Reason != "protocol violation" {
		t.Errorf("got %s %s integrity=%v", cs.Outcome, vector(cs), cs.Integrity)
	}
}

func TestDiagnosticsCopied(t *testing.T) {
	cs := Score(load(t, fixtureNamed(t, "plain_quantity")))
	if cs.Diag.ResponseLatency == 0 || cs.Diag.YieldLatency == 0 {
		t.Errorf("diagnostics not copied: %+v", cs.Diag)
	}
	if len(Score(load(t, fixtureNamed(t, "seed1_stale_order_number"))).Diff) == 0 {
		t.Error("a failing backend must report its diff")
	}
}

// TestYieldBoundScales: the agent yields in 200ms, inside 1.5s at scale 1
// but outside 150ms at scale 0.1 (the scale recorded in call.end wins).
func TestYieldBoundScales(t *testing.T) {
	h := load(t, fixtureNamed(t, "interrupt_new_value")).Clone()
	last := &h.Events[len(h.Events)-1]
	end := *last.Data.(*trace.CallEnd)
	end.TimeScale = 0.1
	last.Data = &end
	cs := Score(h)
	if got := cs.Axis(Captured).Verdict; got != Fail {
		t.Errorf("captured %s at time scale 0.1, want fail", got)
	}
}
