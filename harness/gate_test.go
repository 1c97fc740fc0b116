package harness_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// The gate tests are pure: scores and histories are built by hand so each
// rule is exercised on exactly the fact it reads. Helpers of these unit
// tests (gate, results, suite, runner, misbehave) are prefixed "fx" so they
// cannot collide with the package's other test files.

// passingScore is a scored call with all six axes passing.
// fxScore is a passing score whose inferred challenge is kind; its
// category label says something else on purpose: the gate must not read it.
func fxScore(call, kind string) scorer.CallScore {
	s := scorer.CallScore{Call: call, Scenario: call, Category: "label-not-read", Challenge: scorer.ChallengeKind(kind), Outcome: trace.OutcomeScored, Integrity: true}
	for _, a := range scorer.Axes() {
		s.Axes = append(s.Axes, scorer.AxisResult{Axis: a, Verdict: scorer.Pass})
	}
	return s
}

// withAxis returns s with one axis set to v (and integrity lost unless pass).
func fxWithAxis(s scorer.CallScore, a scorer.Axis, v scorer.Verdict) scorer.CallScore {
	axes := make([]scorer.AxisResult, len(s.Axes))
	copy(axes, s.Axes)
	for i := range axes {
		if axes[i].Axis == a {
			axes[i] = scorer.AxisResult{Axis: a, Verdict: v, Findings: []scorer.Finding{{Text: "because", Events: []int{7}}}}
		}
	}
	s.Axes = axes
	if v != scorer.Pass {
		s.Integrity = false
	}
	return s
}

// hist wraps events between a call.start carrying the order catalogue
// (update_order, ship_order consequential; get_order a read) and a call.end,
// numbering them.
func fxHist(call string, evs ...trace.Event) *trace.History {
	all := []trace.Event{{Source: trace.SourceHarness, Kind: trace.KindCallStart,
		Data: &trace.CallStart{Schema: trace.SchemaVersion, ScenarioID: call, Tools: scenarios.OrderCatalog()}}}
	all = append(all, evs...)
	all = append(all, trace.Event{Source: trace.SourceHarness, Kind: trace.KindCallEnd, Data: &trace.CallEnd{}})
	for i := range all {
		all[i].Call, all[i].Seq = call, i+1
	}
	return &trace.History{Call: call, Events: all}
}

