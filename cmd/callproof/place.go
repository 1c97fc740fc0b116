package main

import (
	"context"
	"fmt"
	"io"

	"github.com/callproof/callproof/harness"
)

// placement is what replay and sweep place besides a run's own calls: a
// set of calls into a fresh results directory, with their own backend.
type placement struct {
	agent, out, suite string
	scale             float64
	conc              int
	audio             audioFlags
	meta              harness.Meta
}

// place starts a backend, places ps against the agent into p.out and
// returns the results in ps's order. A progress line goes to stderr.
func (p placement) place(ctx context.Context, ps []harness.Placement, stderr io.Writer) ([]harness.CallResult, error) {
	meta := p.meta
	meta.Agent, meta.Suite, meta.TimeScale, meta.Calls = p.agent, p.suite, p.scale, len(ps)
	p.audio.setMeta(&meta)
	meta.Planned = harness.CallIDs(ps)
	res, err := harness.CreateResults(p.out, meta)
	if err != nil {
		return nil, err
	}
	env, err := harness.NewEnv(harness.EnvOptions{})
	if err != nil {
		res.Close()
		return nil, err
	}
	defer env.Close()
	hear, err := p.audio.setUp(env, p.out)
	if err != nil {
		res.Close()
		return nil, err
	}
	r := env.Runner()
	r.Concurrency, r.TimeScale, r.Suite, r.Agent, r.Results = max(p.conc, 1), p.scale, p.suite, p.agent, res
	bar := newProgress(stderr)
	defer bar.recognition(hear)()
	r.Progress = bar.update
	r.Warm.Progress = speechProgress(stderr, "")
	out, err := r.Place(ctx, p.agent, ps)
	bar.done()
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing results: %w", err)
	}
	return out, nil
}
