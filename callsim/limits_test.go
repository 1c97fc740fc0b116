package callsim_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// memUse is what a call cost the process: heap in use after it (after a
// GC, against before) and everything allocated during it. The fake agent
// runs in the same process, so its sending counts too.
type memUse struct {
	heapGrowth int64
	allocated  uint64
}

func measure(f func()) memUse {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return memUse{heapGrowth: int64(after.HeapInuse) - int64(before.HeapInuse), allocated: after.TotalAlloc - before.TotalAlloc}
}

// historySize is the call's history as run.jsonl would hold it.
func historySize(t *testing.T, h *trace.History) int {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, trace.WriteJSONL(&b, h))
	return b.Len()
}

// agentText is every agent speech text recorded.
func agentTexts(h *trace.History) []string {
	var out []string
	for _, e := range h.Events {
		if d, ok := e.Data.(*trace.AgentSpeech); ok && e.Source == trace.SourceAgent {
			out = append(out, d.Text)
		}
	}
	return out
}

// speechFrame is an agent_speech text frame of about n bytes.
func speechFrame(n int) []byte {
	return []byte(`{"event":"agent_speech","agentSpeech":{"id":"a1","phase":"text","text":"` + strings.Repeat("blah ", n/5) + `"}}`)
}

// sendUntilGone sends frame up to n times, stopping when the caller has
// gone, then waits until the call is over.
func sendUntilGone(a *fakeAgent, frame []byte, n int) {
	for range n {
		if a.ws.WriteMessage(1, frame) != nil {
			break
		}
	}
	a.drain()
}

// The incident of issue 7: agent_speech frames of almost 1 MiB, under the
// frame limit and the flood limit. The first one passes the call's text
// budget: the call ends, its history holds one cut event, and memory stays
// a few frames' worth.
func TestHugeSpeechFramesEndOnTextBudget(t *testing.T) {
	frame := speechFrame(callsim.DefaultMaxFrameBytes - 200)
	require.Less(t, len(frame), callsim.DefaultMaxFrameBytes)
	var o outcome
	use := measure(func() {
		o = runCall(t, setup{script: longScript(), agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			sendUntilGone(a, frame, 200)
		}})
	})
	assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
	assert.Equal(t, callsim.ReasonTextBudget, o.res.Reason)
	texts := agentTexts(o.hist)
	require.NotEmpty(t, texts)
	for _, s := range texts {
		assert.LessOrEqual(t, len(s), callsim.DefaultMaxEventTextBytes+len(callsim.TruncationMarker))
	}
	assert.True(t, strings.HasSuffix(texts[len(texts)-1], callsim.TruncationMarker))
	assert.Less(t, historySize(t, o.hist), 64<<10, "one cut event, not a megabyte")
	t.Logf("heap growth %d KiB, allocated %d MiB", use.heapGrowth>>10, use.allocated>>20)
	assert.Less(t, use.heapGrowth, int64(16<<20))
	// Agent and caller together: a handful of frames, not 200 (the
	// incident allocated gigabytes).
	assert.Less(t, use.allocated, uint64(64<<20))
}

// Frames under the frame limit but far over the per-event cap, in a
// message the caller does not know: each is kept cut to the cap, and the
// history budget (set per call) ends the call.
func TestHugeUnknownFramesEndOnHistoryBudget(t *testing.T) {
	frame := []byte(`{"event":"metrics","pad":"` + strings.Repeat("x", 64<<10) + `"}`)
	const budget = 128 << 10
	var o outcome
	use := measure(func() {
		o = runCall(t, setup{
			script: longScript(),
			call:   func(c *callsim.Call) { c.Limits.MaxHistoryBytes = budget },
			agent: func(a *fakeAgent) {
				a.untilFinal()
				sendUntilGone(a, frame, 400)
			},
		})
	})
	assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
	assert.Equal(t, callsim.ReasonHistoryBudget, o.res.Reason)
	unk := kindsOf(o.hist, trace.KindAgentUnknown)
	require.NotEmpty(t, unk)
	for _, e := range unk {
		text := e.Data.(*trace.Note).Text
		assert.Equal(t, callsim.DefaultMaxEventTextBytes+len(callsim.TruncationMarker), len(text))
	}
	// The budget, the event that crossed it, and the notes after it.
	assert.Less(t, historySize(t, o.hist), budget+8<<10)
	mustFind(t, o.hist, trace.KindNote, func(e trace.Event) bool {
		return strings.Contains(e.Data.(*trace.Note).Text, "MaxHistoryBytes")
	})
	t.Logf("heap growth %d KiB, allocated %d MiB", use.heapGrowth>>10, use.allocated>>20)
	assert.Less(t, use.heapGrowth, int64(16<<20))
	assert.Less(t, use.allocated, uint64(96<<20))
}

