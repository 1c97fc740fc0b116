package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// envPipecatVerdicts names a directory where each Pipecat call placed
// over HTTP tools (runPipecat) leaves its score, as
// WIRE-CASE.json; scripts/interop.sh sets it for its Pipecat suites, and
// TestPipecatWiresAgree compares what they left.
const envPipecatVerdicts = "CALLPROOF_PIPECAT_VERDICTS"

// pipecatWires are the wires the Pipecat bot answers, as run's
// --transport names them.
var pipecatWires = []string{transportTwilio, transportPipecatEval, transportWebRTC}

// pipecatInterop logs what scripts/interop.sh reads of one call of the
// bot (its integrity, and whether the release gate holds on it, with the
// call's buckets and the gate's failing rules, rule:NAME, when not), and
// leaves its score in $CALLPROOF_PIPECAT_VERDICTS
// for TestPipecatWiresAgree.
func pipecatInterop(t *testing.T, out, transport string, tc pipecatCase, score scorer.CallScore) {
	t.Helper()
	logInterop(t, out, score)
	dir := os.Getenv(envPipecatVerdicts)
	if dir == "" || tc.tools != "" || tc.twilioAPI {
		return
	}
	b, err := json.Marshal(score)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, transport+"-"+tc.name+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// callBuckets is a failed call's buckets, the primary first.
func callBuckets(s scorer.CallScore) []string {
	var bs []string
	if s.Primary != "" {
		bs = append(bs, string(s.Primary))
	}
	for _, b := range s.Secondary {
		bs = append(bs, string(b))
	}
	return bs
}

// pipecatVerdict is what must agree across wires for one call of one
// configuration: the outcome and the three axes the backend's ledger
// decides (tool_args_correct, stale_write_prevented, backend_correct).
// captured, active_state_correct and confirmation_matches_backend follow
// what the bot heard and what was heard of it: over audio the bot's STT
// hears the caller (earstt word for word; pocketsphinx, its alternative,
// misses "stop" and the bot answers otherwise), and over Twilio callproof
// recognizes the bot's words from its audio (docs/INTEROP.md, "The wires
// agree"), so those are logged, not compared.
func pipecatVerdict(s scorer.CallScore) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", s.Outcome)
	for _, a := range s.Axes[2:5] {
		fmt.Fprintf(&b, " %s=%s", a.Axis, a.Verdict)
	}
	return b.String()
}

// TestPipecatWiresAgree checks that the Pipecat bot's calls get the same
// verdicts over Twilio Media Streams, Pipecat's eval wire (text) and
// SmallWebRTC, call by call, for each configuration (pipecatCases): the
// outcome and the ledger's three axes (pipecatVerdict); the other three
// and the primary bucket are logged side by side. The eval wire plays
// text and cannot play noise: a call whose scenario has a noise step is
// not compared over it (noisyCore lists the core suite's). It compares
// the scores the wire suites left in $CALLPROOF_PIPECAT_VERDICTS
// (scripts/interop.sh runs them first; a call its suite skipped or
// failed is not compared, and that suite's line says why); without that
// variable it places every call over every wire itself.
// make interop only (scripts/test.sh, INTEROP_ONLY).
func TestPipecatWiresAgree(t *testing.T) {
	ctx, python, root := pipecatVenv(t)
	dir := os.Getenv(envPipecatVerdicts)
	place := dir == "" // alone: it places every call itself
	if place {
		dir = t.TempDir()
		t.Setenv(envPipecatVerdicts, dir) // the WebRTC children leave theirs here too
	}
	noisy := noisyCore(t)
	speech := t.TempDir()
	var ns, self string
	var compared atomic.Int32
	defer func() { t.Logf("interop: %d calls compared with another wire's", compared.Load()) }()
	for _, tc := range pipecatCases(root, `.*`) {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]scorer.CallScore{}
			for _, wire := range pipecatWires {
				if wire == transportPipecatEval && slices.Contains(noisy, tc.call) {
					t.Logf("%s: not over the eval wire (text cannot play its noise)", tc.call)
					continue
				}
				path := filepath.Join(dir, wire+"-"+tc.name+".json")
				if _, err := os.Stat(path); err != nil && !place {
					// Its suite failed (its own line says so) or skipped
					// the call (placed four times behind real time).
					t.Logf("%s over %s: not compared: its suite left no score", tc.name, wire)
					continue
				} else if err != nil {
					switch wire {
					case transportWebRTC:
						if ns == "" {
							ns = pipecatNetns(t)
							var err error
							if self, err = os.Executable(); err != nil {
								t.Fatal(err)
							}
						}
						runPipecatNetns(ctx, t, ns, self, tc.name)
					default:
						c := tc
						c.transport = wire
						c.show = nil // the wire's own test asserts the timeline
						sp := speech
						if wire == transportPipecatEval {
							sp = ""
						}
						runPipecat(ctx, t, python, root, sp, c)
					}
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%s over %s: %v", tc.name, wire, err)
				}
				var s scorer.CallScore
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatal(err)
				}
				got[wire] = s
			}
			for _, d := range compareWires(t, tc.name, got, &compared) {
				t.Error(d)
			}
		})
	}
	t.Run("core", func(t *testing.T) {
		if place {
			t.Skip("the core suite's runs are make interop's (TestRunEvalPipecatCore and the audio wires'): alone, this test does not place them")
		}
		for _, d := range compareCoreRuns(t, dir, &compared) {
			t.Error(d)
		}
	})
}

