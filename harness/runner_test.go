package harness_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// fxScale keeps live calls short: every caller-side duration shrinks 20x.
const fxScale = 0.05

// fxEnv starts a mock backend on loopback for the test.
func fxEnv(t *testing.T) *harness.Env {
	t.Helper()
	env, err := harness.NewEnv(harness.EnvOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Close() })
	return env
}

// fxCareful serves the careful reference agent on loopback for the test.
func fxCareful(t *testing.T) string {
	t.Helper()
	running, err := agents.Start(context.Background(), agents.Careful(), "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = running.Close() })
	return running.URL
}

// fxCases loads the named core scenarios.
func fxCases(t *testing.T, only ...string) []*scenarios.Compiled {
	t.Helper()
	_, cases, err := harness.LoadSuite("core")
	require.NoError(t, err)
	cases, err = harness.Select(cases, only)
	require.NoError(t, err)
	return cases
}

func fxRunner(env *harness.Env) *harness.Runner {
	r := env.Runner()
	r.TimeScale, r.Suite, r.Agent = fxScale, "core", "under-test"
	return r
}

func fxRun(t *testing.T, r *harness.Runner, url string, cases []*scenarios.Compiled) []harness.CallResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := r.Run(ctx, url, cases)
	require.NoError(t, err)
	require.Len(t, out, len(cases))
	return out
}

func fxGate(res []harness.CallResult) harness.GateResult {
	calls := make([]harness.Call, len(res))
	for i, c := range res {
		calls[i] = harness.Call{History: c.History, Score: c.Score}
	}
	return harness.Gate(calls, harness.Policy{})
}

