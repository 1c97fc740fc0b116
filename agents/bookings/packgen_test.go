package bookings_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callproof/callproof/agents/bookings"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/packgen"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// Scale and tries of the generated-pack proof: a quarter of real time
// (the desk's tool timeouts are real time, so a timeout must still look
// like one), and a call our side spoiled on a loaded machine is placed
// again.
const (
	packScale = 0.25
	packTries = 3
)

// flawTargets names, per one-flaw variant, the generated scenarios of
// reschedule_booking that target its flaw (by id suffix). keyless and
// phantom have none here: a repeated reschedule leaves the same values,
// and only book_table (whose party size the desk hears only as "for
// four" or "four people") would show a phantom booking.
var flawTargets = map[string][]string{
	"stale":    {"corr-value-early", "corr-value-prep", "corr-value-flight", "int-replace-in-flight"},
	"sticky":   {"int-stop-in-flight", "corr-key-flight", "corr-value-flight"},
	"trusting": {"tf-wrong-record"},
	"eager":    {"tf-status", "tf-timeout", "tf-status-503-twice"},
	"jumpy":    {"int-noise-cough", "int-noise-tv", "int-noise-door"},
	"quitter":  {"tf-status", "tf-status-503-twice"},
}

// TestGeneratedPackCatchesEachFlaw generates a pack from the bookings
// catalogue (issue 23's proof): the correct desk passes every scenario
// that targets a flaw, and each one-flaw variant fails every scenario
// that targets its own.
func TestGeneratedPackCatchesEachFlaw(t *testing.T) {
	cal, err := scenarios.LoadFile("../../testdata/calibration/scenarios/cal-03-correct-party-held-write.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := packgen.Generate(cal.Tools, packgen.Options{Rand: rand.New(rand.NewPCG(23, 23)),
		Forms: packgen.Written, Tools: []string{"reschedule_booking"}})
	if err != nil {
		t.Fatal(err)
	}
	bySuffix := map[string]*scenarios.Compiled{}
	for _, f := range files[:len(files)-1] {
		s, err := scenarios.LoadBytes(f.Name, f.Data)
		if err != nil {
			t.Fatal(err)
		}
		c, err := scenarios.Compile(s)
		if err != nil {
			t.Fatal(err)
		}
		bySuffix[strings.TrimPrefix(s.ID, "reschedule_booking-")] = c
	}
	desk, err := bookings.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = desk.Close() })
	env, err := harness.NewEnv(harness.EnvOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// play places the calls, again those our side spoiled.
	play := func(variant string, cases []*scenarios.Compiled) []harness.CallResult {
		out := make([]harness.CallResult, len(cases))
		todo := make([]int, len(cases))
		for i := range todo {
			todo[i] = i
		}
		for try := 0; try < packTries && len(todo) > 0; try++ {
			var batch []*scenarios.Compiled
			for _, i := range todo {
				batch = append(batch, cases[i])
			}
			r := env.Runner()
			r.Concurrency, r.TimeScale, r.Agent = 4, packScale, "bookings/"+variant
			res, err := r.Run(ctx, desk.URL(variant), batch)
			if err != nil {
				t.Error(err)
				return out
			}
			var again []int
			for j, i := range todo {
				out[i] = res[j]
				end := res[j].History.End()
				if end == nil || end.Outcome == trace.OutcomeExcluded || end.Outcome == trace.OutcomeHarnessError || end.TimeScale != packScale {
					again = append(again, i)
				}
			}
			todo = again
		}
		return out
	}

	var targeted []*scenarios.Compiled
	seen := map[string]bool{}
	for _, v := range bookings.Variants() {
		for _, sfx := range flawTargets[v.Name] {
			c, ok := bySuffix[sfx]
			if !ok {
				t.Fatalf("%s: the pack has no scenario %s", v.Name, sfx)
			}
			if !seen[sfx] {
				seen[sfx] = true
				targeted = append(targeted, c)
			}
		}
	}
	// The variants' calls go at once, each variant's batch on its own
	// runner: the machine, not the test, sets the pace.
	groups := map[string][]*scenarios.Compiled{"steady": targeted}
	for _, v := range bookings.Variants() {
		for _, sfx := range flawTargets[v.Name] {
			// Call ids are unique across the batches: scenario--variant.
			sc := *bySuffix[sfx].Scenario
			sc.ID += "--" + v.Name
			cc := *bySuffix[sfx]
			cc.Scenario = &sc
			groups[v.Name] = append(groups[v.Name], &cc)
		}
	}
	results := map[string][]harness.CallResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, cases := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := play(name, cases)
			mu.Lock()
			results[name] = res
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, res := range results["steady"] {
		if !res.Score.Integrity {
			t.Errorf("steady fails %s: %s (%s %s)", res.Score.Scenario, res.Score.Primary, res.Score.Outcome, res.Score.Reason)
		}
	}
	for _, v := range bookings.Variants() {
		for _, res := range results[v.Name] {
			if v.Name == "steady" {
				continue
			}
			if res.Score.Outcome != trace.OutcomeScored || res.Score.Integrity {
				t.Errorf("%s passes %s (outcome %s %s): the scenario does not catch its flaw", v.Name, res.Score.Scenario, res.Score.Outcome, res.Score.Reason)
			}
		}
	}
}