// compareWires says where the scores got (by wire) of one call disagree:
// the first wire with a score is the reference (pipecatVerdict).
func compareWires(t *testing.T, name string, got map[string]scorer.CallScore, compared *atomic.Int32) []string {
	t.Helper()
	var refWire string
	var diffs []string
	for _, wire := range pipecatWires {
		s, there := got[wire]
		if !there {
			continue
		}
		t.Logf("interop pipecat %s %s: %s", wire, name, axesLine(s))
		if refWire == "" {
			refWire = wire
			continue
		}
		compared.Add(1)
		if a, b := pipecatVerdict(got[refWire]), pipecatVerdict(s); a != b {
			diffs = append(diffs, fmt.Sprintf("%s: %s scored %s, %s scored %s", name, refWire, a, wire, b))
		}
	}
	return diffs
}

// rtviWires are the wires on which callproof reads the bot's words from
// its RTVI bot-output (not from its audio): with earstt giving the bot
// the caller's words as exactly as text does, a core call's whole verdict
// must agree between them (pipecatFullVerdict).
var rtviWires = []string{transportPipecatEval, transportWebRTC}

// pipecatFullVerdict is a call's whole verdict: its outcome, all six
// axes, the primary bucket and the secondary ones.
func pipecatFullVerdict(s scorer.CallScore) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", s.Outcome)
	for _, a := range s.Axes {
		fmt.Fprintf(&b, " %s=%s", a.Axis, a.Verdict)
	}
	fmt.Fprintf(&b, " buckets=%s", strings.Join(callBuckets(s), ","))
	return b.String()
}

// compareCoreRuns compares, call by call, the core suite's runs against
// the Pipecat bot that left their scores in dir (runPipecatCore:
// WIRE-CONFIG-CALL.json, CONFIG core-careful or
// core-no-cancel-on-interruption): each call of one configuration placed
// over two wires or more. The eval wire's run leaves out the noisy
// scenarios (textCore), so those are compared between the audio wires
// only.
func compareCoreRuns(t *testing.T, dir string, compared *atomic.Int32) []string {
	t.Helper()
	core, err := scenarios.Pack("core")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*-core-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]map[string]scorer.CallScore{} // CONFIG CALL -> wire -> score
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		for _, wire := range pipecatWires {
			rest, ok := strings.CutPrefix(base, wire+"-")
			if !ok {
				continue
			}
			for _, s := range core {
				config, ok := strings.CutSuffix(rest, "-"+s.ID)
				if !ok || !strings.HasPrefix(config, "core-") {
					continue
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var sc scorer.CallScore
				if err := json.Unmarshal(b, &sc); err != nil {
					t.Fatal(err)
				}
				key := config + " " + s.ID
				if runs[key] == nil {
					runs[key] = map[string]scorer.CallScore{}
				}
				runs[key][wire] = sc
			}
		}
	}
	keys := slices.Sorted(maps.Keys(runs))
	n := 0
	var diffs []string
	noisy := noisyCore(t)
	for _, k := range keys {
		got := runs[k]
		for wire, s := range got {
			if s.Outcome != trace.OutcomeScored {
				// Excluded (its trigger never fired): it tests nothing
				// there (the wire's own run left it out of its assertions).
				t.Logf("%s over %s: not compared: %s (%s)", k, wire, s.Outcome, s.Reason)
				delete(got, wire)
			}
		}
		if len(got) < 2 {
			why := "placed over one wire"
			if _, id, _ := strings.Cut(k, " "); slices.Contains(noisy, id) && got[transportPipecatEval].Call == "" {
				why += " (not over the eval wire: text cannot play its noise)"
			}
			t.Logf("%s: not compared: %s", k, why)
			continue
		}
		n++
		if config, id, _ := strings.Cut(k, " "); config == "core-no-cancel-on-interruption" {
			diffs = append(diffs, compareNoCancel(t, k, id, got, compared)...)
			continue
		}
		diffs = append(diffs, compareWires(t, k, got, compared)...)
		// Between the RTVI wires, the whole verdict.
		if a, b := got[rtviWires[0]], got[rtviWires[1]]; a.Call != "" && b.Call != "" {
			if va, vb := pipecatFullVerdict(a), pipecatFullVerdict(b); va != vb {
				diffs = append(diffs, fmt.Sprintf("%s: %s scored %s, %s scored %s", k, rtviWires[0], va, rtviWires[1], vb))
			}
		}
	}
	t.Logf("core: %d calls of %d configuration-call pairs compared over two wires or more; the eval wire does not place %s (text cannot play their noise)",
		n, len(keys), strings.Join(noisy, ", "))
	return diffs
}

