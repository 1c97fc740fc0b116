package callprooftest

import (
	"context"
	"testing"
	"time"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/reports"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Defaults for Options.
const (
	DefaultScale       = 0.1
	DefaultConcurrency = 8
	DefaultTimeout     = 10 * time.Minute
)

// Options shape a run. The zero value runs every scenario of the suite
// once, at DefaultScale, over the native protocol.
type Options struct {
	// Only lists the scenario ids to place (default: the whole suite).
	Only []string
	// Trials places every scenario this many times (default 1).
	Trials int
	// Scale is the time scale offered to the agent (DefaultScale); an
	// agent that cannot scale its timers acks 1 and runs in real time.
	Scale float64
	// Concurrency is how many calls run at once (DefaultConcurrency).
	Concurrency int
	// Timeout bounds the whole run (DefaultTimeout).
	Timeout time.Duration
	// Transport and TransportName call the agent in another dialect
	// (harness.TwilioTransport, harness.WebRTCTransport); nil: native.
	Transport     callsim.Transport
	TransportName string
	// Passes decides whether a call's subtest passes; nil: end-to-end
	// integrity (all six axes pass).
	Passes func(s scorer.CallScore) bool
	// Clock is the harness's clock (default the system's); a test of this
	// package injects one.
	Clock trace.Clock
	// NoPreflight places the calls without first checking that the agent
	// answers (harness.Preflight); each unanswered call then fails alone.
	NoPreflight bool
}

// Run places suite (core, extended, or a scenario file or directory)
// against the agent at agentURL and reports each call as the subtest
// t.Run(call id). A run that cannot happen at all (a broken suite, no
// backend) fails t at once. It returns the scores in suite order.
func Run(t *testing.T, agentURL, suite string, o Options) []scorer.CallScore {
	t.Helper()
	_, cases, err := harness.LoadSuite(suite)
	if err != nil {
		t.Fatalf("callprooftest: %v", err)
	}
	if cases, err = harness.Select(cases, o.Only); err != nil {
		t.Fatalf("callprooftest: %v", err)
	}
	env, err := harness.NewEnv(harness.EnvOptions{})
	if err != nil {
		t.Fatalf("callprooftest: %v", err)
	}
	defer env.Close()
	if o.Transport != nil {
		env.Transport, env.TransportName = o.Transport, o.TransportName
	}
	// An agent that is not there fails the test once, before any call,
	// with the URL and the error, not as every call's agent error.
	if !o.NoPreflight {
		if err := harness.Preflight(context.Background(), env.Transport, env.TransportName, agentURL, callsim.DefaultDialTimeout); err != nil {
			t.Fatalf("callprooftest: preflight: %v: no call was placed", err)
		}
	}
	r := env.Runner()
	r.Suite, r.Agent = suite, agentURL
	if o.Clock != nil {
		r.Clock = o.Clock
	}
	r.TimeScale = or(o.Scale, DefaultScale)
	r.Concurrency = max(o.Concurrency, 0)
	if r.Concurrency == 0 {
		r.Concurrency = DefaultConcurrency
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(or(float64(o.Timeout), float64(DefaultTimeout))))
	defer cancel()
	ps := harness.Placements(cases, o.Trials)
	res, err := r.Place(ctx, agentURL, ps)
	if err != nil {
		t.Fatalf("callprooftest: %v", err)
	}
	// A call the harness could not keep on time (a busy CI machine: its
	// timers overloaded, or an audio caller behind real time) says nothing
	// about the agent: place those once more, one at a time.
	var again []harness.Placement
	var at []int
	for i, c := range res {
		if harness.RanLate(c.Score) {
			again, at = append(again, ps[i]), append(at, i)
		}
	}
	if len(again) > 0 {
		t.Logf("callprooftest: %d calls ran late (this machine was too busy to keep their timing); placing them again, one at a time", len(again))
		r.Concurrency = 1
		res2, err := r.Place(ctx, agentURL, again)
		if err != nil {
			t.Fatalf("callprooftest: %v", err)
		}
		for k, i := range at {
			res[i] = res2[k]
		}
	}
	passes := o.Passes
	if passes == nil {
		passes = func(s scorer.CallScore) bool { return s.Integrity }
	}
	scores := make([]scorer.CallScore, len(res))
	for i, c := range res {
		scores[i] = c.Score
		t.Run(c.Score.Call, func(t *testing.T) {
			if harness.RanLate(c.Score) {
				t.Errorf("the harness, not the agent: this machine was too busy to keep the call's timing, twice\n%s", Explain(c.History, c.Score))
				return
			}
			if !passes(c.Score) {
				t.Error(Explain(c.History, c.Score))
			}
		})
	}
	return scores
}

func or(v, d float64) float64 {
	if v <= 0 {
		return d
	}
	return v
}

// Explain says why a call fell short: its outcome, each axis that did not
// pass with its findings, the root-cause buckets, and every event they
// cite, as the history holds it (reports.Explain).
func Explain(h *trace.History, s scorer.CallScore) string { return reports.Explain(h, s) }
