package harness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

// A replay keeps the recorded calendar; a history recorded before calls
// had one replays with the defaults.
func TestReplayCaseCalendar(t *testing.T) {
	c := fxHostileCase(t, "replay-cal", "call: {date: 2026-12-07, time_zone: America/New_York}")
	start := func(date, zone string) *trace.History {
		return &trace.History{Call: "x", Events: []trace.Event{{Seq: 1, Kind: trace.KindCallStart, Data: &trace.CallStart{
			ScenarioID: c.Scenario.ID, Script: c.Script, Tools: c.Tools, Records: c.Records, Seed: c.Seed,
			CallDate: date, TimeZone: zone}}}}
	}
	got, _, err := harness.ReplayCase(start("2026-12-07", "America/New_York"), nil)
	require.NoError(t, err)
	assert.Equal(t, [2]string{"2026-12-07", "America/New_York"}, [2]string{got.CallDate, got.TimeZone})
	got, _, err = harness.ReplayCase(start("", ""), []*scenarios.Compiled{c})
	require.NoError(t, err)
	assert.Equal(t, [2]string{scenarios.DefaultCallDate, scenarios.DefaultTimeZone}, [2]string{got.CallDate, got.TimeZone})
}

// A scenario's hash changes with its calendar, and stays what it was
// for a scenario at the defaults.
func TestScenarioHashCalendar(t *testing.T) {
	plain := fxHostileCase(t, "hash-cal", "")
	dflt := fxHostileCase(t, "hash-cal", "call: {date: "+scenarios.DefaultCallDate+", time_zone: "+scenarios.DefaultTimeZone+"}")
	dated := fxHostileCase(t, "hash-cal", "call: {date: 2026-12-07}")
	assert.Equal(t, harness.ScenarioHash(plain), harness.ScenarioHash(dflt))
	assert.NotEqual(t, harness.ScenarioHash(plain), harness.ScenarioHash(dated))
}