func fxTool(kind trace.Kind, ref, tool, key string, status int) trace.Event {
	d := &trace.ToolEvent{Ref: ref, Tool: tool, IdempotencyKey: key, Status: status,
		Args: map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"}}
	if kind == trace.KindToolCommitted {
		d.Table, d.Key = "orders", "5590"
		d.After = map[string]string{"delivery_date": "2026-12-03"}
	}
	return trace.Event{Source: trace.SourceBackend, Kind: kind, Data: d}
}

// write is one keyed update_order that commits and answers 200.
func fxWrite(ref, key string) []trace.Event {
	return []trace.Event{
		fxTool(trace.KindToolReceived, ref, "update_order", key, 0),
		fxTool(trace.KindToolCommitted, ref, "update_order", key, 0),
		fxTool(trace.KindToolResponded, ref, "update_order", key, 200),
	}
}

// delete is fxWrite whose commit removed the record.
func fxDelete(ref, key string) []trace.Event {
	evs := fxWrite(ref, key)
	evs[1].Data.(*trace.ToolEvent).Deleted = true
	return evs
}

// read is one get_order answered with status.
func fxRead(ref string, status int) []trace.Event {
	return []trace.Event{
		fxTool(trace.KindToolReceived, ref, "get_order", "", 0),
		fxTool(trace.KindToolResponded, ref, "get_order", "", status),
	}
}

func fxSpeech(kind trace.Kind, utt string) trace.Event {
	return trace.Event{Source: trace.SourceAgent, Kind: kind, Data: &trace.AgentSpeech{Utterance: utt, Text: "Done. Order 5590 now has delivery date December 3."}}
}

// confirm is one whole agent utterance.
func fxConfirm(utt string) []trace.Event {
	return []trace.Event{fxSpeech(trace.KindAgentSpeechStart, utt), fxSpeech(trace.KindAgentSpeechEnd, utt)}
}

func fxCat(parts ...[]trace.Event) []trace.Event {
	var out []trace.Event
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// goodHistory: keyed write, read-back, then the confirmation.
func fxGood(call string) *trace.History {
	return fxHist(call, fxCat(fxWrite("r1", "k1"), fxRead("r2", 200), fxConfirm("a1"))...)
}

func fxRule(t *testing.T, g harness.GateResult, r harness.Rule) harness.RuleResult {
	t.Helper()
	for _, rr := range g.Rules {
		if rr.Rule == r {
			return rr
		}
	}
	require.Failf(t, "rule missing", "gate has no rule %s: %+v", r, g.Rules)
	return harness.RuleResult{}
}

func TestGateHoldsForCleanCalls(t *testing.T) {
	calls := []harness.Call{
		{History: fxGood("c1"), Score: fxScore("c1", "correction")},
		{History: fxGood("c2"), Score: fxScore("c2", "tool_failure")},
	}
	g := harness.Gate(calls, harness.Policy{})
	assert.True(t, g.Holds)
	assert.False(t, g.Broken)
	// Without a policy exactly the seed's four rules are judged, in order.
	var names []harness.Rule
	for _, r := range g.Rules {
		names = append(names, r.Rule)
		assert.True(t, r.Holds, r.Rule)
		assert.Empty(t, r.Violations, r.Rule)
	}
	assert.Equal(t, []harness.Rule{harness.RuleNoStaleWrite, harness.RuleConfirmationMatches, harness.RuleIdempotentRetries, harness.RuleVerifiedBeforeConfirm}, names)
}

func TestGateNoStaleWrite(t *testing.T) {
	for _, tc := range []struct {
		category string
		verdict  scorer.Verdict
		holds    bool
	}{
		{"correction", scorer.Fail, false},
		{"negation", scorer.Fail, false},
		{"interruption", scorer.Fail, false},
		{"interruption", scorer.Unknown, false}, // no evidence is not a pass
		{"correction", scorer.Pass, true},
		// Outside the three categories the axis is not this rule's business.
		{"tool_failure", scorer.Fail, true},
		{"combined", scorer.Unknown, true},
	} {
		t.Run(tc.category+"/"+string(tc.verdict), func(t *testing.T) {
			s := fxWithAxis(fxScore("c1", tc.category), scorer.StaleWritePrevented, tc.verdict)
			g := harness.Gate([]harness.Call{{History: fxGood("c1"), Score: s}}, harness.Policy{})
			r := fxRule(t, g, harness.RuleNoStaleWrite)
			assert.Equal(t, tc.holds, r.Holds)
			assert.Equal(t, tc.holds, g.Holds)
			if !tc.holds {
				require.Len(t, r.Violations, 1)
				v := r.Violations[0]
				assert.Equal(t, "c1", v.Call)
				assert.Contains(t, v.Text, string(tc.verdict))
				assert.Contains(t, v.Text, "because", "the finding explains the violation")
				assert.Equal(t, []int{7}, v.Events)
			}
		})
	}
}

func TestGateConfirmationMatchesBackend(t *testing.T) {
	for _, v := range []scorer.Verdict{scorer.Fail, scorer.Unknown} {
		t.Run(string(v), func(t *testing.T) {
			s := fxWithAxis(fxScore("c1", "tool_failure"), scorer.ConfirmationMatchesBackend, v)
			g := harness.Gate([]harness.Call{{History: fxGood("c1"), Score: s}}, harness.Policy{})
			r := fxRule(t, g, harness.RuleConfirmationMatches)
			assert.False(t, r.Holds)
			assert.False(t, g.Holds)
			require.Len(t, r.Violations, 1)
			assert.Contains(t, r.Violations[0].Text, string(v))
			// The other rules are untouched by this axis.
			assert.True(t, fxRule(t, g, harness.RuleNoStaleWrite).Holds)
		})
	}
	// Axes the seed rules do not read cannot break the gate on their own.
	s := fxWithAxis(fxScore("c1", "correction"), scorer.Captured, scorer.Fail)
	assert.True(t, harness.Gate([]harness.Call{{History: fxGood("c1"), Score: s}}, harness.Policy{}).Holds)
}

func TestGateIdempotentRetries(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *trace.History
		want []string // substrings, one per violation
	}{
		{"keyed once", fxGood("c1"), nil},
		{"unkeyed consequential call", fxHist("c1", fxCat(fxWrite("r1", ""), fxRead("r2", 200), fxConfirm("a1"))...),
			[]string{"r1 update_order sent without an Idempotency-Key"}},
		// A retry under a fresh key that the backend applied again.
		{"same effect committed twice", fxHist("c1", fxCat(fxWrite("r1", "k1"), fxWrite("r2", "k2"), fxRead("r3", 200), fxConfirm("a1"))...),
			[]string{"committed 2 times"}},
		{"both", fxHist("c1", fxCat(fxWrite("r1", ""), fxWrite("r2", ""), fxRead("r3", 200), fxConfirm("a1"))...),
			[]string{"r1 update_order sent without", "r2 update_order sent without", "committed 2 times"}},
		// Reads are not consequential: they need no key.
		{"unkeyed read", fxHist("c1", fxCat(fxRead("r0", 200), fxWrite("r1", "k1"), fxRead("r2", 200), fxConfirm("a1"))...), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := harness.Gate([]harness.Call{{History: tc.h, Score: fxScore("c1", "tool_failure")}}, harness.Policy{})
			r := fxRule(t, g, harness.RuleIdempotentRetries)
			require.Len(t, r.Violations, len(tc.want), "%+v", r.Violations)
			assert.Equal(t, len(tc.want) == 0, r.Holds)
			assert.Equal(t, len(tc.want) == 0, g.Holds)
			for i, w := range tc.want {
				assert.Contains(t, r.Violations[i].Text, w)
				assert.NotEmpty(t, r.Violations[i].Events, "a violation points at its events")
			}
		})
	}
}

