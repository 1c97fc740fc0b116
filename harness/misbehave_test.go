package harness_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// The fake agents below stand in for broken voice agents: each is a small
// script on the server side of a real loopback WebSocket, doing one thing
// wrong. They never call tools.

// fxFake is one connection of a fake agent.
type fxFake struct {
	ws   *websocket.Conn
	stop string // the caller's stop reason, once read
}

// next reads one caller frame; false once the caller is gone.
func (a *fxFake) next() (native.Message, bool) {
	var m native.Message
	_, b, err := a.ws.ReadMessage()
	if err != nil || json.Unmarshal(b, &m) != nil {
		return m, false
	}
	if m.Event == native.EventStop && m.Stop != nil {
		a.stop = m.Stop.Reason
	}
	return m, true
}

func (a *fxFake) untilFinal() bool {
	for {
		m, ok := a.next()
		if !ok {
			return false
		}
		if m.Event == native.EventSpeech && m.Speech != nil && m.Speech.Phase == native.PhaseFinal {
			return true
		}
	}
}

// drain reads until the caller's stop or the end of the connection.
func (a *fxFake) drain() {
	for {
		m, ok := a.next()
		if !ok || m.Event == native.EventStop {
			return
		}
	}
}

func (a *fxFake) sendRaw(s string) error { return a.ws.WriteMessage(websocket.TextMessage, []byte(s)) }

// ack accepts the offered scale so the call runs fast.
func (a *fxFake) ack() {
	_ = a.sendRaw(`{"event":"ack","ack":{"timeScale":0.05,"agent":"fake"}}`)
}

// fxFakeAgent serves behave on every connection; the stop reasons the
// caller sent are collected. Close waits for every handler to return.
type fxFakeAgent struct {
	URL   string
	srv   *httptest.Server
	wg    sync.WaitGroup // handlers: httptest does not wait for hijacked conns
	mu    sync.Mutex
	stops []string
}

// Close stops the server and waits for every connection's script to end.
func (f *fxFakeAgent) Close() {
	f.srv.Close()
	f.wg.Wait()
}

func fxServeFake(t *testing.T, behave func(a *fxFake)) *fxFakeAgent {
	t.Helper()
	f := &fxFakeAgent{}
	up := websocket.Upgrader{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.wg.Add(1)
		defer f.wg.Done()
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		a := &fxFake{ws: ws}
		behave(a)
		f.mu.Lock()
		f.stops = append(f.stops, a.stop)
		f.mu.Unlock()
	}))
	f.URL = "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/"
	t.Cleanup(f.Close)
	return f
}

type fxMisbehaviour struct {
	name   string
	behave func(a *fxFake) // nil: nothing listens
	reason string          // prefix of call.end's Reason
	silent bool            // ended by the no-response rule: fxSilentStep
}

func fxMisbehaviours() []fxMisbehaviour {
	return []fxMisbehaviour{
		{"crashes mid-call", func(a *fxFake) {
			a.ack()
			a.untilFinal()
			_ = a.ws.NetConn().Close() // no close frame: a crash
		}, "agent closed the connection", false},
		// No ack either, so the call runs at scale 1: its calls take
		// fxSilentStep.
		{"never answers", func(a *fxFake) { a.drain() }, "no response", true},
		{"floods", func(a *fxFake) {
			a.ack()
			a.next()
			// Speech frames: only speech answers the caller, so the flood,
			// not the no-response rule, ends the call.
			for range 5000 {
				if a.sendRaw(`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"text","text":"x"}}`) != nil {
					break // the caller hung up on us
				}
			}
			a.drain()
		}, "flood", false},
		{"oversized frame", func(a *fxFake) {
			a.ack()
			a.untilFinal()
			_ = a.sendRaw(`{"event":"note","pad":"` + strings.Repeat("x", 1<<20+1) + `"}`)
			a.drain()
		}, "oversized frame", false},
		{"invalid JSON", func(a *fxFake) {
			a.ack()
			a.untilFinal()
			_ = a.sendRaw(`{"event":"agent_speech","agentSpeech":{"id":"a1",`)
			a.drain()
		}, "garbage frame", false},
		{"connection refused", nil, "dial: ", false},
	}
}

// fxRefusedURL is a loopback address nothing listens on.
func fxRefusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "ws://" + addr + "/"
}

// Step timeouts for fxMisbehaveCases. An agent that never answers (nor
// acks, so it runs at scale 1) must meet the no-response rule soon:
// fxSilentStep. Every other fake misbehaves as soon as the caller's
// first final reaches it, and the call must end by that misbehaviour: at
// fxPatientStep (3 s at the fakes' scale 0.05) the no-response rule is
// only a failsafe. At 500 ms it was 25 ms, and on a loaded CI machine
// the rule fired before the caller had read an oversized frame.
const (
	fxSilentStep  = 500 * time.Millisecond
	fxPatientStep = time.Minute
)