// noisyCore is the core scenarios with a noise step: what the eval wire's
// text mode cannot play (docs/INTEROP.md, "Text mode cannot play noise").
func noisyCore(t *testing.T) []string {
	t.Helper()
	core, err := scenarios.Pack("core")
	if err != nil {
		t.Fatal(err)
	}
	var noisy []string
	for _, s := range core {
		c, err := scenarios.Compile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range c.Script.Steps {
			if st.Do == trace.StepNoise {
				noisy = append(noisy, s.ID)
				break
			}
		}
	}
	return noisy
}

// textActsFirst are the core scenarios whose caller corrects the request
// "right away, before any tool call" (corr-01, corr-04). Over audio the
// correction starts as the request's last word ends, inside the turn
// Pipecat has not yet closed (its VAD's stop and turn analysis come after
// the words), so the model's first call already carries the corrected
// value: nothing to cancel, the gate holds in both configurations. Over
// the eval wire each text is a turn the instant it arrives: the model
// calls at once, the correction lands during the write's grace, and
// without cancelling the stale write goes out (stale_tool_args). The
// wire's nature, not the bot's: those calls are not compared without
// cancelling.
var textActsFirst = []string{"corr-01", "corr-04"}

// noCancelVerdict is what must agree across wires for one call of the
// no-cancel-on-interruption configuration: whether the gate's stale-write
// class found it (stale_tool_args or inflight_not_cancelled, primary or
// secondary), else whether it holds. Which of the two buckets, and which
// axes fail, follows how long the caller's change takes to say: over
// audio a write the backend holds through a spoken "stop" outlasts the
// handler's 4 s timeout and its retry commits after the change
// (stale_tool_args), over text the hold ends first and the held write
// itself commits (inflight_not_cancelled; docs/INTEROP.md, "The bot's
// tool handling"). Over Twilio only the ledger's axes count (callproof
// hears the bot's words there).
func noCancelVerdict(wire string, s scorer.CallScore) string {
	for _, b := range callBuckets(s) {
		if b == string(scorer.BucketStaleToolArgs) || b == string(scorer.BucketInflightNotCanceled) {
			return "fails: a stale write"
		}
	}
	axes := s.Axes
	if wire == transportTwilio {
		axes = axes[2:5]
	}
	for _, a := range axes {
		if a.Verdict != scorer.Pass {
			return "fails: " + strings.Join(callBuckets(s), ",")
		}
	}
	return "holds"
}

// compareNoCancel says where the wires disagree on one call of the
// no-cancel-on-interruption configuration (noCancelVerdict), the calls of
// textActsFirst aside over the eval wire.
func compareNoCancel(t *testing.T, name, id string, got map[string]scorer.CallScore, compared *atomic.Int32) []string {
	t.Helper()
	var diffs []string
	refWire := ""
	for _, wire := range pipecatWires {
		s, there := got[wire]
		if !there {
			continue
		}
		t.Logf("interop pipecat %s %s: %s (%s)", wire, name, axesLine(s), noCancelVerdict(wire, s))
		if refWire == "" {
			refWire = wire
			continue
		}
		if slices.Contains(textActsFirst, id) && (refWire == transportPipecatEval || wire == transportPipecatEval) {
			t.Logf("%s: %s and %s not compared: the correction comes before any tool call over audio, after it over text (textActsFirst)", name, refWire, wire)
			continue
		}
		compared.Add(1)
		if a, b := noCancelVerdict(refWire, got[refWire]), noCancelVerdict(wire, s); a != b {
			diffs = append(diffs, fmt.Sprintf("%s: %s %s, %s %s", name, refWire, a, wire, b))
		}
	}
	return diffs
}
