package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// The run's harness lateness: each call's worst over the calls that
// measured it, overloaded calls counted (they are harness errors, not
// scored), and the machine's CPU pressure; the table says so.
func TestHarnessLateness(t *testing.T) {
	withLate := func(s scorer.CallScore, worst time.Duration, pressure float64) scorer.CallScore {
		s.Diag.Lateness = &trace.HarnessLateness{Worst: worst, CPUPressure: &pressure}
		return s
	}
	var all [6]scorer.Verdict
	over := mkScore("c-over", trace.OutcomeHarnessError, [6]scorer.Verdict{U, U, U, U, U, U}, "")
	over.Reason = OverloadedPrefix + ": the harness ran 3s late"
	scores := []scorer.CallScore{
		withLate(mkScore("c-1", trace.OutcomeScored, all, ""), 10*time.Millisecond, 0.70),
		withLate(mkScore("c-2", trace.OutcomeScored, all, ""), 30*time.Millisecond, 0.65),
		withLate(over, 3*time.Second, 0.90),
		mkScore("c-old", trace.OutcomeScored, all, ""), // an older history: nothing measured
	}
	s := Summarize(scores)
	h := s.Harness
	if h == nil {
		t.Fatal("no harness lateness")
	}
	if h.Calls != 3 || h.Overloaded != 1 || h.Max != 3*time.Second || h.WorstCall != "c-over" || h.P50 != 30*time.Millisecond {
		t.Errorf("summary %+v", *h)
	}
	if h.PressureCalls != 3 || h.PressureP50 != 0.70 || h.PressureMax != 0.90 || !h.Busy() {
		t.Errorf("pressure %+v busy %v", *h, h.Busy())
	}
	var b strings.Builder
	if err := WriteTable(&b, Title{Suite: "core"}, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"harness lateness (script time, each call's worst)  p50 30ms p99 3s max 3s (c-over)  machine CPU pressure p50 70% max 90%",
		"overloaded: 1 calls not scored",
		"busy machine: for half the calls some task waited for a CPU 70% of the time or more",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}

	// Older histories measured nothing: no line, no warning.
	if s := Summarize(scores[3:]); s.Harness != nil {
		t.Errorf("harness lateness from no measurement: %+v", *s.Harness)
	}
	if BusyPressure != 0.6 {
		t.Errorf("BusyPressure %v: docs/CLI.md and docs/PERFORMANCE.md say 60%%", BusyPressure)
	}
	// A quiet machine is not busy.
	if h := Summarize(scores[:1]).Harness; h.Busy() != true {
		t.Errorf("70%% is over BusyPressure (%v)", BusyPressure)
	}
	if h := Summarize([]scorer.CallScore{withLate(mkScore("q", trace.OutcomeScored, all, ""), time.Millisecond, 0.2)}).Harness; h.Busy() {
		t.Error("20% pressure called busy")
	}
}