// fxMisbehaveCases are two core calls made short (a brief wait for a
// greeting, a brief first utterance) with the given step timeout.
func fxMisbehaveCases(t *testing.T, step time.Duration) []*scenarios.Compiled {
	t.Helper()
	var out []*scenarios.Compiled
	for _, c := range fxCases(t, "corr-01", "tf-07") {
		cc := *c
		cc.Script.StepTimeout = step
		cc.Script.Steps = append([]trace.Step(nil), c.Script.Steps...)
		first := &cc.Script.Steps[0]
		require.Equal(t, trace.StepSay, first.Do, "%s opens with the caller's request", c.Scenario.ID)
		first.On.Timeout, first.Duration = 100*time.Millisecond, 400*time.Millisecond
		out = append(out, &cc)
	}
	return out
}

// fxSettle waits (generously) for the goroutine count to drop to limit.
func fxSettle(limit int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); n > limit && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// fxSteady returns the goroutine count once it has stopped falling for a
// moment (the warm-up call's goroutines winding down).
func fxSteady() int {
	n := runtime.NumGoroutine()
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return n
		}
		n = m
	}
	return n
}

func TestMisbehavingAgents(t *testing.T) {
	env := fxEnv(t)
	careful := fxCareful(t)
	cases := fxMisbehaveCases(t, fxPatientStep)
	// A warm-up call leaves the long-lived goroutines (HTTP keep-alives
	// between the careful agent and the backend) in place before the count.
	fxRun(t, fxRunner(env), careful, cases[:1])
	base := fxSteady()

	for _, mb := range fxMisbehaviours() {
		t.Run(mb.name, func(t *testing.T) {
			var fake *fxFakeAgent
			url := ""
			if mb.behave == nil {
				url = fxRefusedURL(t)
			} else {
				fake = fxServeFake(t, mb.behave)
				url = fake.URL
			}
			r := fxRunner(env)
			r.Concurrency = 1
			// Two calls: the first agent error must not stop the run.
			calls := cases
			if mb.silent {
				calls = fxMisbehaveCases(t, fxSilentStep)
			}
			out := fxRun(t, r, url, calls)
			for _, c := range out {
				fxAssertShape(t, c.History)
				end := c.History.End()
				assert.Equal(t, trace.OutcomeAgentError, end.Outcome, "%s: %s", c.History.Call, end.Reason)
				assert.True(t, strings.HasPrefix(end.Reason, mb.reason), "%s: reason %q, want prefix %q", c.History.Call, end.Reason, mb.reason)
				assert.Equal(t, trace.OutcomeAgentError, c.Score.Outcome)
				assert.Equal(t, end.Reason, c.Score.Reason)
				assert.False(t, c.Score.Integrity)
			}
			g := fxGate(out)
			assert.False(t, g.Broken, "an agent error is the agent's, not a broken run")
			if fake != nil {
				fake.Close()
				if mb.silent {
					// Still connected, the silent agent is told why the call ended.
					assert.Equal(t, []string{"agent_error: no response", "agent_error: no response"}, fake.stops)
				}
			}
		})
	}

	// Every call's goroutines are gone (caller, pump, backend call).
	if n := fxSettle(base); !assert.LessOrEqual(t, n, base, "goroutines left after the misbehaving calls") {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Log(b.String())
	}

	// The same environment still places good calls after broken ones.
	out := fxRun(t, fxRunner(env), careful, cases[1:])
	assert.Empty(t, out[0].History.End().Outcome, out[0].History.End().Reason)
}

func TestUnknownMessagesAreIgnored(t *testing.T) {
	env := fxEnv(t)
	const metrics = `{"event":"metrics","metrics":{"cpu":3}}`
	fake := fxServeFake(t, func(a *fxFake) {
		a.ack()
		a.untilFinal()
		_ = a.sendRaw(metrics)
		_ = a.sendRaw(`{"event":"agent_speech"}`) // a known event without its payload
		_ = a.sendRaw(`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"start"}}`)
		_ = a.sendRaw(`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"end","text":"Okay, I won't make any change."}}`)
		_ = a.sendRaw(`{"event":"hangup","hangup":{"reason":"done"}}`)
		a.drain()
	})
	out := fxRun(t, fxRunner(env), fake.URL, fxMisbehaveCases(t, fxPatientStep)[:1])
	h := out[0].History
	fxAssertShape(t, h)
	end := h.End()
	assert.Empty(t, end.Outcome, "the call ended normally: %s", end.Reason)
	assert.Equal(t, "agent hung up", end.Reason)
	assert.Equal(t, trace.OutcomeScored, out[0].Score.Outcome, "scored on what happened, not an agent error")

	unk := fxKinds(h, trace.KindAgentUnknown)
	require.Len(t, unk, 2)
	assert.Equal(t, trace.SourceAgent, unk[0].Source)
	assert.Equal(t, metrics, unk[0].Data.(*trace.Note).Text, "recorded verbatim")
	assert.Equal(t, `{"event":"agent_speech"}`, unk[1].Data.(*trace.Note).Text)
	// What came after the unknown messages was still understood.
	assert.Len(t, fxKinds(h, trace.KindAgentSpeechEnd), 1)
	assert.Len(t, fxKinds(h, trace.KindAgentHangup), 1)
}
