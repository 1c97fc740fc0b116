package calibration_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents/payments"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

const (
	runDir    = "run"
	scale     = 0.25
	callTries = 4 // attempts of a call our side spoiled
)

// call is one calibration call: a scenario played against a variant.
type call struct{ scenario, variant string }

func (c call) id() string { return c.scenario + "--" + c.variant }

// plan is the set, scenario by scenario.
func plan() []call {
	by := []struct {
		scenario string
		variants []string
	}{
		{"pay-01-plain-schedule", []string{"careful", "terse", "phantom", "mixup", "offbyone"}},
		{"pay-02-correct-amount", []string{"careful", "terse", "stale"}},
		{"pay-03-correct-date-during-lookup", []string{"careful", "stale"}},
		{"pay-04-correct-payee-during-lookup", []string{"careful", "stale"}},
		{"pay-05-correct-reference", []string{"careful", "stale"}},
		{"pay-06-stop-held-payment", []string{"careful", "keeper"}},
		{"pay-07-schedule-timeout", []string{"careful", "quitter", "keyless"}},
		{"pay-08-withdraw-created", []string{"careful", "terse", "keeper"}},
		{"pay-09-cancel-existing", []string{"careful", "terse", "eager"}},
		{"pay-10-update-amount-503", []string{"careful", "terse", "quitter"}},
		{"pay-11-schedule-lost-answer", []string{"careful", "keyless"}},
	}
	var out []call
	for _, s := range by {
		for _, v := range s.variants {
			out = append(out, call{s.scenario, v})
		}
	}
	return out
}

func planIDs() []string {
	var ids []string
	for _, c := range plan() {
		ids = append(ids, c.id())
	}
	return ids
}

// TestPaymentsRecord places the set over loopback, one call at a time, and
// rewrites run/ when CALIBRATION_UPDATE is set.
func TestPaymentsRecord(t *testing.T) {
	if os.Getenv("CALIBRATION_UPDATE") == "" {
		t.Skip("set CALIBRATION_UPDATE=1 to re-record run/")
	}
	_, cases, err := harness.LoadSuite("scenarios")
	require.NoError(t, err)
	byID := map[string]*scenarios.Compiled{}
	for _, c := range cases {
		byID[c.Scenario.ID] = c
	}
	line, err := payments.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = line.Close() })
	env, err := harness.NewEnv(harness.EnvOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	var all []harness.CallResult
	for _, p := range plan() {
		c, ok := byID[p.scenario]
		require.True(t, ok, "no scenario %s", p.scenario)
		sc := *c.Scenario
		sc.ID = p.id() // unique ids in the run
		cc := *c
		cc.Scenario = &sc
		var got harness.CallResult
		for try := 0; try < callTries; try++ {
			r := env.Runner()
			r.Concurrency, r.TimeScale, r.Suite, r.Agent = 1, scale, "calibration-payments", "payments/"+p.variant
			out, err := r.Run(ctx, line.URL(p.variant), []*scenarios.Compiled{&cc})
			require.NoError(t, err)
			got = out[0]
			if spoiled(got) == "" {
				break
			}
			t.Logf("%s: try %d spoiled (%s)", p.id(), try+1, spoiled(got))
		}
		require.Empty(t, spoiled(got), "%s still spoiled", p.id())
		all = append(all, got)
	}
	res, err := harness.CreateResults(runDir, harness.Meta{
		Agent: "payments (variant per call: see call.start agent)", Suite: "calibration-payments",
		TimeScale: scale, Calls: len(all), Transport: "native", Planned: planIDs(),
	})
	require.NoError(t, err)
	for _, c := range all {
		require.NoError(t, res.Add(c.History, c.Score))
		t.Logf("%-48s %-8s %s", c.History.Call, c.Score.Outcome, c.Score.Primary)
	}
	require.NoError(t, res.Finish(nil))
	require.NoError(t, res.Close())
}

// spoiled says why a call proves nothing about the agent ("" if it does).
func spoiled(c harness.CallResult) string {
	end := c.History.End()
	switch {
	case end == nil:
		return "no call.end"
	case end.Outcome == trace.OutcomeExcluded || end.Outcome == trace.OutcomeHarnessError:
		return string(end.Outcome) + ": " + end.Reason
	case end.TimeScale != scale:
		return fmt.Sprintf("ran at scale %g", end.TimeScale)
	}
	return ""
}

// TestPaymentsRunLoads: the run holds every planned call once, in order,
// each played by its variant and scored.
func TestPaymentsRunLoads(t *testing.T) {
	meta, err := harness.ReadMeta(runDir)
	require.NoError(t, err)
	require.Equal(t, planIDs(), meta.Planned)
	hs, err := harness.ReadRun(runDir + "/" + harness.RunFile)
	require.NoError(t, err)
	require.Len(t, hs, len(plan()))
	for i, h := range hs {
		require.Equal(t, planIDs()[i], h.Call)
		require.Equal(t, "payments/"+plan()[i].variant, h.Start().Agent, h.Call)
		require.Contains(t, []string{"", "scored"}, string(h.End().Outcome), h.Call)
	}
}
