package harness_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/agents/hostile"
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/trace"
)

// stallClock runs with real time until its first reading (the call's
// recorder starting the call, so the setup before it, however slow, never
// uses up the stall), then freezes for jump before every later reading:
// the harness, reading it, sees what a process starved that long between
// any two of its looks at the clock sees (every timer it set fired at
// least jump late). An ordering, not a margin: however fast the call
// runs, its first wait already ends late by the jump.
type stallClock struct {
	mu    sync.Mutex
	reads int
	jump  time.Duration
}

func (c *stallClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ahead := time.Duration(c.reads) * c.jump
	c.reads++
	return time.Now().Add(ahead)
}

// A call whose harness stalled past the overload bound is ours to re-run:
// harness_error, reason "overloaded: …", whatever the agent did, with the
// outcome it would have had in a note. The same call with the check off
// is not marked, and a call on a normal clock records its lateness
// without being marked.
func TestOverloadedCallIsAHarnessError(t *testing.T) {
	url := fxCareful(t)
	cases := fxCases(t, "corr-01")
	place := func(t *testing.T, clock trace.Clock, bound time.Duration) *trace.History {
		env := fxEnv(t)
		r := fxRunner(env)
		r.Clock, r.OverloadBound = clock, bound
		out := fxRun(t, r, url, cases)
		return out[0].History
	}
	// 3 s of real time at scale 0.05 is a minute of script time.
	stall := func() trace.Clock {
		return &stallClock{jump: 3 * time.Second}
	}

	t.Run("stalled", func(t *testing.T) {
		h := place(t, stall(), 0)
		end := h.End()
		require.NotNil(t, end)
		assert.Equal(t, trace.OutcomeHarnessError, end.Outcome)
		assert.True(t, strings.HasPrefix(end.Reason, harness.ReasonOverloaded+": "), end.Reason)
		assert.Contains(t, end.Reason, "over the 2s bound")
		require.NotNil(t, end.Lateness)
		assert.Greater(t, end.Lateness.Worst, harness.DefaultOverloadBound)
		var noted bool
		for _, e := range fxKinds(h, trace.KindNote) {
			if n, ok := e.Data.(*trace.Note); ok && strings.HasPrefix(n.Text, "the call would have ended as ") {
				noted = true
			}
		}
		assert.True(t, noted, "the outcome it would have had is noted")
	})
	// An agent that broke the protocol in a way no timing shapes keeps
	// its agent_error however late the harness ran: its junk may be what
	// made it late (callsim.PacingIndependent).
	t.Run("junk stays the agent's", func(t *testing.T) {
		a, err := hostile.New(hostile.Options{Behaviour: hostile.Garbage})
		require.NoError(t, err)
		t.Cleanup(a.Close)
		rt := fxNewRouter(t, url)
		rt.serve[cases[0].Scenario.ID] = a.Serve
		r := fxRunner(fxEnv(t))
		// A bound every call passes: any lateness at all is over it.
		r.OverloadBound = time.Nanosecond
		end := fxRun(t, r, rt.URL, cases)[0].History.End()
		require.NotNil(t, end)
		assert.Equal(t, trace.OutcomeAgentError, end.Outcome)
		assert.Equal(t, callsim.ReasonGarbageFrame, end.Reason)
		require.NotNil(t, end.Lateness)
		assert.Greater(t, end.Lateness.Worst, r.OverloadBound, "the harness was late by the bound's measure")
	})
	t.Run("check off", func(t *testing.T) {
		end := place(t, stall(), -1).End()
		require.NotNil(t, end)
		assert.False(t, strings.HasPrefix(end.Reason, harness.ReasonOverloaded), end.Reason)
		require.NotNil(t, end.Lateness)
		assert.Greater(t, end.Lateness.Worst, harness.DefaultOverloadBound, "still measured")
	})
	t.Run("normal", func(t *testing.T) {
		env := fxEnv(t)
		r := fxRunner(env)
		// The machine's stall counter, as the kernel would move it: a
		// tenth of every second.
		began := time.Now()
		r.Stall = func() (time.Duration, bool) { return time.Since(began) / 10, true }
		end := fxRun(t, r, url, cases)[0].History.End()
		require.NotNil(t, end)
		assert.Empty(t, end.Outcome, end.Reason)
		l := end.Lateness
		require.NotNil(t, l)
		assert.Positive(t, l.Triggers.N, "triggers measured")
		assert.Positive(t, l.Speech.N, "speech measured")
		assert.Less(t, l.Worst, harness.DefaultOverloadBound)
		assert.Equal(t, time.Duration(float64(max(l.Triggers.Max, l.Speech.Max, l.Backend.Max))/fxScale), l.Worst, "worst in script time")
		if assert.NotNil(t, l.CPUPressure) {
			assert.InDelta(t, 0.1, *l.CPUPressure, 0.02)
		}
	})
}

