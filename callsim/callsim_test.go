package callsim_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

const shipText = "Hi, please ship order 5590 today."

func TestCallCarriesEveryMessageBothWays(t *testing.T) {
	be := &fakeBackend{}
	intent := &trace.Intent{Version: 1, Action: "ship_order", Execute: true, Slots: map[string]string{"order_number": "5590"}}
	first := say("s1", shipText, time.Second, trace.Trigger{})
	first.Intent = intent
	var start native.Start
	o := runCall(t, setup{
		call: func(c *callsim.Call) {
			c.TimeScale = 0.1
			c.Backend = be
			c.CustomParameters = map[string]string{"lang": "en"}
			c.CallDate, c.TimeZone = "2026-12-07", "America/New_York"
		},
		script: trace.Script{StepTimeout: 5 * time.Second, Quiet: 500 * time.Millisecond, Steps: []trace.Step{
			first,
			{ID: "s2", Do: trace.StepDTMF, Digits: "12", On: trace.Trigger{Event: trace.KindAgentSpeechEnd}},
			{ID: "s3", Do: trace.StepNoise, Sound: "cough", Duration: 300 * time.Millisecond},
			{ID: "s4", Do: trace.StepWaitQuiet},
			{ID: "s5", Do: trace.StepHangup},
		}},
		agent: func(a *fakeAgent) {
			m, ok := a.next()
			if !ok {
				return
			}
			start = *m.Start
			a.ack(m.Start.TimeScale)
			if !a.untilFinal() {
				return
			}
			a.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: "ship_order", Args: map[string]string{"order_number": "5590"}}})
			a.send(native.Message{Event: native.EventState, State: &native.State{Version: 1, Slots: map[string]string{"order_number": "5590"}, Pending: "ship_order"}})
			a.speak("a1", native.PhaseStart, "")
			a.speak("a1", native.PhaseText, "Okay, shipping order 5590.")
			a.sendRaw(`{"event":"mystery","mystery":{"x":1}}`)
			a.speak("a1", native.PhaseEnd, "Okay, shipping order 5590.")
			a.drain()
		},
	})

	require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
	assert.Equal(t, "caller hung up", o.res.Reason)
	assert.Equal(t, 0.1, o.res.TimeScale)
	assert.Equal(t, []string{"scale 0.1"}, be.Calls())
	assert.Positive(t, o.res.ResponseLatency)

	// start carries what the agent needs.
	assert.Equal(t, "c1", start.CallID)
	assert.Equal(t, "tok", start.Tools.Token)
	assert.Equal(t, "ship_order", start.Tools.Catalog[0].Name)
	assert.Equal(t, 0.1, start.TimeScale)
	assert.Equal(t, "en", start.CustomParameters["lang"])
	assert.Equal(t, "2026-12-07", start.CallDate)
	assert.Equal(t, "America/New_York", start.TimeZone)

	// Caller frames: order, phases and increasing sequence numbers.
	var shape []string
	for i, m := range o.got {
		require.Equal(t, strconv.Itoa(i+1), m.SequenceNumber, "frame %d", i)
		switch m.Event {
		case native.EventSpeech:
			shape = append(shape, "speech."+m.Speech.Phase)
		case native.EventSound:
			shape = append(shape, "sound."+m.Sound.Phase)
			assert.Equal(t, "cough", m.Sound.Kind)
		default:
			shape = append(shape, m.Event)
		}
	}
	words := strings.Fields(shipText)
	want := []string{"start", "speech.onset"}
	for range words[1:] {
		want = append(want, "speech.partial")
	}
	want = append(want, "speech.final", "dtmf", "sound.onset", "sound.offset", "stop")
	assert.Equal(t, want, shape)
	for k := 1; k < len(words); k++ {
		assert.Equal(t, strings.Join(words[:k], " "), o.got[1+k].Speech.Text)
	}
	assert.Equal(t, shipText, o.got[len(words)+1].Speech.Text)
	assert.Equal(t, "12", o.got[len(words)+2].DTMF.Digits)

	// The history holds both sides in order.
	assert.Equal(t, []trace.Kind{
		trace.KindAgentToolIntent, trace.KindAgentState, trace.KindAgentSpeechStart,
		trace.KindAgentSpeechText, trace.KindAgentUnknown, trace.KindAgentSpeechEnd,
	}, kinds(o.hist, trace.SourceAgent))
	wantCaller := []trace.Kind{trace.KindCallerSpeechStart}
	for range words[1:] {
		wantCaller = append(wantCaller, trace.KindCallerSpeechPartial)
	}
	wantCaller = append(wantCaller, trace.KindCallerSpeechFinal, trace.KindCallerDTMF,
		trace.KindCallerNoiseStart, trace.KindCallerNoiseEnd, trace.KindCallerHangup)
	assert.Equal(t, wantCaller, kinds(o.hist, trace.SourceCaller))

	unk := mustFind(t, o.hist, trace.KindAgentUnknown, nil)
	assert.Contains(t, unk.Data.(*trace.Note).Text, `"mystery"`)
	ti := mustFind(t, o.hist, trace.KindAgentToolIntent, nil).Data.(*trace.AgentToolIntent)
	assert.Equal(t, "5590", ti.Args["order_number"])
	st := mustFind(t, o.hist, trace.KindAgentState, nil).Data.(*trace.AgentState)
	assert.Equal(t, "ship_order", st.Pending)

	fin := mustFind(t, o.hist, trace.KindCallerSpeechFinal, nil)
	sp := fin.Data.(*trace.CallerSpeech)
	assert.Equal(t, "s1", sp.Step)
	assert.Equal(t, "u1", sp.Utterance)
	assert.Equal(t, intent, sp.Intent)
	// The utterance lasted at least its scaled duration.
	begin := mustFind(t, o.hist, trace.KindCallerSpeechStart, nil)
	assert.GreaterOrEqual(t, fin.At-begin.At, 100*time.Millisecond)

	end := mustFind(t, o.hist, trace.KindAgentSpeechEnd, nil)
	fired := mustFind(t, o.hist, trace.KindTriggerFired, ofStep("s2"))
	assert.Equal(t, end.Seq, fired.Data.(*trace.TriggerNote).Cause)
	dtmf := mustFind(t, o.hist, trace.KindCallerDTMF, nil)
	assert.Greater(t, dtmf.Seq, end.Seq)
}

