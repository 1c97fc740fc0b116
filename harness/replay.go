package harness

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// ReplayCase rebuilds what a recorded call was placed with from its own
// call.start: the script with its holds and triggers, the catalogue, the
// starting records, the faults and the seed, so a replay repeats the call
// even after the scenario file changed. Its limits and custom parameters
// are not in the history: they are taken from the suite's scenario of the
// same id when that scenario still places the same call, else the
// defaults are used and a warning says so.
func ReplayCase(h *trace.History, suite []*scenarios.Compiled) (*scenarios.Compiled, []string, error) {
	st := h.Start()
	if st == nil {
		return nil, nil, fmt.Errorf("call %s: the history has no call.start: nothing to replay", h.Call)
	}
	if len(st.Script.Steps) == 0 {
		return nil, nil, fmt.Errorf("call %s: the recorded call.start has no script", h.Call)
	}
	c := &scenarios.Compiled{
		Scenario: &scenarios.Scenario{ID: st.ScenarioID, Category: scenarios.Category(st.Category)},
		Script:   st.Script, Tools: st.Tools, Records: st.Records, Faults: st.Faults, Seed: st.Seed,
		CallDate: st.CallDate, TimeZone: st.TimeZone,
	}
	if c.CallDate == "" && c.TimeZone == "" {
		// Recorded before calls had a calendar: replay with the default.
		c.CallDate, c.TimeZone = scenarios.DefaultCallDate, scenarios.DefaultTimeZone
	}
	var warnings []string
	i := slices.IndexFunc(suite, func(s *scenarios.Compiled) bool { return s.Scenario.ID == st.ScenarioID })
	switch {
	case i < 0:
		warnings = append(warnings, fmt.Sprintf("scenario %s is not in the suite: replaying with the default limits and no custom parameters", st.ScenarioID))
	case !samePlacement(suite[i], c):
		warnings = append(warnings, fmt.Sprintf("the suite's scenario %s would not place call %s as recorded (edited since, or a sweep's variant): replaying the recorded script with the default limits and no custom parameters", st.ScenarioID, h.Call))
	default:
		c.Limits, c.CustomParameters = suite[i].Limits, suite[i].CustomParameters
		c.Scenario = suite[i].Scenario
	}
	return c, warnings, nil
}

// samePlacement: the suite's scenario would place the recorded call.
func samePlacement(s, rec *scenarios.Compiled) bool {
	return s.Seed == rec.Seed && reflect.DeepEqual(s.Script, rec.Script) && reflect.DeepEqual(s.Tools, rec.Tools) &&
		reflect.DeepEqual(s.Records, rec.Records) && reflect.DeepEqual(s.Faults, rec.Faults)
}

// ReplayID names attempt n of a replay of call.
func ReplayID(call string, n int) string { return fmt.Sprintf("%s.r%d", call, n) }

// Reproduction compares a replayed call's buckets with the recorded one's.
type Reproduction struct {
	Call      string          `json:"call"`
	Outcome   trace.Outcome   `json:"outcome"`
	Integrity bool            `json:"integrity"`
	Primary   scorer.Bucket   `json:"primary,omitempty"`
	Buckets   []scorer.Bucket `json:"buckets,omitempty"`
	// Same: the attempt found exactly the recorded call's buckets (for a
	// call recorded as passing: it passed again).
	Same bool `json:"same"`
	// PrimarySeen: the recorded primary bucket is among the attempt's.
	PrimarySeen bool `json:"primary_seen"`
	// Missing and Extra are the buckets only the recording, or only the
	// attempt, found.
	Missing []scorer.Bucket `json:"missing,omitempty"`
	Extra   []scorer.Bucket `json:"extra,omitempty"`
}

// Reproduced compares attempt with the recorded score orig.
func Reproduced(orig, attempt scorer.CallScore) Reproduction {
	want, got := BucketSet(orig), BucketSet(attempt)
	r := Reproduction{Call: attempt.Call, Outcome: attempt.Outcome, Integrity: attempt.Integrity, Primary: attempt.Primary, Buckets: got}
	for _, b := range want {
		if !slices.Contains(got, b) {
			r.Missing = append(r.Missing, b)
		}
	}
	for _, b := range got {
		if !slices.Contains(want, b) {
			r.Extra = append(r.Extra, b)
		}
	}
	r.PrimarySeen = orig.Primary != "" && slices.Contains(got, orig.Primary)
	r.Same = len(r.Missing) == 0 && len(r.Extra) == 0 && orig.Integrity == attempt.Integrity &&
		orig.Outcome == attempt.Outcome
	return r
}

// BucketSet is a score's primary and secondary buckets, primary first.
func BucketSet(s scorer.CallScore) []scorer.Bucket {
	var out []scorer.Bucket
	if s.Primary != "" {
		out = append(out, s.Primary)
	}
	for _, b := range s.Secondary {
		if !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}
