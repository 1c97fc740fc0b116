package callsim_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/nativews"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// longScript gives a misbehaving agent time to misbehave.
func longScript() trace.Script {
	return trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
		say("s1", "Hi, please ship order 5590 today.", 300*time.Millisecond, trace.Trigger{}),
		{ID: "s2", Do: trace.StepSilence, Duration: 3 * time.Second},
		{ID: "s3", Do: trace.StepHangup},
	}}
}

type misbehaviour struct {
	name    string
	opts    callsim.Options
	script  trace.Script
	agent   func(a *fakeAgent)
	outcome trace.Outcome
	reason  string // prefix
}

func misbehaviours() []misbehaviour {
	return []misbehaviour{
		{
			name:   "crash mid-call",
			script: longScript(),
			agent: func(a *fakeAgent) {
				a.next()
				a.untilFinal()
				_ = a.ws.NetConn().Close() // no close frame: a crash
			},
			outcome: trace.OutcomeAgentError, reason: "agent closed the connection",
		},
		{
			name: "never answers",
			script: trace.Script{StepTimeout: 400 * time.Millisecond, Steps: []trace.Step{
				say("s1", "Hello?", 100*time.Millisecond, trace.Trigger{}),
				say("s2", "Anyone there?", 100*time.Millisecond, trace.Trigger{Event: trace.KindAgentSpeechStart}),
			}},
			agent:   func(a *fakeAgent) { a.drain() },
			outcome: trace.OutcomeAgentError, reason: "no response",
		},
		{
			name:   "flood",
			script: longScript(),
			agent: func(a *fakeAgent) {
				a.next()
				for range 5000 {
					a.send(native.Message{Event: native.EventState, State: &native.State{Version: 1}})
				}
				a.drain()
			},
			outcome: trace.OutcomeAgentError, reason: "flood",
		},
		{
			name:   "too many messages in a call",
			opts:   callsim.Options{Limits: callsim.Limits{MaxMessagesPerCall: 50, MaxMessagesPerSecond: 1_000_000}},
			script: longScript(),
			agent: func(a *fakeAgent) {
				a.next()
				for range 60 {
					a.sendRaw(`{"event":"telemetry"}`)
				}
				a.drain()
			},
			outcome: trace.OutcomeAgentError, reason: "flood",
		},
		{
			name:   "oversized frame",
			opts:   callsim.Options{Limits: callsim.Limits{MaxFrameBytes: 1024}},
			script: longScript(),
			agent: func(a *fakeAgent) {
				a.next()
				a.sendRaw(`{"event":"mystery","pad":"` + strings.Repeat("x", 4096) + `"}`)
				a.drain()
			},
			outcome: trace.OutcomeAgentError, reason: "oversized frame",
		},
		{
			name:   "invalid JSON",
			script: longScript(),
			agent: func(a *fakeAgent) {
				a.next()
				a.sendRaw(`{"event":"ack",`)
				a.drain()
			},
			outcome: trace.OutcomeAgentError, reason: "garbage frame",
		},
		{
			name: "call timeout",
			script: trace.Script{CallTimeout: 300 * time.Millisecond, Steps: []trace.Step{
				{ID: "s1", Do: trace.StepSilence, Duration: 10 * time.Second},
			}},
			agent:   func(a *fakeAgent) { a.drain() },
			outcome: trace.OutcomeAgentError, reason: "call timeout",
		},
		{
			name:   "agent hangs up",
			script: longScript(),
			agent: func(a *fakeAgent) {
				a.untilFinal()
				a.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done"}})
				a.drain()
			},
			outcome: "", reason: "agent hung up",
		},
		{
			name:   "agent transfers",
			script: longScript(),
			agent: func(a *fakeAgent) {
				a.untilFinal()
				a.send(native.Message{Event: native.EventTransfer, Transfer: &native.Transfer{To: "human"}})
				a.drain()
			},
			outcome: "", reason: "agent transferred",
		},
	}
}

func TestMisbehavingAgents(t *testing.T) {
	for _, mb := range misbehaviours() {
		t.Run(mb.name, func(t *testing.T) {
			start := time.Now()
			o := runCall(t, setup{opts: mb.opts, script: mb.script, agent: mb.agent})
			assert.Equal(t, mb.outcome, o.res.Outcome, o.res.Reason)
			assert.True(t, strings.HasPrefix(o.res.Reason, mb.reason), "reason %q, want prefix %q", o.res.Reason, mb.reason)
			// Bounded calls end well before the script would have.
			assert.Less(t, time.Since(start), 3*time.Second)
		})
	}
}