func TestGateVerifiedBeforeConfirm(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *trace.History
		want string // "" holds
	}{
		{"read between write and confirmation", fxGood("c1"), ""},
		{"no read", fxHist("c1", fxCat(fxWrite("r1", "k1"), fxConfirm("a1"))...), "without reading"},
		{"read before the write does not count", fxHist("c1", fxCat(fxRead("r0", 200), fxWrite("r1", "k1"), fxConfirm("a1"))...), "without reading"},
		{"failed read does not count", fxHist("c1", fxCat(fxWrite("r1", "k1"), fxRead("r2", 404), fxConfirm("a1"))...), "without reading"},
		{"a delete reads back as not found", fxHist("c1", fxCat(fxDelete("r1", "k1"), fxRead("r2", 404), fxConfirm("a1"))...), ""},
		{"an unread delete", fxHist("c1", fxCat(fxDelete("r1", "k1"), fxConfirm("a1"))...), "without reading"},
		{"read after the confirmation does not count", fxHist("c1", fxCat(fxWrite("r1", "k1"), fxConfirm("a1"), fxRead("r2", 200))...), "without reading"},
		{"confirmation started before the write's result", fxHist("c1", fxCat(
			[]trace.Event{fxTool(trace.KindToolReceived, "r1", "update_order", "k1", 0), fxSpeech(trace.KindAgentSpeechStart, "a1")},
			[]trace.Event{fxTool(trace.KindToolCommitted, "r1", "update_order", "k1", 0), fxTool(trace.KindToolResponded, "r1", "update_order", "k1", 200)},
			fxRead("r2", 200),
			[]trace.Event{fxSpeech(trace.KindAgentSpeechEnd, "a1")})...), "before the write"},
		// Nothing consequential happened: nothing to verify.
		{"no write", fxHist("c1", fxCat(fxRead("r1", 200), fxConfirm("a1"))...), ""},
		// Speech only before the write is no confirmation; the confirmation axis judges a silent agent.
		{"no confirmation after the write", fxHist("c1", fxCat(fxConfirm("a0"), fxWrite("r1", "k1"))...), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := harness.Gate([]harness.Call{{History: tc.h, Score: fxScore("c1", "tool_failure")}}, harness.Policy{})
			r := fxRule(t, g, harness.RuleVerifiedBeforeConfirm)
			if tc.want == "" {
				assert.True(t, r.Holds, "%+v", r.Violations)
				return
			}
			assert.False(t, r.Holds)
			assert.False(t, g.Holds)
			require.Len(t, r.Violations, 1)
			assert.Contains(t, r.Violations[0].Text, tc.want)
			assert.Len(t, r.Violations[0].Events, 2, "the write and the confirmation")
		})
	}
}

