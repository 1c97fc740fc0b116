package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// MaxSweepPoints bounds the values one sweep places (each a call per
// trial): a finer map than this is a range to narrow, not to widen.
const MaxSweepPoints = 200

// Sweep fields: the step timings a sweep can vary, in script time.
const (
	SweepDelay    = "delay"    // the step's on.delay: its offset from its trigger event
	SweepDuration = "duration" // its duration (a hold's max)
	SweepFallback = "fallback" // its on.fallback
	SweepTimeout  = "timeout"  // its on.timeout
)

// SweepParam is one timing of a scenario's script swept over a range:
// STEP.FIELD=FROM..TO/BY, e.g. correct.delay=0ms..1200ms/100ms (plain
// numbers are milliseconds).
type SweepParam struct {
	Step, Field  string
	From, To, By time.Duration
}

// String is the parameter as written on the command line.
func (p SweepParam) String() string {
	return fmt.Sprintf("%s.%s=%s..%s/%s", p.Step, p.Field, p.From, p.To, p.By)
}

// ParseSweepParam reads STEP.FIELD=FROM..TO/BY.
func ParseSweepParam(s string) (SweepParam, error) {
	var p SweepParam
	bad := func(why string) (SweepParam, error) {
		return p, fmt.Errorf("--param %q: %s (want STEP.FIELD=FROM..TO/BY, e.g. correct.delay=0ms..1200ms/100ms)", s, why)
	}
	name, rng, ok := strings.Cut(s, "=")
	if !ok {
		return bad("no '='")
	}
	i := strings.LastIndex(name, ".")
	if i <= 0 || i == len(name)-1 {
		return bad("the name is not STEP.FIELD")
	}
	p.Step, p.Field = name[:i], name[i+1:]
	if !slices.Contains([]string{SweepDelay, SweepDuration, SweepFallback, SweepTimeout}, p.Field) {
		return bad(fmt.Sprintf("field %q is not one of %s, %s, %s, %s", p.Field, SweepDelay, SweepDuration, SweepFallback, SweepTimeout))
	}
	span, by, ok := strings.Cut(rng, "/")
	if !ok {
		return bad("no '/BY' step")
	}
	from, to, ok := strings.Cut(span, "..")
	if !ok {
		return bad("no 'FROM..TO' range")
	}
	var err error
	for _, f := range []struct {
		dst *time.Duration
		v   string
	}{{&p.From, from}, {&p.To, to}, {&p.By, by}} {
		if *f.dst, err = sweepDuration(f.v); err != nil {
			return bad(err.Error())
		}
	}
	switch {
	case p.From < 0 || p.To < 0:
		return bad("a timing cannot be negative")
	case p.To < p.From:
		return bad("TO is before FROM")
	case p.By <= 0:
		return bad("BY must be positive")
	case p.To > scenarios.MaxStepDuration:
		return bad(fmt.Sprintf("TO is beyond the %s a step may take", scenarios.MaxStepDuration))
	case int64((p.To-p.From)/p.By)+1 > MaxSweepPoints:
		return bad(fmt.Sprintf("%d values: at most %d", int64((p.To-p.From)/p.By)+1, MaxSweepPoints))
	}
	return p, nil
}

func sweepDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return d, nil
}

// Values lists FROM, FROM+BY, … up to TO inclusive.
func (p SweepParam) Values() []time.Duration {
	var out []time.Duration
	for v := p.From; v <= p.To; v += p.By {
		out = append(out, v)
	}
	return out
}

// Apply returns a copy of c whose step p.Step has p.Field set to v; c is
// not changed. An unknown step is an error naming the script's steps.
func (p SweepParam) Apply(c *scenarios.Compiled, v time.Duration) (*scenarios.Compiled, error) {
	i := slices.IndexFunc(c.Script.Steps, func(s trace.Step) bool { return s.ID == p.Step })
	if i < 0 {
		ids := make([]string, len(c.Script.Steps))
		for k, s := range c.Script.Steps {
			ids[k] = s.ID
		}
		return nil, fmt.Errorf("scenario %s has no step %q (its steps: %s)", c.Scenario.ID, p.Step, strings.Join(ids, ", "))
	}
	cp := *c
	cp.Script.Steps = slices.Clone(c.Script.Steps)
	st := &cp.Script.Steps[i]
	switch p.Field {
	case SweepDelay:
		st.On.Delay = v
	case SweepDuration:
		st.Duration = v
	case SweepFallback:
		if st.On.Event != trace.KindAgentToolIntent {
			return nil, fmt.Errorf("scenario %s: step %q waits for %q: fallback is only for agent.tool_intent", c.Scenario.ID, p.Step, st.On.Event)
		}
		st.On.Fallback = v
	case SweepTimeout:
		st.On.Timeout = v
	}
	return &cp, nil
}

// SweepPoint is one value of a sweep and its calls.
type SweepPoint struct {
	Value time.Duration         `json:"value"`
	Calls []string              `json:"calls"`
	Pass  int                   `json:"integrity"` // calls with end-to-end integrity
	Total int                   `json:"total"`     // scored calls (harness errors and exclusions apart)
	Other map[string]int        `json:"other,omitempty"`
	Hits  map[scorer.Bucket]int `json:"buckets,omitempty"` // calls in which each bucket was found
}

// SweepPlacements places c at every value of p, trials times each, under
// ids SCENARIO.FIELD<value>[.tN].
func SweepPlacements(c *scenarios.Compiled, p SweepParam, trials int) ([]Placement, []time.Duration, error) {
	var ps []Placement
	var at []time.Duration
	for _, v := range p.Values() {
		cv, err := p.Apply(c, v)
		if err != nil {
			return nil, nil, err
		}
		id := fmt.Sprintf("%s.%s%s", c.Scenario.ID, p.Field, v)
		for _, q := range Placements([]*scenarios.Compiled{cv}, trials) {
			q.ID = CallID(id, q.Trial)
			ps = append(ps, q)
			at = append(at, v)
		}
	}
	return ps, at, nil
}

// SweepMap folds a sweep's scores (in placement order, at[i] the value of
// call i) into one point per value.
func SweepMap(at []time.Duration, scores []scorer.CallScore) []SweepPoint {
	var out []SweepPoint
	for i, s := range scores {
		if len(out) == 0 || out[len(out)-1].Value != at[i] {
			out = append(out, SweepPoint{Value: at[i], Hits: map[scorer.Bucket]int{}})
		}
		pt := &out[len(out)-1]
		pt.Calls = append(pt.Calls, s.Call)
		if s.Outcome != trace.OutcomeScored {
			if pt.Other == nil {
				pt.Other = map[string]int{}
			}
			pt.Other[string(s.Outcome)]++
			continue
		}
		pt.Total++
		if s.Integrity {
			pt.Pass++
		}
		for _, b := range BucketSet(s) {
			pt.Hits[b]++
		}
	}
	return out
}

// Windows lists the ranges of consecutive values at which bucket b was
// found in at least one call: the race window(s) of that failure.
func Windows(points []SweepPoint, b scorer.Bucket) [][2]time.Duration {
	var out [][2]time.Duration
	open := false
	for _, pt := range points {
		if pt.Hits[b] > 0 {
			if !open {
				out = append(out, [2]time.Duration{pt.Value, pt.Value})
				open = true
			}
			out[len(out)-1][1] = pt.Value
		} else {
			open = false
		}
	}
	return out
}