// Many small speech frames, each under the per-event cap: the call ends
// when their sum passes the call's text budget, and the history holds no
// more than that budget of text.
func TestTextFloodEndsOnTextBudget(t *testing.T) {
	frame := speechFrame(3000)
	var o outcome
	use := measure(func() {
		o = runCall(t, setup{script: longScript(), agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			sendUntilGone(a, frame, 400) // 1.2 MB of text, under the flood limit
		}})
	})
	assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
	assert.Equal(t, callsim.ReasonTextBudget, o.res.Reason)
	total := 0
	for _, s := range agentTexts(o.hist) {
		assert.NotContains(t, s, callsim.TruncationMarker, "under the per-event cap")
		total += len(s)
	}
	assert.Greater(t, total, callsim.DefaultMaxCallTextBytes-3000)
	assert.LessOrEqual(t, total, callsim.DefaultMaxCallTextBytes+3000)
	assert.Less(t, historySize(t, o.hist), callsim.DefaultMaxCallTextBytes+64<<10)
	t.Logf("heap growth %d KiB, allocated %d MiB", use.heapGrowth>>10, use.allocated>>20)
	assert.Less(t, use.heapGrowth, int64(16<<20))
}

// Text over the per-event cap is cut and the call goes on; the cut is
// counted in a note at the end. Every text field of every message is cut,
// and UTF-8 is never split.
func TestEventTextIsCutAndTheCallGoesOn(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	slots := map[string]string{}
	for i := range 20 {
		slots[fmt.Sprintf("slot%02d", i)] = long
	}
	o := runCall(t, setup{
		script: trace.Script{Steps: []trace.Step{
			say("s1", "Hi.", 100*time.Millisecond, trace.Trigger{}),
			{ID: "s2", Do: trace.StepSilence, Duration: 500 * time.Millisecond},
		}},
		call: func(c *callsim.Call) { c.Limits.MaxEventTextBytes = 101 },
		agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak(long, native.PhaseStart, long)
			a.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: "ship_order", Args: slots}})
			a.send(native.Message{Event: native.EventState, State: &native.State{Version: 2, Pending: long, Slots: slots}})
			a.sendRaw(`{"event":"metrics","pad":"` + long + `"}`)
			a.drain()
		},
	})
	require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
	marker := callsim.TruncationMarker
	sp := mustFind(t, o.hist, trace.KindAgentSpeechStart, nil).Data.(*trace.AgentSpeech)
	assert.Equal(t, strings.Repeat("é", 50)+marker, sp.Utterance, "cut on a rune boundary")
	assert.Equal(t, marker, sp.Text, "nothing left for the text")
	ti := mustFind(t, o.hist, trace.KindAgentToolIntent, nil).Data.(*trace.AgentToolIntent)
	assert.Equal(t, "ship_order", ti.Tool)
	assert.Equal(t, map[string]string{"slot00": strings.Repeat("é", 42) + marker}, ti.Args)
	st := mustFind(t, o.hist, trace.KindAgentState, nil).Data.(*trace.AgentState)
	assert.Equal(t, 2, st.Version)
	assert.Equal(t, strings.Repeat("é", 50)+marker, st.Pending)
	assert.Empty(t, st.Slots)
	unk := mustFind(t, o.hist, trace.KindAgentUnknown, nil).Data.(*trace.Note).Text
	assert.True(t, strings.HasSuffix(unk, marker))
	mustFind(t, o.hist, trace.KindNote, func(e trace.Event) bool {
		return strings.Contains(e.Data.(*trace.Note).Text, "in 4 events (MaxEventTextBytes)")
	})
}

// A hung agent accepts the WebSocket and then neither reads nor writes
// (SIGSTOP looks the same from the caller). With caller speech it misses
// the no-response rule; with none, it never answers a ping. Either way
// the call ends as agent_error within its timeouts.
func TestHungAgentNeverReads(t *testing.T) {
	hung := func(a *fakeAgent) { <-a.ended }
	t.Run("caller speaks", func(t *testing.T) {
		start := time.Now()
		o := runCall(t, setup{agent: hung, script: trace.Script{StepTimeout: 400 * time.Millisecond, Steps: []trace.Step{
			say("s1", "Hello?", 100*time.Millisecond, trace.Trigger{}),
			{ID: "s2", Do: trace.StepSilence, Duration: 5 * time.Second},
		}}})
		assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
		assert.Equal(t, callsim.ReasonNoResponse, o.res.Reason)
		assert.Less(t, time.Since(start), 3*time.Second)
	})
	t.Run("caller silent", func(t *testing.T) {
		start := time.Now()
		o := runCall(t, setup{agent: hung, script: trace.Script{StepTimeout: 400 * time.Millisecond, Steps: []trace.Step{
			{ID: "s1", Do: trace.StepSilence, Duration: 10 * time.Second},
		}}})
		assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
		assert.Equal(t, callsim.ReasonUnresponsive, o.res.Reason)
		// DefaultMinIdleTimeout, then the stop frame and the close.
		assert.Less(t, time.Since(start), callsim.DefaultMinIdleTimeout+3*time.Second)
	})
}