func TestTimeScaleNeedsMatchingAck(t *testing.T) {
	cases := []struct {
		name string
		ack  func(a *fakeAgent, offered float64)
		want float64
	}{
		{"acked", func(a *fakeAgent, s float64) { a.ack(s) }, 0.1},
		{"no ack", func(a *fakeAgent, s float64) {}, 1},
		{"other scale", func(a *fakeAgent, s float64) { a.ack(0.5) }, 1},
		{"ack without scale", func(a *fakeAgent, s float64) { a.ack(0) }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			be := &fakeBackend{}
			o := runCall(t, setup{
				call: func(c *callsim.Call) { c.TimeScale = 0.1; c.Backend = be },
				script: trace.Script{Steps: []trace.Step{
					say("s1", "Hello there.", 300*time.Millisecond, trace.Trigger{}),
				}},
				agent: func(a *fakeAgent) {
					m, ok := a.next()
					if !ok {
						return
					}
					tc.ack(a, m.Start.TimeScale)
					a.untilFinal()
					a.speak("a1", native.PhaseStart, "Hi.")
					a.drain()
				},
			})
			require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
			assert.Equal(t, tc.want, o.res.TimeScale)
			assert.Equal(t, []string{"scale " + strconv.FormatFloat(tc.want, 'g', -1, 64)}, be.Calls())
			begin := mustFind(t, o.hist, trace.KindCallerSpeechStart, nil)
			fin := mustFind(t, o.hist, trace.KindCallerSpeechFinal, nil)
			assert.GreaterOrEqual(t, fin.At-begin.At, time.Duration(float64(300*time.Millisecond)*tc.want))
			if tc.want == 1 {
				mustFind(t, o.hist, trace.KindNote, func(e trace.Event) bool {
					return strings.Contains(e.Data.(*trace.Note).Text, "running at")
				})
			}
		})
	}
}

