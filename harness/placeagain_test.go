package harness_test

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// armedStall is stallClock while armed, and real time once disarmed: the
// runner's clock for a call whose first attempt stalls past the overload
// bound and whose next one does not. It is disarmed from Runner.Replaced,
// which runs after the first attempt ended and before the next begins:
// an ordering, not a margin.
type armedStall struct {
	stall stallClock
	armed atomic.Bool
}

func (c *armedStall) Now() time.Time {
	if c.armed.Load() {
		return c.stall.Now()
	}
	return time.Now()
}

// A call callproof itself ran late in is placed again at once, up to
// Replace times: the attempt that counts is in the run's files, every
// earlier one in the attempts file, and Replaced is told of each. A call
// still late after its last placing stays harness_error; Replace 0 places
// nothing again.
func TestLateCallIsPlacedAgain(t *testing.T) {
	url := fxCareful(t)
	cases := fxCases(t, "corr-01")
	place := func(t *testing.T, replace int, disarm bool) (*harness.Runner, *trace.History, []scorer.CallScore, string) {
		dir := t.TempDir()
		res, err := harness.CreateResults(dir, harness.Meta{Suite: "core", Planned: harness.Plan(cases)})
		require.NoError(t, err)
		clock := &armedStall{stall: stallClock{jump: 3 * time.Second}}
		clock.armed.Store(true)
		var told []scorer.CallScore
		r := fxRunner(fxEnv(t))
		r.Clock, r.Results, r.Replace = clock, res, replace
		r.Replaced = func(s scorer.CallScore, attempt int) {
			told = append(told, s)
			assert.Equal(t, len(told), attempt, "attempts numbered from 1")
			if disarm {
				clock.armed.Store(false)
			}
		}
		out := fxRun(t, r, url, cases)
		require.NoError(t, res.Close())
		assert.Equal(t, len(told), res.Attempts())
		return r, out[0].History, told, dir
	}
	attempts := func(t *testing.T, dir string) []*trace.History {
		hs, err := harness.ReadRun(filepath.Join(dir, harness.AttemptsFile))
		require.NoError(t, err)
		return hs
	}

	t.Run("late once", func(t *testing.T) {
		_, h, told, dir := place(t, 1, true)
		end := h.End()
		require.NotNil(t, end)
		assert.Empty(t, end.Outcome, "the second placing is scored: %s", end.Reason)
		require.Len(t, told, 1)
		assert.Equal(t, "corr-01", told[0].Call)
		assert.True(t, harness.RanLate(told[0]), told[0].Reason)
		earlier := attempts(t, dir)
		require.Len(t, earlier, 1)
		assert.Equal(t, "corr-01", earlier[0].Call)
		assert.True(t, strings.HasPrefix(earlier[0].End().Reason, harness.ReasonOverloaded), earlier[0].End().Reason)
		kept, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
		require.NoError(t, err)
		require.Len(t, kept, 1, "the run's files hold the attempt that counts, once")
		assert.Empty(t, kept[0].End().Outcome)
	})
	t.Run("late every time", func(t *testing.T) {
		_, h, told, dir := place(t, 2, false)
		end := h.End()
		require.NotNil(t, end)
		assert.Equal(t, trace.OutcomeHarnessError, end.Outcome)
		assert.True(t, strings.HasPrefix(end.Reason, harness.ReasonOverloaded), end.Reason)
		assert.Len(t, told, 2, "placed three times in all")
		assert.Len(t, attempts(t, dir), 2)
	})
	t.Run("off", func(t *testing.T) {
		_, h, told, dir := place(t, 0, true)
		assert.Equal(t, trace.OutcomeHarnessError, h.End().Outcome)
		assert.Empty(t, told)
		_, err := harness.ReadRun(filepath.Join(dir, harness.AttemptsFile))
		assert.Error(t, err, "no attempts file")
	})
}

// Only callproof's own lateness places a call again: a dead backend, a
// cancelled run and the agent's own errors are not helped by it.
func TestRanLate(t *testing.T) {
	for _, c := range []struct {
		outcome trace.Outcome
		reason  string
		want    bool
	}{
		{trace.OutcomeHarnessError, callsim.ReasonBehind + ": frames up to 75ms late (p99 7ms), over the 60ms jitter allowance", true},
		{trace.OutcomeHarnessError, harness.ReasonOverloaded + ": a timer ran 3s late", true},
		{trace.OutcomeHarnessError, harness.ReasonCancelled, false},
		{trace.OutcomeHarnessError, "mock backend unreachable: connection refused", false},
		{trace.OutcomeAgentError, callsim.ReasonBehind, false},
		{trace.OutcomeScored, "", false},
	} {
		got := harness.RanLate(scorer.CallScore{Outcome: c.outcome, Reason: c.reason})
		assert.Equal(t, c.want, got, "%s %q", c.outcome, c.reason)
	}
}

// docs/CLI.md states --place-again's default and bound; they are the
// code's.
func TestPlaceAgainDocs(t *testing.T) {
	assertDocValues(t, "../docs/CLI.md", map[string]any{
		"harness.DefaultPlaceAgain": int64(harness.DefaultPlaceAgain),
		"harness.MaxPlaceAgain":     int64(harness.MaxPlaceAgain),
	})
}