// An agent that answers, then stops dead mid-call (a SIGSTOP, a deadlock)
// ends the call as unresponsive at its idle timeout, not at the end of the
// script.
func TestAgentStopsMidCall(t *testing.T) {
	start := time.Now()
	o := runCall(t, setup{
		script: longScript(),
		call:   func(c *callsim.Call) { c.Limits.IdleTimeout = 500 * time.Millisecond },
		agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			a.speak("a1", native.PhaseEnd, "Okay.")
			<-a.ended
		},
	})
	assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
	assert.Equal(t, callsim.ReasonUnresponsive, o.res.Reason)
	assert.Less(t, time.Since(start), 2500*time.Millisecond, "the script would run 3.3 s")
	mustFind(t, o.hist, trace.KindAgentSpeechEnd, nil)
}

// An agent that is alive but silent (it reads, so it answers pings) is
// not unresponsive.
func TestSilentLiveAgentIsNotUnresponsive(t *testing.T) {
	o := runCall(t, setup{
		script: trace.Script{Steps: []trace.Step{{ID: "s1", Do: trace.StepSilence, Duration: 1500 * time.Millisecond}}},
		call:   func(c *callsim.Call) { c.Limits.IdleTimeout = 300 * time.Millisecond },
		agent:  func(a *fakeAgent) { a.drain() },
	})
	assert.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
	assert.Equal(t, "script complete", o.res.Reason)
}

// Tool requests are not an answer: an agent that floods its tools and
// never speaks still meets the no-response rule.
func TestToolRequestsDoNotCountAsAResponse(t *testing.T) {
	start := time.Now()
	o := runCall(t, setup{
		script: trace.Script{StepTimeout: 500 * time.Millisecond, Steps: []trace.Step{
			say("s1", "Hi, please ship order 5590 today.", 100*time.Millisecond, trace.Trigger{}),
			{ID: "s2", Do: trace.StepSilence, Duration: 5 * time.Second},
		}},
		agent: func(a *fakeAgent) {
			a.untilFinal()
			for i := 0; ; i++ {
				select {
				case <-a.ended:
					return
				case <-time.After(10 * time.Millisecond):
				}
				ref := fmt.Sprintf("r%d", i)
				a.rec.Record(trace.SourceBackend, trace.KindToolReceived, &trace.ToolEvent{Ref: ref, Tool: "ship_order"})
				a.rec.Record(trace.SourceBackend, trace.KindToolResponded, &trace.ToolEvent{Ref: ref, Tool: "ship_order"})
				a.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: "ship_order"}})
			}
		},
	})
	assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
	assert.Equal(t, callsim.ReasonNoResponse, o.res.Reason)
	assert.Less(t, time.Since(start), 3*time.Second)
}

// Backend events count towards the history too: a tool flood that never
// touches the WebSocket still ends the call once the history is full.
func TestBackendFloodEndsOnHistoryBudget(t *testing.T) {
	o := runCall(t, setup{
		script: longScript(),
		call:   func(c *callsim.Call) { c.Limits.MaxHistoryEvents = 300 },
		agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			for i := range 1000 {
				a.rec.Record(trace.SourceBackend, trace.KindToolReceived, &trace.ToolEvent{Ref: fmt.Sprint(i), Tool: "ship_order"})
			}
			a.drain()
		},
	})
	assert.Equal(t, trace.OutcomeAgentError, o.res.Outcome)
	assert.Equal(t, callsim.ReasonHistoryBudget, o.res.Reason)
}

func TestLimitsDefaults(t *testing.T) {
	d := callsim.DefaultLimits()
	assert.Equal(t, callsim.Limits{
		MaxFrameBytes: 1 << 20, MaxMessagesPerSecond: 500, MaxMessagesPerCall: 20000,
		MaxEventTextBytes: 4096, MaxCallTextBytes: 256 << 10, MaxHistoryBytes: 2 << 20, MaxHistoryEvents: 25000,
	}, d)
	// The budgets nest: one event's text fits the call's, the call's text
	// fits its history, and a frame flood is reported as flood.
	assert.Less(t, d.MaxEventTextBytes, int(d.MaxCallTextBytes))
	assert.Less(t, d.MaxCallTextBytes, d.MaxHistoryBytes)
	assert.Greater(t, d.MaxHistoryEvents, d.MaxMessagesPerCall)
}