func TestTriggerAfterStepAndDelays(t *testing.T) {
	o := runCall(t, setup{
		script: trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
			say("s1", "Hello.", 100*time.Millisecond, trace.Trigger{}),
			{ID: "s2", Do: trace.StepSilence, Duration: 300 * time.Millisecond},
			// The agent starts speaking during s2: only After s1 sees it.
			say("s3", "Order 5590.", 100*time.Millisecond, trace.Trigger{After: "s1", Event: trace.KindAgentSpeechStart}),
			say("s4", "Please.", 100*time.Millisecond, trace.Trigger{Delay: 250 * time.Millisecond}),
			say("s5", "Thanks.", 100*time.Millisecond, trace.Trigger{Event: trace.KindAgentSpeechEnd, Delay: 200 * time.Millisecond}),
		}},
		agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			// Wait for s4's words, then finish speaking.
			a.until(func(m native.Message) bool {
				return m.Event == native.EventSpeech && m.Speech.Phase == native.PhaseFinal && m.Speech.Text == "Please."
			})
			a.speak("a1", native.PhaseEnd, "Sure.")
			a.drain()
		},
	})
	require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
	assert.Equal(t, 1.0, o.res.TimeScale)

	agentStart := mustFind(t, o.hist, trace.KindAgentSpeechStart, nil)
	silenceOver := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("s3"))
	f3 := mustFind(t, o.hist, trace.KindTriggerFired, ofStep("s3"))
	assert.Equal(t, agentStart.Seq, f3.Data.(*trace.TriggerNote).Cause)
	assert.Greater(t, silenceOver.Seq, f3.Seq)

	s3end := mustFind(t, o.hist, trace.KindCallerSpeechFinal, ofStep("s3"))
	s4 := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("s4"))
	assert.GreaterOrEqual(t, s4.At-s3end.At, 250*time.Millisecond)
	assert.Nil(t, find(o.hist, trace.KindTriggerFired, ofStep("s4")), "no trigger.fired for a plain delay")

	agentEnd := mustFind(t, o.hist, trace.KindAgentSpeechEnd, nil)
	s5 := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("s5"))
	assert.GreaterOrEqual(t, s5.At-agentEnd.At, 200*time.Millisecond)
	f5 := mustFind(t, o.hist, trace.KindTriggerFired, ofStep("s5"))
	assert.Equal(t, agentEnd.Seq, f5.Data.(*trace.TriggerNote).Cause)
	assert.Empty(t, kindsOf(o.hist, trace.KindTriggerMissed))
}

func kindsOf(h *trace.History, k trace.Kind) []trace.Event {
	var out []trace.Event
	for _, e := range h.Events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func TestToolIntentTrigger(t *testing.T) {
	script := trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
		say("s1", "Change order 5590.", 100*time.Millisecond, trace.Trigger{}),
		say("s2", "Wait, stop.", 100*time.Millisecond, trace.Trigger{
			Event: trace.KindAgentToolIntent, Match: &trace.ToolMatch{Tool: "update_order"}, Fallback: 300 * time.Millisecond,
		}),
	}}
	t.Run("intent sent", func(t *testing.T) {
		o := runCall(t, setup{script: script, agent: func(a *fakeAgent) {
			a.untilFinal()
			a.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: "get_order"}})
			a.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: "update_order"}})
			a.drain()
		}})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		intent := mustFind(t, o.hist, trace.KindAgentToolIntent, func(e trace.Event) bool {
			return e.Data.(*trace.AgentToolIntent).Tool == "update_order"
		})
		fired := mustFind(t, o.hist, trace.KindTriggerFired, ofStep("s2")).Data.(*trace.TriggerNote)
		assert.Equal(t, intent.Seq, fired.Cause)
		assert.NotContains(t, fired.On, "fallback")
	})
	t.Run("silent agent falls back", func(t *testing.T) {
		o := runCall(t, setup{script: script, agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "Let me check.") // alive, but no tool_intent
			a.drain()
		}})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		fin := mustFind(t, o.hist, trace.KindCallerSpeechFinal, ofStep("s1"))
		fired := mustFind(t, o.hist, trace.KindTriggerFired, ofStep("s2"))
		note := fired.Data.(*trace.TriggerNote)
		assert.Equal(t, fin.Seq, note.Cause)
		assert.Contains(t, note.On, "fallback")
		s2 := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("s2"))
		assert.GreaterOrEqual(t, s2.At-fin.At, 300*time.Millisecond)
	})
	t.Run("declared intents are waited for", func(t *testing.T) {
		o := runCall(t, setup{script: script, agent: func(a *fakeAgent) {
			a.send(native.Message{Event: native.EventAck, Ack: &native.Ack{TimeScale: 1, Agent: "fake", ToolIntents: true}})
			a.untilFinal()
			// Later than the fallback: a slow end of turn.
			time.Sleep(600 * time.Millisecond)
			a.send(native.Message{Event: native.EventToolIntent, ToolIntent: &native.ToolIntent{Tool: "update_order"}})
			a.drain()
		}})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		intent := mustFind(t, o.hist, trace.KindAgentToolIntent, func(trace.Event) bool { return true })
		fired := mustFind(t, o.hist, trace.KindTriggerFired, ofStep("s2")).Data.(*trace.TriggerNote)
		assert.Equal(t, intent.Seq, fired.Cause, "fired by the agent's notice, not the clock")
		assert.NotContains(t, fired.On, "fallback")
	})
}