func TestGateHarnessErrorIsBroken(t *testing.T) {
	// Scored the real way, so its axes are the unknowns a broken call gets.
	h := fxHist("c2", fxCat(fxWrite("r1", ""), fxConfirm("a1"))...)
	h.Events[len(h.Events)-1].Data = &trace.CallEnd{Outcome: trace.OutcomeHarnessError, Reason: "mock backend unreachable: connection refused"}
	broken := scorer.Score(h)
	require.Equal(t, trace.OutcomeHarnessError, broken.Outcome)
	g := harness.Gate([]harness.Call{
		{History: fxGood("c1"), Score: fxScore("c1", "correction")},
		{History: h, Score: broken},
	}, harness.Policy{})
	assert.True(t, g.Broken)
	assert.False(t, g.Holds, "a broken run never holds")
	assert.Contains(t, g.Reason, "c2")
	assert.Contains(t, g.Reason, "mock backend")
	// The broken call's unknown axes are not charged to the agent as violations.
	for _, r := range g.Rules {
		assert.Empty(t, r.Violations, r.Rule)
	}
}

func TestGateSkipsExcludedCalls(t *testing.T) {
	ex := fxWithAxis(fxScore("c1", "correction"), scorer.StaleWritePrevented, scorer.Unknown)
	ex.Outcome = trace.OutcomeExcluded
	g := harness.Gate([]harness.Call{{History: fxHist("c1", fxCat(fxWrite("r1", ""), fxConfirm("a1"))...), Score: ex}}, harness.Policy{})
	assert.True(t, g.Holds)
	assert.False(t, g.Broken)
}