// lagClock is an agent clock that stalls for jump while the agent's
// first timer is pending: real time until that timer fires, jump ahead
// from then on. By the agent's reckoning that timer, and every word of an
// utterance begun before it, fired jump late: what a process starved of
// CPU that long sees when it runs again.
type lagClock struct {
	jump   time.Duration
	lagged atomic.Bool
}

func (c *lagClock) Now() time.Time {
	if c.lagged.Load() {
		return time.Now().Add(c.jump)
	}
	return time.Now()
}

func (c *lagClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, func() { c.lagged.Store(true); f() }).Stop
}

// stoppedClock is an agent clock whose time never moves: its timers fire
// in real time, and by its reckoning each fires exactly when due.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time { return time.Unix(1_800_000_000, 0) }
func (stoppedClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// A call whose in-process agent was starved past the overload bound (its
// timers and words late by its own clock) is marked overloaded like a
// call whose harness was: harness_error, the reason naming the agent,
// the outcome it would have had in a note, the agent's lateness
// recorded. With the check off it is measured, not marked; an agent
// whose clock shows no lateness is never so marked; and an agent the
// runner does not run itself has no such figure.
func TestStarvedAgentIsAnOverloadedCall(t *testing.T) {
	cases := fxCases(t, "corr-01")
	place := func(t *testing.T, clock agents.Clock, bound time.Duration, inProcess bool) *trace.CallEnd {
		cfg := agents.Careful()
		cfg.Clock = clock
		running, err := agents.Start(context.Background(), cfg, "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = running.Close() })
		r := fxRunner(fxEnv(t))
		r.OverloadBound = bound
		if inProcess {
			r.AgentLateness = running.Agent().Lateness
		}
		h := fxRun(t, r, running.URL, cases)[0].History
		end := h.End()
		require.NotNil(t, end)
		if strings.HasPrefix(end.Reason, agentOverloaded) {
			var noted bool
			for _, e := range fxKinds(h, trace.KindNote) {
				if n, ok := e.Data.(*trace.Note); ok && strings.HasPrefix(n.Text, "the call would have ended as ") {
					noted = true
				}
			}
			assert.True(t, noted, "the outcome it would have had is noted")
		}
		return end
	}
	// 3 s of real time at scale 0.05 is a minute of script time.
	t.Run("starved", func(t *testing.T) {
		end := place(t, &lagClock{jump: 3 * time.Second}, 0, true)
		assert.Equal(t, trace.OutcomeHarnessError, end.Outcome)
		assert.True(t, strings.HasPrefix(end.Reason, agentOverloaded), end.Reason)
		assert.Contains(t, end.Reason, "over the 2s bound")
		require.NotNil(t, end.AgentLateness)
		assert.Greater(t, end.AgentLateness.Worst, harness.DefaultOverloadBound)
		assert.GreaterOrEqual(t, end.AgentLateness.Timers.Max, 3*time.Second, "the first timer, late by the stall")
	})
	t.Run("check off", func(t *testing.T) {
		end := place(t, &lagClock{jump: 3 * time.Second}, -1, true)
		assert.False(t, strings.HasPrefix(end.Reason, harness.ReasonOverloaded), end.Reason)
		require.NotNil(t, end.AgentLateness)
		assert.Greater(t, end.AgentLateness.Worst, harness.DefaultOverloadBound, "still measured")
	})
	t.Run("on time", func(t *testing.T) {
		end := place(t, stoppedClock{}, 0, true)
		assert.False(t, strings.HasPrefix(end.Reason, agentOverloaded), end.Reason)
		a := end.AgentLateness
		require.NotNil(t, a)
		assert.Positive(t, a.Timers.N, "timers measured")
		assert.Positive(t, a.Speech.N, "words measured")
		assert.Zero(t, a.Timers.Max+a.Speech.Max)
		// The wire and the tool requests run in real time, on the
		// process's clock: measured, whatever the agent's clock says.
		assert.Positive(t, a.Reads.N, "the caller's frames, as the agent read them")
		assert.Positive(t, a.Sends.N, "the agent's frames, as the caller read them")
		assert.Positive(t, a.Tools.N, "tool requests' departures")
	})
	t.Run("not in process", func(t *testing.T) {
		end := place(t, &lagClock{jump: 3 * time.Second}, 0, false)
		assert.Nil(t, end.AgentLateness)
		assert.False(t, strings.HasPrefix(end.Reason, agentOverloaded), end.Reason)
	})
}

// agentOverloaded starts the reason of a call marked for its agent's lateness.
const agentOverloaded = harness.ReasonOverloaded + ": the agent in this process ran "
