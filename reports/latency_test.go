package reports

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

func TestLatencyInScriptTime(t *testing.T) {
	call := func(o trace.Outcome, resp, yield time.Duration, scale float64) scorer.CallScore {
		return scorer.CallScore{Outcome: o, Diag: scorer.Diagnostics{ResponseLatency: resp, YieldLatency: yield, TimeScale: scale}}
	}
	l := Summarize([]scorer.CallScore{
		call(trace.OutcomeScored, 30*time.Millisecond, 0, 0.1),                     // 300ms of script time
		call(trace.OutcomeScored, 100*time.Millisecond, 0, 0.5),                    // 200ms
		call(trace.OutcomeAgentError, 400*time.Millisecond, 2*time.Millisecond, 0), // scale unknown: 1.0
		call(trace.OutcomeHarnessError, time.Hour, time.Hour, 1),                   // not counted
	}).Latency
	assert.Equal(t, 300*time.Millisecond, l.ResponseP50)
	assert.Equal(t, 400*time.Millisecond, l.ResponseP95)
	assert.Equal(t, 2*time.Millisecond, l.YieldP50)
	assert.Equal(t, 1, l.Yields)
	assert.Zero(t, Summarize(nil).Latency.ResponseP50)
}
