package calibration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents/bookings"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// Where the calibration set lives, from this package's directory.
const (
	dataDir     = "../../../testdata/calibration"
	scaleRecord = 0.25
	concurrency = 6 // calls at once
	tries       = 4 // attempts of a call our side spoiled
)

// pair is one calibration call: a scenario played against a variant.
type pair struct{ scenario, variant string }

// id is the call id in the run: scenario id, "--", variant.
func (p pair) id() string { return p.scenario + "--" + p.variant }

// plan is the calibration set, by scenario.
func plan() []pair {
	by := []struct {
		scenario string
		variants []string
	}{
		{"cal-01-plain-reschedule", []string{"steady", "stale"}},
		{"cal-02-correct-date-during-lookup", []string{"steady", "stale", "mender"}},
		{"cal-03-correct-party-held-write", []string{"steady", "sticky", "stale"}},
		{"cal-04-stop-held-reschedule", []string{"steady", "sticky", "mender"}},
		{"cal-05-stop-after-landed", []string{"mender", "steady"}},
		{"cal-06-stop-after-pending", []string{"mender", "steady"}},
		{"cal-07-wrong-record-lookup", []string{"steady", "trusting", "mender"}},
		{"cal-08-wrong-record-then-hangup", []string{"steady", "trusting"}},
		{"cal-09-reschedule-503-once", []string{"steady", "quitter", "eager"}},
		{"cal-10-system-down", []string{"steady", "quitter"}},
		{"cal-11-book-lost-answer", []string{"steady", "keyless", "phantom"}},
		{"cal-12-book-duplicate-delivery", []string{"steady", "keyless"}},
		{"cal-13-book-timeout", []string{"steady", "keyless"}},
		{"cal-14-held-reschedule", []string{"eager", "steady"}},
		{"cal-15-noise-during-readback", []string{"jumpy", "steady"}},
		{"cal-16-noise-during-confirmation", []string{"jumpy", "mender"}},
		{"cal-17-negate-held-cancel", []string{"steady", "sticky"}},
		{"cal-18-refund-amount-correction", []string{"steady", "stale"}},
		{"cal-19-book-correct-party-held", []string{"steady", "sticky", "stale"}},
		{"cal-20-plain-book", []string{"steady", "phantom"}},
	}
	var out []pair
	for _, s := range by {
		for _, v := range s.variants {
			out = append(out, pair{s.scenario, v})
		}
	}
	return out
}

// planIDs are the call ids in plan order.
func planIDs() []string {
	var ids []string
	for _, p := range plan() {
		ids = append(ids, p.id())
	}
	return ids
}

// TestCalibrationRecord plays the calibration set over loopback and
// rewrites testdata/calibration/run when CALIBRATION_UPDATE is set.
func TestCalibrationRecord(t *testing.T) {
	if os.Getenv("CALIBRATION_UPDATE") == "" {
		t.Skip("set CALIBRATION_UPDATE=1 to re-record testdata/calibration/run")
	}
	_, cases, err := harness.LoadSuite(filepath.Join(dataDir, "scenarios"))
	require.NoError(t, err)
	byID := map[string]*scenarios.Compiled{}
	for _, c := range cases {
		byID[c.Scenario.ID] = c
	}

	desk, err := bookings.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = desk.Close() })
	env, err := harness.NewEnv(harness.EnvOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	all := make([]harness.CallResult, len(plan()))
	errs := make([]error, len(plan()))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, p := range plan() {
		c, ok := byID[p.scenario]
		require.True(t, ok, "plan names a scenario that is not in the directory: %s", p.scenario)
		// The call id is the scenario id plus the variant, so ids are
		// unique in the run.
		sc := *c.Scenario
		sc.ID = p.id()
		cc := *c
		cc.Scenario = &sc
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			all[i], errs[i] = recordCall(t, ctx, env, desk.URL(p.variant), p.variant, &cc)
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	var spoiled []string
	for _, c := range all {
		if why := spoiledBy(c); why != "" {
			spoiled = append(spoiled, c.History.Call+": "+why)
		}
	}
	require.Empty(t, spoiled, "calls still spoiled after %d tries (machine too loaded?)", tries)

	dir := filepath.Join(dataDir, "run")
	res, err := harness.CreateResults(dir, harness.Meta{
		Agent: "bookings (variant per call: see call.start agent)", Suite: "calibration",
		TimeScale: scaleRecord, Calls: len(all), Transport: "native", Planned: planIDs(),
	})
	require.NoError(t, err)
	for _, c := range all {
		require.NoError(t, res.Add(c.History, c.Score))
		t.Logf("%-52s %-9s %s", c.History.Call, c.Score.Outcome, strings.TrimSpace(string(c.Score.Primary)))
	}
	require.NoError(t, res.Finish(nil))
	require.NoError(t, res.Close())
}

// recordCall places one call, again when our side spoiled it.
func recordCall(t *testing.T, ctx context.Context, env *harness.Env, url, variant string, c *scenarios.Compiled) (harness.CallResult, error) {
	var last harness.CallResult
	for i := 0; i < tries; i++ {
		r := env.Runner()
		r.Concurrency, r.TimeScale, r.Suite, r.Agent = 1, scaleRecord, "calibration", "bookings/"+variant
		out, err := r.Run(ctx, url, []*scenarios.Compiled{c})
		if err != nil {
			return last, fmt.Errorf("%s: %w", c.Scenario.ID, err)
		}
		last = out[0]
		why := spoiledBy(last)
		if why == "" {
			return last, nil
		}
		t.Logf("%s: try %d spoiled (%s), placing it again", c.Scenario.ID, i+1, why)
	}
	return last, nil
}

// spoiledBy says why a call proves nothing about the agent: it ran at
// another scale than offered (the ack came late on a loaded machine), a
// required step never fired, or the harness failed. "" for a good call.
func spoiledBy(c harness.CallResult) string {
	end := c.History.End()
	switch {
	case end == nil:
		return "no call.end"
	case end.Outcome == trace.OutcomeExcluded || end.Outcome == trace.OutcomeHarnessError:
		return string(end.Outcome) + ": " + end.Reason
	case end.TimeScale != scaleRecord:
		return fmt.Sprintf("ran at scale %g", end.TimeScale)
	}
	return ""
}

// TestCalibrationRunLoads: the recorded run holds every planned call once,
// each scored or at least complete (never a harness error or exclusion).
func TestCalibrationRunLoads(t *testing.T) {
	dir := filepath.Join(dataDir, "run")
	meta, err := harness.ReadMeta(dir)
	require.NoError(t, err)
	require.Equal(t, planIDs(), meta.Planned)
	hs, err := harness.ReadRun(filepath.Join(dir, harness.RunFile))
	require.NoError(t, err)
	require.Len(t, hs, len(plan()))
	for i, h := range hs {
		require.Equal(t, planIDs()[i], h.Call)
		st := h.Start()
		require.NotNil(t, st, "%s: no call.start", h.Call)
		v := plan()[i].variant
		require.Equal(t, "bookings/"+v, st.Agent, "%s", h.Call)
		end := h.End()
		require.NotNil(t, end, "%s: no call.end", h.Call)
		require.Contains(t, []string{"", "scored"}, string(end.Outcome), "%s: outcome %s (%s)", h.Call, end.Outcome, end.Reason)
	}
}
