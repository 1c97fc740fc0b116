package callsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
	"github.com/callproof/callproof/trace"
)

// pacedTransport is the native transport whose calls report a given frame
// lateness, as a real-time dialect's would.
type pacedTransport struct {
	nativews.Transport
	l callsim.Lateness
}

type pacedConn struct {
	callsim.Conn
	l callsim.Lateness
}

func (c pacedConn) Lateness() callsim.Lateness { return c.l }

func (p *pacedTransport) Dial(ctx context.Context, url string) (callsim.Conn, error) {
	c, err := p.Transport.Dial(ctx, url)
	if err != nil {
		return nil, err
	}
	return pacedConn{c, p.l}, nil
}

func pacedCall(t *testing.T, l callsim.Lateness) callsim.Result {
	t.Helper()
	o := runCall(t, setup{
		call: func(c *callsim.Call) { c.Transport = &pacedTransport{l: l} },
		script: trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
			say("s1", "Hello.", 100*time.Millisecond, trace.Trigger{}),
		}},
		agent: func(a *fakeAgent) {
			a.untilFinal()
			a.drain()
		},
	})
	require.NotNil(t, o.res.Lateness)
	return o.res
}

// A few frames 1-5 ms over their 20 ms slot leave the call its verdict; a
// frame past the jitter allowance makes it the harness's.
func TestLatenessRuleOnACall(t *testing.T) {
	frame := 20 * time.Millisecond
	res := pacedCall(t, callsim.Lateness{Frames: 500, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: frame + 1500*time.Microsecond, Frame: frame})
	assert.NotEqual(t, trace.OutcomeHarnessError, res.Outcome, res.Reason)
	res = pacedCall(t, callsim.Lateness{Frames: 500, P50: time.Millisecond, P99: 3 * time.Millisecond, Max: frame + 5*time.Millisecond, Frame: frame})
	assert.NotEqual(t, trace.OutcomeHarnessError, res.Outcome, res.Reason)

	res = pacedCall(t, callsim.Lateness{Frames: 500, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: callsim.JitterAllowance + time.Millisecond, Frame: frame})
	assert.Equal(t, trace.OutcomeHarnessError, res.Outcome)
	assert.True(t, strings.HasPrefix(res.Reason, callsim.ReasonBehind+": frames up to 61ms late"), res.Reason)
}

// A call the agent ended by breaking the protocol in a way no timing
// shapes stays agent_error however late the caller's frames were: the
// junk may be what made them late.
func TestLateFramesLeaveTheAgentsJunkItsOwn(t *testing.T) {
	frame := 20 * time.Millisecond
	late := callsim.Lateness{Frames: 500, P50: time.Millisecond, P99: 90 * time.Millisecond, Max: 91 * time.Millisecond, Frame: frame}
	o := runCall(t, setup{
		call:   func(c *callsim.Call) { c.Transport = &pacedTransport{l: late} },
		script: longScript(),
		agent: func(a *fakeAgent) {
			a.next()
			a.sendRaw(`{"event":"state","state":{"version":1e400}}`)
			a.drain()
		},
	})
	assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
	assert.Equal(t, callsim.ReasonGarbageFrame, o.res.Reason)
}
