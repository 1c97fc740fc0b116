package callsim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/trace"
)

func TestLatencies(t *testing.T) {
	ms := time.Millisecond
	ev := func(at time.Duration, k trace.Kind, d any) trace.Event {
		return trace.Event{At: at * ms, Kind: k, Data: d}
	}
	evs := []trace.Event{
		ev(0, trace.KindCallerSpeechStart, &trace.CallerSpeech{}),
		ev(500, trace.KindCallerSpeechFinal, &trace.CallerSpeech{}),
		ev(1200, trace.KindAgentSpeechStart, &trace.AgentSpeech{Utterance: "a1"}),
		ev(2000, trace.KindAgentSpeechEnd, &trace.AgentSpeech{Utterance: "a1"}),
		ev(2500, trace.KindCallerSpeechStart, &trace.CallerSpeech{}), // agent quiet: not a barge-in
		ev(3000, trace.KindAgentSpeechStart, &trace.AgentSpeech{Utterance: "a2"}),
		ev(3100, trace.KindCallerNoiseStart, &trace.CallerNoise{}), // noise never counts
		ev(3400, trace.KindCallerSpeechStart, &trace.CallerSpeech{}),
		ev(3650, trace.KindAgentClear, &trace.AgentSpeech{Utterance: "a2"}),
		ev(4000, trace.KindAgentSpeechStart, &trace.AgentSpeech{Utterance: "a3"}),
		ev(4100, trace.KindCallerSpeechStart, &trace.CallerSpeech{}),
		ev(4900, trace.KindAgentSpeechEnd, &trace.AgentSpeech{Utterance: "a3"}),
	}
	resp, yield := Latencies(evs)
	assert.Equal(t, 700*ms, resp)
	assert.Equal(t, 250*ms, yield)

	resp, yield = Latencies(evs[:2])
	assert.Zero(t, resp)
	assert.Zero(t, yield)
}

func TestMeterAllowsBurstThenRate(t *testing.T) {
	c := &stepClock{now: time.Unix(0, 0)}
	m := newMeter(c, 10)
	for i := range 10 {
		assert.True(t, m.take(), "burst %d", i)
	}
	assert.False(t, m.take())
	c.now = c.now.Add(100 * time.Millisecond)
	assert.True(t, m.take())
	assert.False(t, m.take())
}

type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }
