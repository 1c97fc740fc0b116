package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/packgen"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// genericScale runs the generic agent's packs ten times faster than real
// time; genericConcurrency calls at once keep two shared cores from
// starving the agent, which runs in the test's process and whose lateness
// no spoiled-call check can see.
const (
	genericScale       = 0.1
	genericConcurrency = 8
)

// playPack plays every scenario of dir against the reference agent cfg
// over the native protocol and returns the scores, in file order.
func playPack(t *testing.T, cfg agents.Config, dir string) []harness.CallResult {
	t.Helper()
	_, cases, err := harness.LoadSuite(dir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	agent, err := agents.Start(ctx, cfg, "127.0.0.1:0")
	require.NoError(t, err)
	defer agent.Close()
	env, err := harness.NewEnv(harness.EnvOptions{})
	require.NoError(t, err)
	defer env.Close()
	r := env.Runner()
	r.Concurrency, r.TimeScale, r.Suite, r.Agent = genericConcurrency, genericScale, "generic", cfg.Name
	out, err := r.Run(ctx, agent.URL, cases)
	require.NoError(t, err)
	// A call our side spoiled (a loaded machine ran the script late, or a
	// required step's trigger never came in time) proves nothing: place it
	// again, a few times.
	for try := 0; try < 3; try++ {
		for i, c := range out {
			if !spoiled(c) {
				continue
			}
			again, err := r.Run(ctx, agent.URL, cases[i:i+1])
			require.NoError(t, err)
			out[i] = again[0]
		}
	}
	if dump := os.Getenv("GENERIC_DUMP"); dump != "" {
		// Each call's events, one a line, for reading failures.
		for _, c := range out {
			var b strings.Builder
			for _, ev := range c.History.Events {
				if strings.Contains(string(ev.Kind), "partial") || strings.Contains(string(ev.Kind), "text") {
					continue
				}
				data, _ := json.Marshal(ev.Data)
				fmt.Fprintf(&b, "%6dms %s %s\n", ev.At.Milliseconds(), ev.Kind, data)
			}
			_ = os.WriteFile(filepath.Join(dump, cfg.Name+"-"+c.Score.Scenario+".txt"), []byte(b.String()), 0o644)
			full, _ := json.Marshal(c.History)
			_ = os.WriteFile(filepath.Join(dump, cfg.Name+"-"+c.Score.Scenario+".json"), full, 0o644)
		}
	}
	return out
}

// skipSpoiled logs a call still spoiled after its tries, which proves
// nothing either way, and fails the test when more than a quarter of the
// pack's calls were.
func skipSpoiled(t *testing.T, c harness.CallResult, of int, skipped *int) bool {
	t.Helper()
	if !spoiled(c) {
		return false
	}
	t.Logf("%s: spoiled on this machine (%s), not counted", c.History.Call, c.Score.Reason)
	*skipped++
	require.LessOrEqual(t, *skipped*4, of, "too many spoiled calls: the machine is too busy")
	return true
}

// spoiled reports a call that ran at another scale than offered, was
// excluded or ended in a harness error.
func spoiled(c harness.CallResult) bool {
	end := c.History.End()
	return end == nil || end.Outcome == trace.OutcomeExcluded || end.Outcome == trace.OutcomeHarnessError || end.TimeScale != genericScale
}

// failedAxes names the axes a call failed, with their first finding.
func failedAxes(s scorer.CallScore) string {
	var out []string
	for _, a := range s.Axes {
		if a.Verdict != scorer.Pass {
			f := ""
			if len(a.Findings) > 0 {
				f = fmt.Sprintf(" (%v)", a.Findings[0])
			}
			out = append(out, string(a.Axis)+"="+string(a.Verdict)+f)
		}
	}
	return strings.Join(out, "; ")
}

// TestGenericPacksExplore plays a pack named by GENERIC_PACK against both
// generic agents and logs every verdict (a tool for reading failures).
func TestGenericPacksExplore(t *testing.T) {
	dir := os.Getenv("GENERIC_PACK")
	if dir == "" {
		t.Skip("set GENERIC_PACK=DIR to play a pack against the generic agents")
	}
	for _, name := range []string{"careful", "naive"} {
		cfg, err := agents.Named(name)
		require.NoError(t, err)
		cfg.Generic = true
		for _, c := range playPack(t, cfg, dir) {
			s := c.Score
			t.Logf("%s %-45s %-8s integrity=%v %s %s", name, s.Scenario, s.Outcome, s.Integrity, s.Primary, failedAxes(s))
		}
	}
}

// TestGenericAgentOnFamilies: the generic careful agent, which knows no
// phrase of the bookings or payments desks, passes every scenario of their
// calibration packs that an agent can pass (cal-10's backend is down for
// good).
func TestGenericAgentOnFamilies(t *testing.T) {
	if testing.Short() {
		t.Skip("plays two calibration packs")
	}
	impossible := map[string]bool{"cal-10-system-down": true}
	for _, dir := range []string{"payments/calibration/scenarios", "../testdata/calibration/scenarios"} {
		careful := agents.Careful()
		careful.Generic = true
		calls, skipped := playPack(t, careful, dir), 0
		for _, c := range calls {
			s := c.Score
			if impossible[s.Scenario] || skipSpoiled(t, c, len(calls), &skipped) {
				continue
			}
			require.True(t, s.Integrity, "careful %s: %s %s %s", s.Scenario, s.Outcome, s.Primary, failedAxes(s))
		}
	}
}

// writePack generates a pack for catalog with seed and writes it to a new
// directory.
func writePack(t *testing.T, catalog []scenarios.Tool, seed uint64, per int) string {
	t.Helper()
	files, err := packgen.Generate(catalog, packgen.Options{Rand: rand.New(rand.NewPCG(seed, seed)), PerTool: per})
	require.NoError(t, err)
	dir := t.TempDir()
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".yaml") {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
		}
	}
	return dir
}

// orderTools is the built-in order desk's catalogue in file form, for a
// pack the generic agents read without the order desk's parser.
func orderTools() []scenarios.Tool {
	var out []scenarios.Tool
	for _, t := range scenarios.OrderCatalog() {
		f := scenarios.Tool{Name: t.Name, Description: t.Description, Effect: string(t.Effect), Table: t.Table, KeyArg: t.KeyArg, Consequential: t.Consequential}
		for _, a := range t.Args {
			f.Args = append(f.Args, scenarios.Arg{Name: a.Name, Type: a.Type, Required: a.Required, Enum: a.Enum, Pattern: a.Pattern, Description: a.Description})
		}
		out = append(out, f)
	}
	return out
}

// TestGenericAgentOnGeneratedPacks is issue 23's proof: packs that
// `init --catalogue` writes, for the restaurant fixture at several seeds
// and for the order desk's catalogue (read generically),
// are passed by the generic careful agent and failed, in at least half
// their scenarios, by the generic naive agent.
func TestGenericAgentOnGeneratedPacks(t *testing.T) {
	if testing.Short() {
		t.Skip("plays generated packs")
	}
	restaurant, err := scenarios.LoadCatalogFile("../toolimport/testdata/restaurant-catalogue.yaml")
	require.NoError(t, err)
	careful, naive := agents.Careful(), agents.Naive()
	careful.Generic, naive.Generic = true, true
	for _, pack := range []struct {
		catalog []scenarios.Tool
		seed    uint64
	}{{restaurant, 1}, {restaurant, 2}, {restaurant, 3}, {orderTools(), 1}} {
		seed := pack.seed
		dir := writePack(t, pack.catalog, seed, packgen.SizeSmall)
		assertPackBites(t, careful, naive, dir, seed)
	}
}

// assertPackBites plays the pack in dir against both generic agents: every
// scenario careful plays unspoiled keeps its integrity, and naive loses it
// in at least half of them.
func assertPackBites(t *testing.T, careful, naive agents.Config, dir string, seed uint64) {
	t.Helper()
	calls, skipped := playPack(t, careful, dir), 0
	for _, c := range calls {
		s := c.Score
		if skipSpoiled(t, c, len(calls), &skipped) {
			continue
		}
		assert.True(t, s.Integrity, "seed %d: careful %s: %s %s %s", seed, s.Scenario, s.Outcome, s.Primary, failedAxes(s))
	}
	failed := 0
	for _, c := range playPack(t, naive, dir) {
		if !c.Score.Integrity {
			failed++
		}
	}
	assert.GreaterOrEqual(t, 2*failed, len(calls), "seed %d: naive failed only %d of %d", seed, failed, len(calls))
}
