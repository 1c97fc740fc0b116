package callprooftest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/callprooftest"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
)

func startAgent(t *testing.T, cfg agents.Config) string {
	t.Helper()
	r, err := agents.Start(context.Background(), cfg, "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r.URL
}

// The careful reference agent through the Go test API: each call is a
// passing subtest, and the scores come back for more assertions.
func TestCarefulPassesCore(t *testing.T) {
	url := startAgent(t, agents.Careful())
	scores := callprooftest.Run(t, url, "core", callprooftest.Options{Only: []string{"corr-01", "corr-02", "int-05", "tf-06"}})
	require.Len(t, scores, 4)
	for _, s := range scores {
		assert.True(t, s.Integrity, s.Call)
		assert.Equal(t, scorer.Pass, s.Axis(scorer.StaleWritePrevented).Verdict, s.Call)
	}
}

// A failing call's message names its failing axes, its buckets and the
// events that prove them.
func TestExplainCitesTheEvents(t *testing.T) {
	url := startAgent(t, agents.Naive())
	var failed []scorer.CallScore
	scores := callprooftest.Run(t, url, "core", callprooftest.Options{Only: []string{"corr-02"},
		Passes: func(s scorer.CallScore) bool {
			if !s.Integrity {
				failed = append(failed, s)
			}
			return true // the failure is what this test reads
		}})
	require.Len(t, scores, 1)
	require.Len(t, failed, 1, "naive updates the old order in corr-02")

	// The same call again, with its history, for the message.
	_, cases, err := harness.LoadSuite("core")
	require.NoError(t, err)
	cases, err = harness.Select(cases, []string{"corr-02"})
	require.NoError(t, err)
	env, err := harness.NewEnv(harness.EnvOptions{})
	require.NoError(t, err)
	defer env.Close()
	r := env.Runner()
	r.TimeScale = callprooftest.DefaultScale
	res, err := r.Run(context.Background(), url, cases)
	require.NoError(t, err)
	msg := callprooftest.Explain(res[0].History, res[0].Score)
	t.Log(msg)
	assert.Contains(t, msg, "call corr-02 (scenario corr-02)")
	assert.Contains(t, msg, string(scorer.ToolArgsCorrect)+": fail")
	assert.Contains(t, msg, "bucket "+string(res[0].Score.Primary)+" (primary)")
	assert.Contains(t, msg, "cited events:")
	assert.Regexp(t, `#\d+ +[0-9.]+ms +backend +tool\.received`, msg)
}

// stallOnce runs with real time, but jumps ahead by 3 s once 150 ms have
// passed: the calls under way then see every timer fire a minute of
// script time late (scale 0.05); calls placed after it see no jump.
type stallOnce struct{ start time.Time }

func (c stallOnce) Now() time.Time {
	now := time.Now()
	if now.Sub(c.start) >= 150*time.Millisecond {
		return now.Add(3 * time.Second)
	}
	return now
}

// A call the harness could not keep on time is placed again, alone, and
// judged on that attempt: the agent is not failed for the machine.
func TestOverloadedCallsArePlacedAgain(t *testing.T) {
	url := startAgent(t, agents.Careful())
	scores := callprooftest.Run(t, url, "core", callprooftest.Options{Only: []string{"corr-01"}, Clock: stallOnce{start: time.Now()}})
	require.Len(t, scores, 1)
	assert.True(t, scores[0].Integrity, "%s: %s", scores[0].Outcome, scores[0].Reason)
}
