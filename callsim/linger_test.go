package callsim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// lingerConn is a native WebSocket call whose connection asks the caller
// to stay on the line for linger at its script's end.
type lingerConn struct {
	callsim.Conn
	linger time.Duration
}

func (c *lingerConn) Linger() time.Duration { return c.linger }

// An agent that leaves a while after its last words (as a Pipecat bot
// over WebRTC does, after its end silence) hangs up the call when the
// connection asks the caller to linger; without it the caller, its quiet
// period over, hangs up first.
func TestLingerSeesTheAgentLeave(t *testing.T) {
	script := trace.Script{StepTimeout: 10 * time.Second, Quiet: 300 * time.Millisecond, Steps: []trace.Step{
		say("s1", "Ship order 5590.", 100*time.Millisecond, trace.Trigger{}),
		{ID: "s2", Do: trace.StepWaitQuiet},
		{ID: "s3", Do: trace.StepHangup},
	}}
	agent := func(a *fakeAgent) {
		a.untilFinal()
		a.speak("a1", native.PhaseStart, "")
		a.speak("a1", native.PhaseEnd, "Done. Goodbye.")
		time.Sleep(800 * time.Millisecond)
		a.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done"}})
		a.drain()
	}
	for _, tc := range []struct {
		linger time.Duration
		agent  bool // the agent's hang-up ends the call
	}{{0, false}, {3 * time.Second, true}} {
		start := time.Now()
		o := runCall(t, setup{script: script, agent: agent, call: func(c *callsim.Call) {
			c.Transport = wrapNative(func(c callsim.Conn) callsim.Conn { return &lingerConn{Conn: c, linger: tc.linger} })
		}})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		if tc.agent {
			assert.Equal(t, "agent hung up", o.res.Reason, "linger %s", tc.linger)
			mustFind(t, o.hist, trace.KindAgentHangup, nil)
			assert.Nil(t, find(o.hist, trace.KindCallerHangup, nil))
			assert.Less(t, time.Since(start), 3*time.Second, "the agent's leaving ends the linger")
		} else {
			assert.Equal(t, "caller hung up", o.res.Reason)
		}
	}
}
