package calibrate

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/scorer"
)

func score(call string, primary scorer.Bucket, verdicts ...scorer.Verdict) scorer.CallScore {
	s := scorer.CallScore{Call: call, Primary: primary}
	for i, a := range scorer.Axes() {
		s.Axes = append(s.Axes, scorer.AxisResult{Axis: a, Verdict: verdicts[i]})
	}
	return s
}

const labels = `calls:
  - id: a
    axes: {captured: pass, active_state_correct: pass, tool_args_correct: pass, stale_write_prevented: pass, backend_correct: pass, confirmation_matches_backend: pass}
    bucket: none
  - id: b
    axes: {captured: pass, active_state_correct: pass, tool_args_correct: fail, stale_write_prevented: fail, backend_correct: fail, confirmation_matches_backend: either}
    bucket: stale_tool_args
`

func TestCompareAgreement(t *testing.T) {
	l, err := Parse([]byte(labels), "l.yaml")
	require.NoError(t, err)
	P, F, U := scorer.Pass, scorer.Fail, scorer.Unknown
	r := Compare(l, []scorer.CallScore{score("a", "", P, P, P, P, P, P), score("b", scorer.BucketStaleToolArgs, P, P, F, F, F, U)})
	assert.True(t, r.Perfect())
	assert.Equal(t, 12, r.Cells)
	assert.Equal(t, 1.0, r.Kappa)
	assert.Zero(t, r.FalsePasses)

	r = Compare(l, []scorer.CallScore{score("a", "", P, F, P, U, P, P), score("b", scorer.BucketInflightNotCanceled, P, P, F, P, F, F)})
	assert.False(t, r.Perfect())
	assert.Equal(t, 1, r.FalsePasses)
	assert.Equal(t, 1, r.FalseFailures)
	assert.Equal(t, 1, r.Unknown)
	assert.Equal(t, 1, r.BucketAgree)
	assert.Equal(t, 9, r.Agree)
	kinds := map[string]int{}
	for _, c := range r.Disagreements {
		kinds[c.Kind]++
	}
	assert.Equal(t, map[string]int{"false_pass": 1, "false_failure": 1, "unknown": 1, "bucket": 1}, kinds)
	assert.Contains(t, r.Text(), "false_pass")
}

func TestCompareMissingAndUnlabelled(t *testing.T) {
	l, err := Parse([]byte(labels), "l.yaml")
	require.NoError(t, err)
	P := scorer.Pass
	r := Compare(l, []scorer.CallScore{score("a", "", P, P, P, P, P, P), score("z", "", P, P, P, P, P, P)})
	assert.Equal(t, []string{"b"}, r.Missing)
	assert.Equal(t, []string{"z"}, r.Unlabelled)
	assert.False(t, r.Perfect())
}

// TestKappa checks Cohen's kappa on a textbook table: 20 pass/pass,
// 5 pass/fail, 10 fail/pass, 15 fail/fail gives po 0.7, pe 0.5, kappa 0.4.
func TestKappa(t *testing.T) {
	c := &confusion{}
	for i := 0; i < 20; i++ {
		c.add("pass", "pass")
	}
	for i := 0; i < 5; i++ {
		c.add("pass", "fail")
	}
	for i := 0; i < 10; i++ {
		c.add("fail", "pass")
	}
	for i := 0; i < 15; i++ {
		c.add("fail", "fail")
	}
	assert.InDelta(t, 0.4, c.kappa(), 1e-9)
	one := &confusion{}
	one.add("pass", "pass")
	assert.Equal(t, 1.0, one.kappa())
	bad := &confusion{}
	bad.add("pass", "fail")
	bad.add("pass", "fail")
	assert.False(t, math.IsNaN(bad.kappa()))
	assert.Equal(t, 1.0, (&confusion{}).kappa())
}

func TestParseErrors(t *testing.T) {
	in := `calls:
  - id: a
    axes: {captured: maybe, active_state_correct: pass}
    bucket: nope
  - id: a
    axes: {captured: pass, active_state_correct: pass, tool_args_correct: pass, stale_write_prevented: pass, backend_correct: pass, confirmation_matches_backend: pass, vibes: pass}
`
	_, err := Parse([]byte(in), "l.yaml")
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`l.yaml:2: calls[0]: axes.captured: "maybe" is not pass, fail or either`,
		"l.yaml:2: calls[0]: axes.tool_args_correct: missing",
		`l.yaml:2: calls[0]: bucket: unknown bucket "nope"`,
		`l.yaml:5: calls[1]: id: "a" already labelled at line 2`,
		"l.yaml:5: calls[1]: axes.vibes: unknown axis",
	} {
		assert.Contains(t, msg, want)
	}
	_, err = Parse([]byte("calls: []\nextra: 1\n"), "x.yaml")
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "extra"), err.Error())
	_, err = Parse([]byte("calls: []\n"), "x.yaml")
	assert.ErrorContains(t, err, "no calls labelled")
}
