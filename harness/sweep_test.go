package harness_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
)

// The documented limits of a sweep (docs/CLI.md): at most 200 values,
// none beyond a step's 10 minutes; plain numbers are milliseconds.
func TestParseSweepParamLimits(t *testing.T) {
	p, err := harness.ParseSweepParam("correct.delay=0..199/1")
	require.NoError(t, err)
	assert.Len(t, p.Values(), harness.MaxSweepPoints)
	assert.Equal(t, 199*time.Millisecond, p.To)
	assert.Equal(t, 200, harness.MaxSweepPoints)

	for in, why := range map[string]string{
		"correct.delay=0..200/1":       "201 values: at most 200",
		"correct.delay=0s..11m/1m":     "beyond the 10m0s a step may take",
		"correct.delay=-5..5/1":        "cannot be negative",
		"correct.delay=5..1/1":         "TO is before FROM",
		"correct.delay=0..5/0":         "BY must be positive",
		"correct.volume=0..5/1":        `field "volume" is not one of`,
		"correct.delay=0..5":           "no '/BY' step",
		"delay=0..5/1":                 "not STEP.FIELD",
		"correct.delay=soon..later/1s": `"soon" is not a duration`,
	} {
		_, err := harness.ParseSweepParam(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), why, in)
		}
	}
}

// Apply changes a copy: the suite's scenario stays as loaded, and an
// unknown step is an error naming the steps there are.
func TestSweepApply(t *testing.T) {
	_, cases, err := harness.LoadSuite("core")
	require.NoError(t, err)
	c := cases[1] // corr-02
	p, err := harness.ParseSweepParam("nope.delay=0..100/100")
	require.NoError(t, err)
	_, err = p.Apply(c, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `scenario corr-02 has no step "nope" (its steps: `)

	step := c.Script.Steps[1].ID
	before := c.Script.Steps[1].On.Delay
	p, err = harness.ParseSweepParam(step + ".delay=0..700/700")
	require.NoError(t, err)
	ps, at, err := harness.SweepPlacements(c, p, 2)
	require.NoError(t, err)
	require.Len(t, ps, 4)
	assert.Equal(t, []time.Duration{0, 0, 700 * time.Millisecond, 700 * time.Millisecond}, at)
	assert.Equal(t, "corr-02.delay700ms.t2", ps[3].CallID())
	assert.Equal(t, 700*time.Millisecond, ps[3].Case.Script.Steps[1].On.Delay)
	assert.Equal(t, before, c.Script.Steps[1].On.Delay, "the loaded scenario is unchanged")
}
