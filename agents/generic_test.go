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
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/packgen"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/toolimport"
	"github.com/callproof/callproof/trace"
)

// The generic agents' packs run at a quarter of real time, twelve calls
// at once: the scripts' windows (the 1 s of quiet that ends a call, the
// 10 s a required step waits for its event, the 20 s bound of the final
// wait) are then 250 ms, 2.5 s and 5 s of real time, room enough for the
// agent, which shares the test's process and two cores and whose own
// lateness no harness check can see. A call costs the process little at
// this scale (the three pack tests took 18 s of CPU in 195 s of real time
// at six calls at once), so twelve at once keep the test's time near what
// it was at 0.1 with eight; on 2026-12-03, under a load average of 4-17
// from other runs, twelve failed no more often than six (docs/PERFORMANCE.md,
// "Generated-pack proofs"). The harness's lateness is checked: a call
// whose timers ran late is harness_error (harness.ReasonOverloaded), not
// a verdict, and is left out (leftOut), as is an excluded call. The agent acks the offered scale as the first thing
// it does, so the caller waits for that ack as long as it takes
// (genericAckWait, an ordering) rather than callsim's 300 ms, after which
// a starved agent's call would run its caller at scale 1.
const (
	genericScale       = 0.25
	genericConcurrency = 12
	genericAckWait     = 10 * time.Second
)

// playPack plays every scenario of dir against the reference agent cfg
// over the native protocol, once, and returns the results in file order.
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
	env.Simulator = callsim.New(callsim.Options{AckWait: genericAckWait})
	r := env.Runner()
	r.Concurrency, r.TimeScale, r.Suite, r.Agent = genericConcurrency, genericScale, "generic", cfg.Name
	out, err := r.Run(ctx, agent.URL, cases)
	require.NoError(t, err)
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

// leftOut says whether c is no verdict on the agent either way, and logs
// it: the harness marked it overloaded (its own timers ran late:
// harness_error, harness.ReasonOverloaded) or excluded (a required step's
// event never came in time: on a busy machine, an agent starved past the
// step timeout, 2.5 s of real time here, which no harness check sees).
// Every call must have run at the offered scale: the agent acks it, and
// the caller waits for that ack.
func leftOut(t *testing.T, c harness.CallResult) bool {
	t.Helper()
	end := c.History.End()
	require.NotNil(t, end, "%s: no call end", c.Score.Scenario)
	if end.Outcome == trace.OutcomeHarnessError && strings.HasPrefix(end.Reason, harness.ReasonOverloaded) {
		t.Logf("%s: left out, %s", c.Score.Scenario, end.Reason)
		return true
	}
	require.Equal(t, genericScale, end.TimeScale, "%s: ran at another scale (%s %s)", c.Score.Scenario, end.Outcome, end.Reason)
	if end.Outcome == trace.OutcomeExcluded {
		t.Logf("%s: left out, excluded: %s", c.Score.Scenario, end.Reason)
		return true
	}
	return false
}

// scoredCalls are the calls of a pack that are verdicts (leftOut leaves
// the others out); at least half the pack must be, or the proof would say
// nothing.
func scoredCalls(t *testing.T, calls []harness.CallResult) []harness.CallResult {
	t.Helper()
	var out []harness.CallResult
	for _, c := range calls {
		if !leftOut(t, c) {
			out = append(out, c)
		}
	}
	require.GreaterOrEqual(t, 2*len(out), len(calls), "%d of %d calls left out: the machine is too busy for this test", len(calls)-len(out), len(calls))
	return out
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
	t.Parallel() // paced by the scripts' own timing, not CPU: overlap with the other pack proofs
	impossible := map[string]bool{"cal-10-system-down": true}
	for _, dir := range []string{"payments/calibration/scenarios", "../testdata/calibration/scenarios"} {
		careful := agents.Careful()
		careful.Generic = true
		for _, c := range scoredCalls(t, playPack(t, careful, dir)) {
			s := c.Score
			if impossible[s.Scenario] {
				continue
			}
			require.True(t, s.Integrity, "careful %s: %s %s %s %s", s.Scenario, s.Outcome, s.Reason, s.Primary, failedAxes(s))
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
// `init --catalogue` writes, for the restaurant fixture (a domain no
// agent of the project knows) and for the order desk's catalogue (read
// generically), are passed by the generic careful agent and failed, in at
// least half their scenarios, by the generic naive agent. The
// restaurant's whole pack (every kind of scenario: a small pack keeps
// the first of each category in turn) is played by careful; naive plays
// its small pack. Other seeds' draws are
// TestGenericAgentOnRandomCatalogues' (the restaurant's small packs at
// seeds 2 and 3 passed too, 2026-12-03).
func TestGenericAgentOnGeneratedPacks(t *testing.T) {
	if testing.Short() {
		t.Skip("plays generated packs")
	}
	t.Parallel() // paced by the scripts' own timing, not CPU: overlap with the other pack proofs
	restaurant, err := scenarios.LoadCatalogFile("../toolimport/testdata/restaurant-catalogue.yaml")
	require.NoError(t, err)
	careful, naive := agents.Careful(), agents.Naive()
	careful.Generic, naive.Generic = true, true
	for _, pack := range []struct {
		catalog []scenarios.Tool
		seed    uint64
		whole   bool // careful plays the whole pack
	}{{restaurant, 1, true}, {orderTools(), 1, false}} {
		seed := pack.seed
		small := writePack(t, pack.catalog, seed, packgen.SizeSmall)
		if pack.whole {
			carefulPasses(t, careful, writePack(t, pack.catalog, seed, 0), seed)
			naiveFails(t, naive, small, seed)
			continue
		}
		assertPackBites(t, careful, naive, small, seed)
	}
}

// assertPackBites plays the pack in dir against both generic agents:
// careful keeps its integrity in every call that is a verdict, naive
// loses it in at least half of them, in seed 001's shape.
func assertPackBites(t *testing.T, careful, naive agents.Config, dir string, seed uint64) {
	t.Helper()
	carefulPasses(t, careful, dir, seed)
	naiveFails(t, naive, dir, seed)
}

// carefulPasses: careful keeps its integrity in every call of the pack in
// dir that is a verdict.
func carefulPasses(t *testing.T, careful agents.Config, dir string, seed uint64) {
	t.Helper()
	for _, c := range scoredCalls(t, playPack(t, careful, dir)) {
		s := c.Score
		assert.True(t, s.Integrity, "seed %d: careful %s: %s %s %s %s", seed, s.Scenario, s.Outcome, s.Reason, s.Primary, failedAxes(s))
	}
}

// naiveFails: naive loses its integrity in at least half the calls of the
// pack in dir that are verdicts, in seed 001's shape.
func naiveFails(t *testing.T, naive agents.Config, dir string, seed uint64) {
	t.Helper()
	all := playPack(t, naive, dir)
	calls := scoredCalls(t, all)
	failed := 0
	pass, prim := map[scorer.Axis]int{}, map[scorer.Bucket]int{}
	for _, c := range calls {
		if !c.Score.Integrity {
			failed++
		}
		for _, a := range c.Score.Axes {
			if a.Verdict == scorer.Pass {
				pass[a.Axis]++
			}
		}
		if c.Score.Primary != "" {
			prim[c.Score.Primary]++
		}
	}
	t.Logf("seed %d: naive of %d: axis passes %v; primaries %v", seed, len(calls), pass, prim)
	// Seed 001's shape (issue 23): naive hears the caller (the dialog
	// axes pass more often than any action axis) but acts on stale or
	// unverified values, stale tool arguments the largest bucket. A shape
	// of the whole pack: not checked when calls were left out, which a
	// busy machine leaves out by their timing, not at random.
	if len(calls) < len(all) {
		t.Logf("seed %d: naive's shape not checked: %d of %d calls left out", seed, len(all)-len(calls), len(all))
		return
	}
	for _, d := range []scorer.Axis{scorer.Captured, scorer.ActiveStateCorrect} {
		for _, a := range []scorer.Axis{scorer.ToolArgsCorrect, scorer.StaleWritePrevented, scorer.BackendCorrect, scorer.ConfirmationMatchesBackend} {
			assert.Greater(t, pass[d], pass[a], "seed %d: naive passes dialog axis %s no more often than action axis %s", seed, d, a)
		}
	}
	for b, n := range prim {
		if b != scorer.BucketStaleToolArgs {
			assert.Less(t, n, prim[scorer.BucketStaleToolArgs], "seed %d: naive's %s (%d) rivals stale_tool_args (%d) as the largest bucket", seed, b, n, prim[scorer.BucketStaleToolArgs])
		}
	}
	assert.GreaterOrEqual(t, 2*failed, len(calls), "seed %d: naive failed only %d of %d", seed, failed, len(calls))
}

// TestGenericCarefulOnBookingsPack: `init` on the bookings family's tools
// as OpenAI JSON (its guesses unreviewed), then a small pack for every
// consequential tool; the generic careful agent, which shares no code
// with the bookings desk, passes every scenario (issue 23's proof; the
// desk's one-flaw variants against the same generator are agents/bookings'
// TestGeneratedPackCatchesEachFlaw).
func TestGenericCarefulOnBookingsPack(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a generated pack")
	}
	t.Parallel() // paced by the scripts' own timing, not CPU: overlap with the other pack proofs
	data, err := os.ReadFile("../examples/tools/bookings-openai.json")
	require.NoError(t, err)
	parsed, _, err := toolimport.Parse(data)
	require.NoError(t, err)
	entries, _ := toolimport.Infer(parsed)
	var catalog []scenarios.Tool
	for _, e := range entries {
		catalog = append(catalog, e.Tool)
	}
	careful := agents.Careful()
	careful.Generic = true
	for _, c := range scoredCalls(t, playPack(t, careful, writePack(t, catalog, 1, packgen.SizeSmall))) {
		s := c.Score
		assert.True(t, s.Integrity, "careful %s: %s %s %s %s", s.Scenario, s.Outcome, s.Reason, s.Primary, failedAxes(s))
	}
}