func fxKinds(h *trace.History, k trace.Kind) []trace.Event {
	var out []trace.Event
	for _, e := range h.Events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// fxAssertShape checks what every history must look like whatever happened:
// call.start first, call.end last, and the backend snapshot whenever the
// backend opened the call.
func fxAssertShape(t *testing.T, h *trace.History) {
	t.Helper()
	fxAssertFrame(t, h)
	assert.Len(t, fxKinds(h, trace.KindSnapshot), 1, h.Call)
}

func fxAssertFrame(t *testing.T, h *trace.History) {
	t.Helper()
	require.NotEmpty(t, h.Events)
	assert.Equal(t, trace.KindCallStart, h.Events[0].Kind, h.Call)
	assert.Equal(t, trace.KindCallEnd, h.Events[len(h.Events)-1].Kind, h.Call)
	assert.Len(t, fxKinds(h, trace.KindCallStart), 1, h.Call)
	assert.Len(t, fxKinds(h, trace.KindCallEnd), 1, h.Call)
	for i, e := range h.Events {
		assert.Equal(t, i+1, e.Seq, "%s: seq numbers run 1..n", h.Call)
		assert.Equal(t, h.Call, e.Call)
	}
}

func TestRunnerCarefulAgent(t *testing.T) {
	env := fxEnv(t)
	url := fxCareful(t)
	cases := fxCases(t, "corr-02", "int-05", "tf-07")
	dir := t.TempDir()
	res, err := harness.CreateResults(dir, harness.Meta{Agent: url, Suite: "core", TimeScale: fxScale, Calls: len(cases)})
	require.NoError(t, err)

	r := fxRunner(env)
	r.Concurrency, r.Results = 2, res
	type tick struct{ done, total int }
	var ticks []tick
	progressed := map[string]bool{}
	r.Progress = func(done, total int, s scorer.CallScore) {
		ticks = append(ticks, tick{done, total}) // the runner serialises Progress
		progressed[s.Scenario] = true
	}
	out := fxRun(t, r, url, cases)
	require.NoError(t, res.Close())

	assert.Equal(t, []tick{{1, 3}, {2, 3}, {3, 3}}, ticks, "one Progress call per call")
	assert.Equal(t, map[string]bool{"corr-02": true, "int-05": true, "tf-07": true}, progressed)

	for i, c := range out {
		h := c.History
		require.NotNil(t, h)
		assert.Equal(t, cases[i].Scenario.ID, h.Call, "results in suite order")
		fxAssertShape(t, h)
		st := h.Start()
		require.NotNil(t, st)
		assert.Equal(t, "core", st.Suite)
		assert.Equal(t, "under-test", st.Agent)
		assert.Equal(t, "native", st.Transport)
		assert.Equal(t, fxScale, st.TimeScale)
		assert.Equal(t, cases[i].Seed, st.Seed, "no override: the scenario's seed")
		assert.Equal(t, string(cases[i].Scenario.Category), st.Category)
		// The careful agent acks the offered scale and behaves: the call is
		// scored, not an error either side.
		end := h.End()
		require.NotNil(t, end)
		assert.Empty(t, end.Outcome, "%s ended %s: %s", h.Call, end.Outcome, end.Reason)
		assert.Equal(t, fxScale, end.TimeScale, "the agent acked the offered scale")
		assert.Equal(t, trace.OutcomeScored, c.Score.Outcome, c.Score.Reason)
		assert.Equal(t, scorer.Score(h), c.Score, "the result carries the history's own score")
		assert.NotEmpty(t, fxKinds(h, trace.KindToolReceived), "%s: the agent reached the backend", h.Call)
	}
	g := fxGate(out)
	assert.False(t, g.Broken, g.Reason)

	// The results directory holds exactly these calls, histories and
	// scores in the same order.
	hs, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
	require.NoError(t, err)
	ss, err := harness.ReadScores(filepath.Join(dir, harness.ScoresFile))
	require.NoError(t, err)
	require.Len(t, hs, 3)
	require.Len(t, ss, 3)
	var got []string
	for i, h := range hs {
		got = append(got, h.Call)
		assert.Equal(t, h.Call, ss[i].Call)
		assert.Equal(t, scorer.Score(h), ss[i], "saved scores re-score from saved histories")
	}
	assert.ElementsMatch(t, []string{"corr-02", "int-05", "tf-07"}, got)
}

func TestRunnerNeedsItsParts(t *testing.T) {
	_, err := (&harness.Runner{}).Run(context.Background(), "ws://127.0.0.1:1/", nil)
	assert.Error(t, err)
}

// fxAssertBroken: every call is a harness error naming the mock backend,
// scored as nothing, and the gate says the run is broken.
func fxAssertBroken(t *testing.T, out []harness.CallResult) {
	t.Helper()
	for _, c := range out {
		fxAssertFrame(t, c.History) // no snapshot when the backend could not open the call
		end := c.History.End()
		require.NotNil(t, end)
		assert.Equal(t, trace.OutcomeHarnessError, end.Outcome, "%s: %s", c.History.Call, end.Reason)
		assert.Contains(t, end.Reason, "mock backend", c.History.Call)
		assert.Equal(t, trace.OutcomeHarnessError, c.Score.Outcome)
		assert.False(t, c.Score.Integrity)
		assert.Empty(t, c.Score.Primary, "no root cause is charged to the agent")
		for _, a := range c.Score.Axes {
			assert.Equal(t, scorer.Unknown, a.Verdict, "%s %s", c.History.Call, a.Axis)
		}
	}
	g := fxGate(out)
	assert.True(t, g.Broken)
	assert.False(t, g.Holds)
	assert.Contains(t, g.Reason, "harness error")
	var scores []scorer.CallScore
	for _, c := range out {
		scores = append(scores, c.Score)
	}
	assert.Len(t, harness.Failed(scores), len(out), "--rerun-failed picks them up")
}

func TestRunnerBackendDeadBeforeCalls(t *testing.T) {
	env := fxEnv(t)
	url := fxCareful(t)
	require.NoError(t, env.Backend.Close())
	r := fxRunner(env)
	r.Seed = 42
	out := fxRun(t, r, url, fxCases(t, "corr-02", "tf-07"))
	fxAssertBroken(t, out)
	for _, c := range out {
		assert.Equal(t, int64(42), c.History.Start().Seed, "the override is recorded even for a broken call")
	}
}

// fxKillTransport closes the mock backend the first time the agent speaks
// on any call: the backend dies while calls are in progress.
type fxKillTransport struct {
	callsim.Transport
	once *sync.Once
	kill func()
}

func (k fxKillTransport) Dial(ctx context.Context, url string) (callsim.Conn, error) {
	c, err := k.Transport.Dial(ctx, url)
	if err != nil {
		return nil, err
	}
	return fxKillConn{Conn: c, k: k}, nil
}

type fxKillConn struct {
	callsim.Conn
	k fxKillTransport
}

func (c fxKillConn) Recv(ctx context.Context) (callsim.Frame, error) {
	f, err := c.Conn.Recv(ctx)
	if err == nil && f.Message.Event == native.EventAgentSpeech {
		c.k.once.Do(c.k.kill)
	}
	return f, err
}

func TestRunnerBackendDiesMidCall(t *testing.T) {
	env := fxEnv(t)
	url := fxCareful(t)
	killed := make(chan struct{})
	r := fxRunner(env)
	r.Concurrency = 3
	r.Transport = fxKillTransport{Transport: env.Transport, once: &sync.Once{}, kill: func() {
		// Off the caller's read loop, so the close cannot wait on it.
		go func() {
			defer close(killed)
			_ = env.Backend.Close()
		}()
	}}
	out := fxRun(t, r, url, fxCases(t, "corr-02", "int-05", "tf-07"))
	select {
	case <-killed:
	default:
		require.Fail(t, "the agent never spoke, so the backend was never killed")
	}
	fxAssertBroken(t, out)
	for _, c := range out {
		reason := c.History.End().Reason
		// A call that was open when the backend died says it became
		// unreachable (and keeps its snapshot); one whose turn came after
		// could not be opened at all. Both name the mock backend.
		assert.True(t, strings.HasPrefix(reason, "mock backend"), reason)
		if strings.HasPrefix(reason, "mock backend unreachable") {
			fxAssertShape(t, c.History)
		}
	}
}

// A run cancelled by the user (Ctrl-C) proves nothing about the agent: the
// calls it cut short, or never placed, are harness errors.
func TestRunnerCancelledRunIsNotTheAgentsFault(t *testing.T) {
	env := fxEnv(t)
	url := fxCareful(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := fxRunner(env).Run(ctx, url, fxCases(t, "corr-02", "tf-07"))
	require.NoError(t, err)
	require.Len(t, out, 2)
	for _, c := range out {
		fxAssertFrame(t, c.History) // never placed: no backend, no snapshot
		end := c.History.End()
		assert.Equal(t, trace.OutcomeHarnessError, end.Outcome, end.Reason)
		assert.Equal(t, harness.ReasonCancelled, end.Reason)
	}
	assert.True(t, fxGate(out).Broken)
}

// Cancelled mid-run (Ctrl-C), a run stops within seconds: calls under way
// and calls not yet placed are recorded as cancelled harness errors, and
// the completion marker lists them, so the run reads as cut short.
func TestRunnerCancelMidRunStopsPromptly(t *testing.T) {
	env := fxEnv(t)
	url := fxCareful(t)
	cases := fxCases(t, "corr-01", "corr-02", "int-05", "tf-06")
	dir := t.TempDir()
	res, err := harness.CreateResults(dir, harness.Meta{Suite: "core", Planned: harness.Plan(cases)})
	require.NoError(t, err)
	r := fxRunner(env)
	r.TimeScale, r.Concurrency, r.Results = 1, 1, res // real time: each call takes seconds
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	out, err := r.Run(ctx, url, cases)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second, "a cancelled run stops within seconds")
	require.NoError(t, res.Close())
	require.Len(t, out, len(cases))
	for _, c := range out {
		end := c.History.End()
		assert.Equal(t, trace.OutcomeHarnessError, end.Outcome, c.History.Call)
		assert.Equal(t, harness.ReasonCancelled, end.Reason, c.History.Call)
	}
	run, err := harness.LoadRun(dir)
	require.NoError(t, err)
	require.NotNil(t, run.Done)
	assert.Equal(t, []string{"corr-01", "corr-02", "int-05", "tf-06"}, run.Done.Cancelled)
	c := harness.CheckCompleteness(run)
	assert.True(t, c.CutShort)
	assert.NotNil(t, harness.GateRun(run, harness.Policy{}).Incomplete)
}

// startTimes records when each call dials, then dials as its Transport.
type startTimes struct {
	callsim.Transport
	mu sync.Mutex
	at []time.Time
}

func (s *startTimes) Dial(ctx context.Context, url string) (callsim.Conn, error) {
	s.mu.Lock()
	s.at = append(s.at, time.Now())
	s.mu.Unlock()
	return s.Transport.Dial(ctx, url)
}

// Ramp spreads the first wave's starts evenly: four calls over 600 ms
// start about 150 ms apart, not in one instant.
func TestRunnerRampSpreadsStarts(t *testing.T) {
	url := fxCareful(t)
	env := fxEnv(t)
	r := fxRunner(env)
	st := &startTimes{Transport: r.Transport}
	r.Transport, r.Concurrency, r.Ramp = st, 4, 600*time.Millisecond
	fxRun(t, r, url, fxCases(t, "corr-01", "corr-02", "int-05", "tf-06"))
	require.Len(t, st.at, 4)
	slices.SortFunc(st.at, func(a, b time.Time) int { return a.Compare(b) })
	assert.GreaterOrEqual(t, st.at[3].Sub(st.at[0]), 400*time.Millisecond, "the last starts at 3/4 of the ramp (450ms)")
	for i := 1; i < 4; i++ {
		assert.GreaterOrEqual(t, st.at[i].Sub(st.at[i-1]), 100*time.Millisecond, "start %d", i)
	}
}
