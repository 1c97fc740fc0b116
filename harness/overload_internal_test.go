package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/trace"
)

// The bound is a contract (docs/PERFORMANCE.md, "Harness lateness"):
// 2 s of script time, inclusive; the reason names what ran late.
func TestOverloadBound(t *testing.T) {
	assert.Equal(t, 2*time.Second, DefaultOverloadBound)
	at := func(scale float64, tr, sp, be time.Duration) trace.HarnessLateness {
		l := trace.HarnessLateness{Triggers: trace.LatenessStat{N: 1, Max: tr}, Speech: trace.LatenessStat{N: 1, Max: sp}, Backend: trace.LatenessStat{N: 1, Max: be}}
		l.Settle(scale)
		return l
	}
	// 100 ms of real time at scale 0.05 is exactly the bound: not over.
	assert.Empty(t, overloaded(at(0.05, 100*time.Millisecond, 0, 0), nil, 0, 0))
	why := overloaded(at(0.05, 0, 100*time.Millisecond+time.Microsecond, 0), nil, 0, 0)
	assert.True(t, strings.HasPrefix(why, ReasonOverloaded+": "), why)
	assert.Contains(t, why, "the caller's speech")
	assert.Contains(t, why, "over the 2s bound")
	assert.Contains(t, overloaded(at(1, 0, time.Second, 3*time.Second), nil, 0, 0), "a backend timer, 3s real")
	assert.Contains(t, overloaded(at(1, 4*time.Second, 0, 0), nil, 0, 0), "a trigger")
	// A bound of its own, and none at all.
	assert.Empty(t, overloaded(at(1, time.Second, 0, 0), nil, 0, 1500*time.Millisecond))
	assert.NotEmpty(t, overloaded(at(1, 2*time.Second, 0, 0), nil, 0, 1500*time.Millisecond))
	assert.Empty(t, overloaded(at(1, time.Hour, 0, 0), nil, 0, -1))
}

// An in-process agent's lateness is held to the same bound, inclusive;
// the reason says it was the agent, and what of it ran late. Where the
// harness was later still, the reason is the harness's.
func TestAgentOverloadBound(t *testing.T) {
	agent := func(scale float64, timers, speech time.Duration) *trace.AgentLateness {
		a := &trace.AgentLateness{Timers: trace.LatenessStat{N: 1, Max: timers}, Speech: trace.LatenessStat{N: 1, Max: speech}}
		a.Settle(scale)
		return a
	}
	calm := trace.HarnessLateness{}
	calm.Settle(0.05)
	assert.Empty(t, overloaded(calm, agent(0.05, 100*time.Millisecond, 100*time.Millisecond), 0, 0))
	why := overloaded(calm, agent(0.05, 0, 100*time.Millisecond+time.Microsecond), 0, 0)
	assert.True(t, strings.HasPrefix(why, ReasonOverloaded+": the agent in this process ran "), why)
	assert.Contains(t, why, "its speech, 100ms real")
	assert.Contains(t, why, "over the 2s bound")
	assert.Contains(t, overloaded(calm, agent(1, 3*time.Second, time.Second), 0, 0), "a timer, 3s real")
	// How late it read the caller's frames, how late its own were read,
	// how late its tool requests left: each named when the worst.
	for what, a := range map[string]*trace.AgentLateness{
		"a round trip: the caller's read of its frame and its read of the caller's, 150ms real": {Reads: trace.LatenessStat{N: 3, Max: 150 * time.Millisecond}},
		"a round trip: the caller's read of its frame and its read of the caller's, 160ms real": {Reads: trace.LatenessStat{N: 3, Max: 60 * time.Millisecond}, Sends: trace.LatenessStat{N: 3, Max: 100 * time.Millisecond}},
		"a tool request's departure, 150ms real":                                                {Tools: trace.LatenessStat{N: 1, Max: 150 * time.Millisecond}, Timers: trace.LatenessStat{N: 1, Max: time.Millisecond}},
	} {
		a.Settle(0.05)
		assert.Contains(t, overloaded(calm, a, 0, 0), what)
	}
	harnessLate := trace.HarnessLateness{Triggers: trace.LatenessStat{N: 1, Max: 5 * time.Second}}
	harnessLate.Settle(1)
	assert.Contains(t, overloaded(harnessLate, agent(1, 3*time.Second, 0), 0, 0), "the harness ran 5s late")
	assert.Empty(t, overloaded(calm, agent(1, time.Hour, 0), 0, -1))
	assert.Empty(t, overloaded(calm, nil, 0, 0))
	// An agent that acknowledged its scale after the caller gave up
	// waiting ran at another pace than its caller: marked, whatever its
	// lateness; at the same scale as its caller, not.
	why = overloaded(calm, agent(0.05, 0, 0), 1, 0)
	assert.True(t, strings.HasPrefix(why, ReasonOverloaded+": the agent in this process acknowledged time scale 0.05 too late, so its caller ran at 1"), why)
	assert.Empty(t, overloaded(calm, agent(0.05, 0, 0), 0.05, 0))
	assert.Empty(t, overloaded(calm, agent(0.05, 0, 0), 1, -1))
}

// CPU pressure comes from the "some" line's total (microseconds).
func TestParseStall(t *testing.T) {
	d, ok := parseStall([]byte("some avg10=5.48 avg60=17.85 avg300=12.58 total=2665354187\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	assert.True(t, ok)
	assert.Equal(t, 2665354187*time.Microsecond, d)
	for _, bad := range []string{"", "full total=5\n", "some avg10=1 total=x\n", "some total=-3\n", "some avg10=1\n"} {
		_, ok := parseStall([]byte(bad))
		assert.False(t, ok, "%q", bad)
	}
}

// A call's pressure is the stall time over its wall time, at most 1; no
// reading, no figure.
func TestPressureSince(t *testing.T) {
	wall0 := time.Now().Add(-time.Second)
	read := func(d time.Duration) func() (time.Duration, bool) {
		return func() (time.Duration, bool) { return d, true }
	}
	p := pressureSince(read(10*time.Second+500*time.Millisecond), wall0, 10*time.Second, true)
	if assert.NotNil(t, p) {
		assert.InDelta(t, 0.5, *p, 0.05)
	}
	p = pressureSince(read(time.Hour), wall0, 0, true)
	if assert.NotNil(t, p) {
		assert.Equal(t, 1.0, *p)
	}
	assert.Nil(t, pressureSince(read(time.Second), wall0, 0, false), "no first reading")
	assert.Nil(t, pressureSince(func() (time.Duration, bool) { return 0, false }, wall0, 0, true), "no second reading")
	assert.Nil(t, pressureSince(read(time.Second), wall0, 2*time.Second, true), "a counter that went back")
	assert.Nil(t, pressureSince(nil, wall0, 0, true))
}

// load --transport native spreads its starts over 2 s unless told
// (docs/CLI.md).
func TestTextLoadDefaults(t *testing.T) {
	assert.Equal(t, 2*time.Second, DefaultTextLoadRamp)
}

// load --turns: an answer within 5 s, a second's pause before the next
// line, an answer waited out for 30 s at most (docs/CLI.md).
func TestLoadTurnsDefaults(t *testing.T) {
	assert.Equal(t, 5*time.Second, DefaultAnswerWithin)
	assert.Equal(t, time.Second, TurnPause)
	assert.Equal(t, 30*time.Second, MaxAnswer)
}
