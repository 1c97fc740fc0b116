package harness_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// BenchmarkCoreCareful places b.N live calls, drawn round-robin from core
// (unchanged), against careful in process at concurrency 64 and time scale
// 0.05. Every call must be scored with the oracle's verdicts (the expected
// blocks: all six pass, which TestIntegrationCarefulCore shows careful
// meets at scale 1.0). It reports calls/s and, beside it, the ideal bound
// the scripts allow: 64 / the mean call duration in real seconds, measured
// from each history's call.end At (call.start is At 0).
//
//	go test -run '^$' -bench CoreCareful -benchtime 300x ./harness/
func BenchmarkCoreCareful(b *testing.B) {
	const conc = 64
	cases, want := liveCore(b)
	env := liveEnv(b)
	url := liveAgent(b, agents.Careful())
	// The backend keys calls by id: each copy gets its own ("corr-01.7"),
	// with the scenario's compiled script, seed and faults unchanged.
	work := make([]*scenarios.Compiled, b.N)
	orig := make(map[string]string, b.N)
	for i := range work {
		c := *cases[i%len(cases)]
		sc := *c.Scenario
		sc.ID = fmt.Sprintf("%s.%d", sc.ID, i/len(cases))
		c.Scenario = &sc
		work[i] = &c
		orig[sc.ID] = cases[i%len(cases)].Scenario.ID
	}
	r := env.Runner()
	r.Concurrency, r.TimeScale, r.Suite, r.Agent = conc, liveFastScale, "core", "careful"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	b.ResetTimer()
	start := time.Now()
	out, err := r.Run(ctx, url, work)
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for i, c := range out {
		s := c.Score
		if s.Outcome != trace.OutcomeScored {
			b.Fatalf("call %d (%s): outcome %s: %s", i, s.Call, s.Outcome, s.Reason)
		}
		if got, exp := liveVector(s), liveExpectedVector(want[orig[s.Scenario]]); got != exp {
			b.Fatalf("call %d (%s): verdicts %q, oracle %q (primary %s)", i, s.Call, got, exp, s.Primary)
		}
		total += c.History.Events[len(c.History.Events)-1].At
	}
	mean := total.Seconds() / float64(len(out))
	b.ReportMetric(float64(len(out))/elapsed.Seconds(), "calls/s")
	b.ReportMetric(conc/mean, "ideal_calls/s")
	b.ReportMetric(mean*1000, "ms/call")
}
