package harness_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// relabelled returns a deep copy of h whose call.start says another
// scenario id, category and suite: labels a user may choose freely.
func relabelled(tb testing.TB, h *trace.History, i int) *trace.History {
	tb.Helper()
	b, err := json.Marshal(h.Events)
	require.NoError(tb, err)
	var evs []trace.Event
	require.NoError(tb, json.Unmarshal(b, &evs))
	cp := &trace.History{Call: h.Call, Events: evs}
	st := cp.Start()
	require.NotNil(tb, st)
	cats := []string{"tool_failure", "dtmf", "combined", "", "correction", "interruption", "negation"}
	st.Category = cats[i%len(cats)]
	st.ScenarioID = fmt.Sprintf("renamed-%03d", i)
	st.Suite = "relabelled"
	return cp
}

// verdictsOnly blanks a score's copied labels so two scores compare on
// what the scorer decided.
func verdictsOnly(s scorer.CallScore) scorer.CallScore {
	s.Scenario, s.Category = "", ""
	return s
}

// TestRelabelNeverChangesVerdicts runs both packs against both reference
// agents, then relabels every scenario: scores and gate results must be
// identical, and no failed call is ever unclassified.
func TestRelabelNeverChangesVerdicts(t *testing.T) {
	env := liveEnv(t)
	var cases []*scenarios.Compiled
	for _, pack := range []string{"core", "extended"} {
		_, cs, err := harness.LoadSuite(pack)
		require.NoError(t, err)
		cases = append(cases, cs...)
	}
	for _, cfg := range []agents.Config{agents.Careful(), agents.Naive()} {
		t.Run(cfg.Name, func(t *testing.T) {
			run := liveJudged(t, env, cfg, cases, 32)
			var orig, moved []harness.Call
			for i, c := range run.Results {
				assert.NotEqual(t, scorer.BucketUnclassified, c.Score.Primary, "%s: unclassified", c.Score.Call)
				assert.NotContains(t, c.Score.Secondary, scorer.BucketUnclassified, "%s", c.Score.Call)
				orig = append(orig, harness.Call{History: c.History, Score: c.Score})
				h := relabelled(t, c.History, i)
				moved = append(moved, harness.Call{History: h, Score: scorer.Score(h)})
			}
			for i := range orig {
				assert.Equal(t, verdictsOnly(orig[i].Score), verdictsOnly(moved[i].Score), "%s", orig[i].Score.Call)
			}
			g1, g2 := harness.Gate(orig, harness.Policy{}), harness.Gate(moved, harness.Policy{})
			assert.Equal(t, g1, g2, "gate results differ after relabelling")
			if cfg.Name == "naive" {
				assert.False(t, g1.Holds)
			} else {
				assert.True(t, g1.Holds, "%+v", g1)
			}
		})
	}
}
