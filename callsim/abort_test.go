package callsim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// Call.Abort ends a call early as agent_error with the reason sent: the
// harness's way to end a call on what only it sees (the backend's tool
// request budget). The agent is told in the stop frame.
func TestAbortEndsTheCallWithItsReason(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fire   func(chan string)
		reason string
	}{
		{"reason", func(c chan string) { c <- "tool_flood: more than 20 tool requests per second" }, "tool_flood: more than 20 tool requests per second"},
		{"closed", func(c chan string) { close(c) }, callsim.ReasonAborted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			abort := make(chan string, 1)
			start := time.Now()
			o := runCall(t, setup{
				script: longScript(),
				call:   func(c *callsim.Call) { c.Abort = abort },
				agent: func(a *fakeAgent) {
					a.untilFinal()
					a.speak("a1", "start", "")
					tt.fire(abort)
					a.drain()
				},
			})
			assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
			assert.Equal(t, tt.reason, o.res.Reason)
			assert.Less(t, time.Since(start), 2*time.Second, "ended at once, not after the script's 3 s of silence")
			last := o.got[len(o.got)-1]
			if assert.Equal(t, native.EventStop, last.Event) {
				assert.Equal(t, "agent_error: "+tt.reason, last.Stop.Reason)
			}
		})
	}
}

// An abort after the call has ended changes nothing, and an ending that
// came first wins over a later abort.
func TestAbortAfterTheEndIsIgnored(t *testing.T) {
	abort := make(chan string, 1)
	o := runCall(t, setup{
		script: trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
			say("s1", "Hi, please ship order 5590 today.", 300*time.Millisecond, trace.Trigger{}),
			{ID: "s2", Do: trace.StepHangup},
		}},
		call:  func(c *callsim.Call) { c.Abort = abort },
		agent: func(a *fakeAgent) { a.drain() },
	})
	abort <- "tool_flood: late"
	assert.Empty(t, o.res.Outcome, o.res.Reason)
	assert.Equal(t, "caller hung up", o.res.Reason)
}