func TestMissedTriggers(t *testing.T) {
	steps := func(required bool) []trace.Step {
		s2 := say("s2", "Hello?", 100*time.Millisecond, trace.Trigger{Event: trace.KindAgentTransfer, Timeout: 200 * time.Millisecond})
		s2.Required = required
		return []trace.Step{
			say("s1", "Hi.", 100*time.Millisecond, trace.Trigger{}),
			s2,
			say("s3", "Bye.", 100*time.Millisecond, trace.Trigger{}),
		}
	}
	agent := func(a *fakeAgent) {
		a.untilFinal()
		a.speak("a1", native.PhaseStart, "Hello.")
		a.drain()
	}
	t.Run("optional step runs late", func(t *testing.T) {
		o := runCall(t, setup{script: trace.Script{Steps: steps(false)}, agent: agent})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		missedEv := mustFind(t, o.hist, trace.KindTriggerMissed, ofStep("s2"))
		assert.Contains(t, missedEv.Data.(*trace.TriggerNote).Reason, "agent.transfer")
		said := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("s2"))
		assert.Greater(t, said.Seq, missedEv.Seq, "the step runs after its trigger is given up")
		mustFind(t, o.hist, trace.KindCallerSpeechFinal, ofStep("s3"))
	})
	t.Run("required step excludes the call", func(t *testing.T) {
		o := runCall(t, setup{script: trace.Script{Steps: steps(true)}, agent: agent})
		assert.Equal(t, trace.OutcomeExcluded, o.res.Outcome)
		assert.Contains(t, o.res.Reason, "s2")
		mustFind(t, o.hist, trace.KindTriggerMissed, ofStep("s2"))
		assert.Nil(t, find(o.hist, trace.KindCallerSpeechStart, ofStep("s3")))
		require.NotEmpty(t, o.got)
		assert.Equal(t, native.EventStop, o.got[len(o.got)-1].Event)
	})
}

func TestWaitQuiet(t *testing.T) {
	t.Run("waits for speech and tool calls to finish", func(t *testing.T) {
		o := runCall(t, setup{
			script: trace.Script{StepTimeout: 10 * time.Second, Quiet: 400 * time.Millisecond, Steps: []trace.Step{
				say("s1", "Ship order 5590.", 100*time.Millisecond, trace.Trigger{}),
				{ID: "s2", Do: trace.StepWaitQuiet},
				{ID: "s3", Do: trace.StepHangup},
			}},
			agent: func(a *fakeAgent) {
				a.untilFinal()
				a.speak("a1", native.PhaseStart, "One moment.")
				// The backend records into the same recorder; stand in for it.
				a.rec.Record(trace.SourceBackend, trace.KindToolReceived, &trace.ToolEvent{Ref: "r1", Tool: "ship_order"})
				time.Sleep(200 * time.Millisecond)
				a.speak("a1", native.PhaseEnd, "One moment.")
				time.Sleep(200 * time.Millisecond)
				a.rec.Record(trace.SourceBackend, trace.KindToolResponded, &trace.ToolEvent{Ref: "r1", Tool: "ship_order", Status: 200})
				a.drain()
			},
		})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		resp := mustFind(t, o.hist, trace.KindToolResponded, nil)
		hang := mustFind(t, o.hist, trace.KindCallerHangup, nil)
		assert.GreaterOrEqual(t, hang.At-resp.At, 400*time.Millisecond)
		assert.Nil(t, find(o.hist, trace.KindNote, func(e trace.Event) bool {
			return strings.Contains(e.Data.(*trace.Note).Text, "not quiet")
		}))
	})
	t.Run("gives up at its timeout and goes on", func(t *testing.T) {
		o := runCall(t, setup{
			script: trace.Script{StepTimeout: 10 * time.Second, Quiet: 400 * time.Millisecond, Steps: []trace.Step{
				say("s1", "Ship order 5590.", 100*time.Millisecond, trace.Trigger{}),
				{ID: "s2", Do: trace.StepWaitQuiet, On: trace.Trigger{Timeout: 300 * time.Millisecond}},
				{ID: "s3", Do: trace.StepHangup},
			}},
			agent: func(a *fakeAgent) {
				a.untilFinal()
				a.speak("a1", native.PhaseStart, "I will talk forever.")
				a.drain()
			},
		})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		mustFind(t, o.hist, trace.KindNote, func(e trace.Event) bool {
			return strings.Contains(e.Data.(*trace.Note).Text, "not quiet")
		})
		mustFind(t, o.hist, trace.KindCallerHangup, nil)
	})
}