func TestGatePolicyTightens(t *testing.T) {
	one, half := 1.0, 0.5
	zero := 0
	agentErr := fxWithAxis(fxScore("c2", "correction"), scorer.Captured, scorer.Fail)
	agentErr.Outcome = trace.OutcomeAgentError
	calls := []harness.Call{
		{History: fxGood("c1"), Score: fxScore("c1", "correction")},
		{History: fxGood("c2"), Score: agentErr},
	}
	require.True(t, harness.Gate(calls, harness.Policy{}).Holds, "the seed rules alone hold")

	t.Run("min_integrity", func(t *testing.T) {
		g := harness.Gate(calls, harness.Policy{MinIntegrity: &one})
		r := fxRule(t, g, harness.RuleMinIntegrity)
		assert.False(t, g.Holds)
		require.Len(t, r.Violations, 1)
		assert.Contains(t, r.Violations[0].Text, "1 / 2")
		assert.True(t, harness.Gate(calls, harness.Policy{MinIntegrity: &half}).Holds, "1 of 2 meets 0.5")
	})
	t.Run("min_axis", func(t *testing.T) {
		g := harness.Gate(calls, harness.Policy{MinAxis: map[scorer.Axis]float64{scorer.Captured: 1, scorer.BackendCorrect: 1}})
		r := fxRule(t, g, harness.RuleMinAxis)
		assert.False(t, g.Holds)
		require.Len(t, r.Violations, 1, "only captured falls short")
		assert.Contains(t, r.Violations[0].Text, "captured 1 / 2")
		assert.True(t, harness.Gate(calls, harness.Policy{MinAxis: map[scorer.Axis]float64{scorer.Captured: 0.5}}).Holds)
	})
	t.Run("max_agent_errors", func(t *testing.T) {
		g := harness.Gate(calls, harness.Policy{MaxAgentErrors: &zero})
		r := fxRule(t, g, harness.RuleMaxAgentErrors)
		assert.False(t, g.Holds)
		require.Len(t, r.Violations, 1)
		assert.Contains(t, r.Violations[0].Text, "1 agent errors")
		oneErr := 1
		assert.True(t, harness.Gate(calls, harness.Policy{MaxAgentErrors: &oneErr}).Holds)
	})
	t.Run("stale_write_challenges", func(t *testing.T) {
		tf := []harness.Call{{History: fxGood("c1"), Score: fxWithAxis(fxScore("c1", "tool_failure"), scorer.StaleWritePrevented, scorer.Fail)}}
		require.True(t, harness.Gate(tf, harness.Policy{}).Holds)
		g := harness.Gate(tf, harness.Policy{StaleWriteChallenges: []scorer.ChallengeKind{scorer.ChallengeToolFailure}})
		assert.False(t, g.Holds)
		assert.False(t, fxRule(t, g, harness.RuleNoStaleWrite).Holds)
		// Adding a kind never removes the seed's own ones.
		corr := []harness.Call{{History: fxGood("c1"), Score: fxWithAxis(fxScore("c1", "correction"), scorer.StaleWritePrevented, scorer.Fail)}}
		assert.False(t, harness.Gate(corr, harness.Policy{StaleWriteChallenges: []scorer.ChallengeKind{scorer.ChallengeToolFailure}}).Holds)
	})
}

func TestLoadPolicy(t *testing.T) {
	p, err := harness.LoadPolicy(filepath.Join("testdata", "policy_tight.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []scorer.ChallengeKind{scorer.ChallengeToolFailure}, p.StaleWriteChallenges)
	require.NotNil(t, p.MinIntegrity)
	assert.Equal(t, 1.0, *p.MinIntegrity)
	assert.Equal(t, map[scorer.Axis]float64{scorer.Captured: 0.95}, p.MinAxis)
	require.NotNil(t, p.MaxAgentErrors)
	assert.Equal(t, 0, *p.MaxAgentErrors)

	for _, tc := range []struct{ file, want string }{
		{"policy_unknown_key.yaml", "disable_rules"},
		{"policy_unknown_axis.yaml", `unknown axis "politeness"`},
		{"policy_axis_range.yaml", "min_axis.captured: 1.5 is not a rate"},
		{"policy_integrity_range.yaml", "min_integrity: -0.1 is not a rate"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			_, err := harness.LoadPolicy(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), path), "the error names the file: %v", err)
		})
	}
	_, err = harness.LoadPolicy(filepath.Join("testdata", "no-such-policy.yaml"))
	assert.Error(t, err)
}

func TestSortViolations(t *testing.T) {
	v := []harness.Violation{
		{Rule: harness.RuleVerifiedBeforeConfirm, Call: "a"},
		{Rule: harness.RuleIdempotentRetries, Call: "b"},
		{Rule: harness.RuleIdempotentRetries, Call: "a"},
	}
	harness.SortViolations(v)
	assert.Equal(t, []harness.Violation{
		{Rule: harness.RuleIdempotentRetries, Call: "a"},
		{Rule: harness.RuleIdempotentRetries, Call: "b"},
		{Rule: harness.RuleVerifiedBeforeConfirm, Call: "a"},
	}, v)
}