func TestAgentHangupAndStop(t *testing.T) {
	o := runCall(t, setup{script: longScript(), agent: func(a *fakeAgent) {
		a.untilFinal()
		a.send(native.Message{Event: native.EventHangup, Hangup: &native.Hangup{Reason: "done"}})
		a.drain()
	}})
	require.Equal(t, trace.Outcome(""), o.res.Outcome)
	h := mustFind(t, o.hist, trace.KindAgentHangup, nil)
	assert.Equal(t, "done", h.Data.(*trace.Note).Text)
	assert.Nil(t, find(o.hist, trace.KindCallerHangup, nil), "the script stops at the agent's hangup")
	require.NotEmpty(t, o.got)
	assert.Equal(t, native.EventStop, o.got[len(o.got)-1].Event)
}

func TestUnknownMessagesAreRecordedAndIgnored(t *testing.T) {
	o := runCall(t, setup{
		script: trace.Script{Steps: []trace.Step{say("s1", "Hi.", 100*time.Millisecond, trace.Trigger{})}},
		agent: func(a *fakeAgent) {
			a.next()
			a.sendRaw(`{"event":"metrics","metrics":{"cpu":3}}`)
			a.sendRaw(`{"event":"agent_speech"}`) // known event, no payload
			a.sendRaw(`{"event":"agent_speech","agentSpeech":{"id":"a","phase":"sing"}}`)
			a.sendRaw(`{"event":"speech","speech":{"id":"x","phase":"onset"}}`) // a caller event
			a.drain()
		},
	})
	require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
	unk := kindsOf(o.hist, trace.KindAgentUnknown)
	require.Len(t, unk, 4)
	assert.Equal(t, `{"event":"metrics","metrics":{"cpu":3}}`, unk[0].Data.(*trace.Note).Text)
	for _, e := range unk {
		assert.Equal(t, trace.SourceAgent, e.Source)
	}
}

func TestDialFailure(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	rec := trace.NewRecorder("c1", nil)
	res := callsim.New(callsim.Options{}).Run(context.Background(), callsim.Call{
		ID: "c1", AgentURL: "ws://" + addr + "/agent", Script: longScript(),
		Recorder: rec, Transport: &nativews.Transport{},
	})
	assert.Equal(t, trace.OutcomeAgentError, res.Outcome)
	assert.True(t, strings.HasPrefix(res.Reason, "dial: "), res.Reason)
}

func TestMissingTransportIsHarnessError(t *testing.T) {
	res := callsim.New(callsim.Options{}).Run(context.Background(), callsim.Call{Recorder: trace.NewRecorder("c1", nil)})
	assert.Equal(t, trace.OutcomeHarnessError, res.Outcome)
}

func TestNoGoroutineLeak(t *testing.T) {
	settle := func(limit int) int {
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(5 * time.Second); n > limit && time.Now().Before(deadline); n = runtime.NumGoroutine() {
			time.Sleep(20 * time.Millisecond)
		}
		return n
	}
	base := settle(0)
	for _, mb := range misbehaviours() {
		runCall(t, setup{opts: mb.opts, script: mb.script, agent: mb.agent})
	}
	assert.LessOrEqual(t, settle(base), base, "goroutines left after the calls")
}

// TestCloseReasonIsEscaped: the agent's WebSocket close reason ends up in
// the outcome reason escaped, never as the control characters it held.
func TestCloseReasonIsEscaped(t *testing.T) {
	o := runCall(t, setup{script: longScript(), agent: func(a *fakeAgent) {
		a.next()
		a.untilFinal()
		msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye\x1b[2J\u202e\u200b\x7f\nx")
		_ = a.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		a.drain()
	}})
	assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome, o.res.Reason)
	assert.True(t, strings.HasPrefix(o.res.Reason, callsim.ReasonClosed+": "), o.res.Reason)
	assert.Contains(t, o.res.Reason, `bye\x1b[2J\u202e\u200b\x7f\nx`)
	for _, r := range o.res.Reason {
		assert.True(t, r == ' ' || unicode.IsPrint(r), "raw %U in %q", r, o.res.Reason)
	}
}