func TestBackendSteps(t *testing.T) {
	be := &fakeBackend{}
	m := &trace.ToolMatch{Tool: "update_order"}
	o := runCall(t, setup{
		call: func(c *callsim.Call) { c.Backend = be },
		script: trace.Script{Steps: []trace.Step{
			{ID: "h", Do: trace.StepHold, Hold: "h1", Match: m, Duration: 2 * time.Second},
			{ID: "f", Do: trace.StepFault, Fault: &trace.Fault{Kind: trace.FaultLatency, Delay: time.Second}},
			{ID: "r", Do: trace.StepRelease, Hold: "h1"},
			{ID: "x", Do: trace.StepFail, Hold: "h1", Status: 503},
		}},
		agent: func(a *fakeAgent) { a.drain() },
	})
	require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
	assert.Equal(t, []string{"scale 1", "hold h1 update_order 2s", "inject latency", "release h1", "fail h1 503"}, be.Calls())
	mustFind(t, o.hist, trace.KindNote, func(e trace.Event) bool {
		return strings.Contains(e.Data.(*trace.Note).Text, "no held call h1")
	})

	t.Run("no backend is a note", func(t *testing.T) {
		o := runCall(t, setup{
			script: trace.Script{Steps: []trace.Step{{ID: "h", Do: trace.StepHold, Hold: "h1"}}},
			agent:  func(a *fakeAgent) { a.drain() },
		})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		mustFind(t, o.hist, trace.KindNote, func(e trace.Event) bool {
			return strings.Contains(e.Data.(*trace.Note).Text, "no backend")
		})
	})
}

func TestBargeInIsClearedAndTimed(t *testing.T) {
	o := runCall(t, setup{
		script: trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
			say("s1", "Change order 5590 to December 3.", 200*time.Millisecond, trace.Trigger{}),
			{ID: "s2", Do: trace.StepSay, Act: trace.ActInterrupt, Invalidates: true, Text: "Wait, stop, don't change anything.",
				Duration: 200 * time.Millisecond, On: trace.Trigger{Event: trace.KindAgentSpeechStart}},
		}},
		agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			a.speak("a1", native.PhaseText, "Okay, updating order 5590:")
			a.until(func(m native.Message) bool {
				return m.Event == native.EventSpeech && m.Speech.Phase == native.PhaseOnset
			})
			a.send(native.Message{Event: native.EventClear, Clear: &native.Clear{ID: "a1"}})
			a.drain()
		},
	})
	require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
	clr := mustFind(t, o.hist, trace.KindAgentClear, nil)
	assert.Equal(t, "a1", clr.Data.(*trace.AgentSpeech).Utterance)
	onset := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("s2"))
	assert.True(t, onset.Data.(*trace.CallerSpeech).Invalidates)
	assert.Equal(t, clr.At-onset.At, o.res.YieldLatency)
	assert.Positive(t, o.res.ResponseLatency)
}

// A partials trigger follows the agent's words: at the utterance's second
// word when those come in a burst, well before the delay; at the delay
// when the words are slower or never come as partials (audio).
func TestPartialsTrigger(t *testing.T) {
	script := func(delay time.Duration) trace.Script {
		return trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
			say("s1", "Hi.", 100*time.Millisecond, trace.Trigger{}),
			say("s2", "Wait.", 100*time.Millisecond, trace.Trigger{Event: trace.KindAgentSpeechStart, Delay: delay, Partials: 2}),
		}}
	}
	t.Run("burst", func(t *testing.T) {
		o := runCall(t, setup{script: script(time.Minute), agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			a.speak("a0", native.PhaseText, "Sure") // another utterance's words do not count
			a.speak("a1", native.PhaseText, "Your")
			a.speak("a1", native.PhaseText, "Your order")
			a.drain()
		}})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		start := mustFind(t, o.hist, trace.KindAgentSpeechStart, nil)
		second := mustFind(t, o.hist, trace.KindAgentSpeechText, func(e trace.Event) bool { return e.Data.(*trace.AgentSpeech).Text == "Your order" })
		fired := mustFind(t, o.hist, trace.KindTriggerFired, ofStep("s2"))
		note := fired.Data.(*trace.TriggerNote)
		assert.Contains(t, note.On, "partial 2", "fired by the words, not the minute's delay")
		assert.Greater(t, fired.Seq, second.Seq)
		assert.Equal(t, start.Seq, note.Cause)
	})
	t.Run("delay first", func(t *testing.T) {
		o := runCall(t, setup{script: script(200 * time.Millisecond), agent: func(a *fakeAgent) {
			a.untilFinal()
			a.speak("a1", native.PhaseStart, "")
			a.drain()
		}})
		require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)
		start := mustFind(t, o.hist, trace.KindAgentSpeechStart, nil)
		note := mustFind(t, o.hist, trace.KindTriggerFired, ofStep("s2")).Data.(*trace.TriggerNote)
		assert.NotContains(t, note.On, "partial")
		s2 := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("s2"))
		assert.GreaterOrEqual(t, s2.At-start.At, 200*time.Millisecond)
	})
}

// Several utterances in one turn reach the agent with the next one's onset
// before the previous one's final, so no final of the turn but the last
// ever finds the caller with nothing open; an utterance after a delay or
// an event is a turn of its own and keeps the plain order.
func TestOneTurnOpensNextUtteranceBeforeFinal(t *testing.T) {
	o := runCall(t, setup{
		script: trace.Script{StepTimeout: 5 * time.Second, Steps: []trace.Step{
			say("req", "Ship order 5590.", 60*time.Millisecond, trace.Trigger{}),
			say("fix", "No, 5599.", 60*time.Millisecond, trace.Trigger{}),
			say("more", "Today.", 60*time.Millisecond, trace.Trigger{After: "fix"}),
			say("later", "Thanks.", 60*time.Millisecond, trace.Trigger{Delay: 50 * time.Millisecond}),
		}},
		agent: func(a *fakeAgent) { a.drain() },
	})
	require.Equal(t, trace.Outcome(""), o.res.Outcome, o.res.Reason)

	var phases []string
	for _, m := range o.got {
		if m.Event == native.EventSpeech {
			phases = append(phases, m.Speech.ID+" "+m.Speech.Phase)
		}
	}
	require.Equal(t, []string{
		"u1 onset", "u1 partial", "u1 partial", "u2 onset", "u1 final",
		"u2 partial", "u3 onset", "u2 final",
		"u3 final",
		"u4 onset", "u4 final",
	}, phases)

	// The trace tells the same order, and each step is done at its final.
	fix := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("fix"))
	reqEnd := mustFind(t, o.hist, trace.KindCallerSpeechFinal, ofStep("req"))
	assert.Less(t, fix.Seq, reqEnd.Seq)
	later := mustFind(t, o.hist, trace.KindCallerSpeechStart, ofStep("later"))
	moreEnd := mustFind(t, o.hist, trace.KindCallerSpeechFinal, ofStep("more"))
	assert.Greater(t, later.Seq, moreEnd.Seq)
	assert.GreaterOrEqual(t, later.At-moreEnd.At, 50*time.Millisecond)
}
