package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/agents/earstt"
	lkagent "github.com/callproof/callproof/agents/livekit"
	"github.com/callproof/callproof/agents/pipecat"
	"github.com/callproof/callproof/callsim/livekit"
	"github.com/callproof/callproof/callsim/livekit/lkserver"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/internal/interop"
	"github.com/callproof/callproof/scorer"
)

// lkCoreChildTimeout bounds one configuration's child in its namespace:
// the core suite's 30 calls in real time (about 10 minutes), the calls
// placed again, the agent's starts and the stops.
const lkCoreChildTimeout = 25 * time.Minute

// lkCoreMaxBehind is how many of the suite's calls may still be behind
// real time after every placing and be left out of the verdicts (said so
// in the log); more, and the run tested too little (interop.Behind).
const lkCoreMaxBehind = 3

// envLiveKitCoreOnly, set to a list of call ids (run's --only), places
// only those calls of the suite: to look at a few calls again.
const envLiveKitCoreOnly = "CALLPROOF_LIVEKIT_CORE_ONLY"

// TestLiveKitStockCore is `callproof run --transport livekit --suite
// core` against the stock LiveKit agent (agents/livekit/agent.py, its
// tools the call's catalogue with the careful write handling), dispatched
// by name by a real LiveKit server in a network namespace of its own (as
// TestLiveKitStockAgent), its model the fake reading each conversation
// (fake_llm.py --mode conversation), hearing the caller with earstt
// (CALLPROOF_LIVEKIT_STT=pocketsphinx: with its own pocketsphinx, to
// measure it; the verdicts expected are the ear's):
//
//   - core-careful: the caller barging in interrupts the write's turn. The
//     release gate holds on every scored call.
//   - core-flawed (--no-interrupt-tools): the write disallows
//     interruptions, so a correction or a "stop" while it waits or is held
//     no longer stops it: checkLiveKitFlawed.
//
// A call the busy machine could not keep in real time is placed again
// (run --resume, the agent restarted first) up to placements runs; up to
// lkCoreMaxBehind calls still behind after that are left out, and said so.
// CALLPROOF_LIVEKIT_CORE_ONLY=corr-01,int-05 places those calls only.
// make interop only (scripts/test.sh, INTEROP_ONLY).
func TestLiveKitStockCore(t *testing.T) {
	_, _, _ = pipecatVenv(t) // installed once, before the children
	for _, careful := range []bool{true, false} {
		name := "core-flawed"
		if careful {
			name = "core-careful"
		}
		t.Run(name, func(t *testing.T) {
			if !lkserver.InNamespaceVeth(t, lkCoreChildTimeout) {
				return
			}
			ctx, python, root := pipecatVenv(t)
			calls := runLiveKitCore(ctx, t, python, root, name, careful)
			if t.Failed() {
				return
			}
			if !careful {
				checkLiveKitFlawed(t, calls)
				return
			}
			for _, id := range slices.Sorted(maps.Keys(calls)) {
				if c := calls[id]; !c.gate.Holds {
					t.Errorf("%s: the gate fails: %s", id, strings.Join(gateWhy(c), " "))
				}
			}
		})
	}
}

// runLiveKitCore starts a LiveKit server, the fake model (--mode
// conversation), earstt (unless envLiveKitSTT says pocketsphinx) and the
// stock agent in the configuration, runs the core suite over livekit, and
// returns each scored call's score and gate, the calls left behind real
// time left out. It logs what scripts/interop.sh reads, as runPipecatCore.
func runLiveKitCore(ctx context.Context, t *testing.T, python, root, name string, careful bool) map[string]pipecatCoreCall {
	t.Helper()
	started := time.Now()
	s := lkserver.Start(t)
	t.Setenv(livekit.EnvAPIKey, lkserver.APIKey)
	t.Setenv(livekit.EnvAPISecret, lkserver.APISecret)
	// Bounded by the child's own timeout, not by the venv's 20 minutes:
	// earstt serves until sctx ends, and an agent placed again late in the
	// run is started within it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lkCoreChildTimeout)
	defer cancel()
	fakeLog := filepath.Join(t.TempDir(), "fake.jsonl")
	fake, err := pipecat.StartFake(sctx, python, root, fakeLog, pipecat.Script{Conversation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = fake.Stop() }()
	speech := t.TempDir()
	cfg := lkagent.Config{InterruptTools: careful}
	stt := sttEar
	if os.Getenv(envLiveKitSTT) == sttPocketSphinx {
		stt = sttPocketSphinx
	} else {
		ear, err := earstt.Start(sctx, "127.0.0.1:0", earstt.Config{SpeechCache: speech, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer ear.Close()
		cfg.STTURL = ear.URL
	}
	start := func() *lkagent.Agent {
		actx, acancel := context.WithTimeout(sctx, 3*time.Minute)
		defer acancel()
		agent, err := lkagent.Start(actx, python, root, s.URL, lkserver.APIKey, lkserver.APISecret, fake.URL, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return agent
	}
	agent := start()
	var logs []string // the agents' logs, one per placing
	defer func() {
		if agent != nil {
			_, _ = agent.Stop()
		}
		if t.Failed() {
			logs = append(logs, agent.Log())
			t.Logf("agent log (last 20000 bytes):\n%s", tailString(strings.Join(logs, "\n--- agent restarted ---\n"), 20000))
			log, _ := os.ReadFile(fakeLog)
			t.Logf("the fake model's requests (last 20000 bytes):\n%s", tailString(string(log), 20000))
		}
	}()
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"run", "--transport", transportLiveKit, "--agent", s.URL,
		"--livekit-agent-name", lkagent.AgentName, "--out", out, "--concurrency", "1", "--suite", "core", "--speech-cache", speech}
	if only := os.Getenv(envLiveKitCoreOnly); only != "" {
		args = append(args, "--only", only)
		t.Logf("%s: placing %s only", envLiveKitCoreOnly, only)
	}
	code, stdout, stderr := fxCLI(t, args...)
	for attempt := 2; code == exitBroken && attempt <= placements; attempt++ {
		t.Logf("placing %d: exit %d: %s", attempt-1, code, strings.TrimSpace(stderr))
		// A fresh agent: no placing inherits the last one's jobs (a call's
		// room is named after the call).
		_, _ = agent.Stop()
		logs = append(logs, agent.Log())
		agent = start()
		code, stdout, stderr = fxCLI(t, "run", "--resume", out, "--concurrency", "1", "--no-preflight", "--speech-cache", speech)
	}
	if code != exitOK && code != exitBroken {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("the run's table:\n%s", stdout)
	if _, err := agent.Stop(); err != nil {
		t.Errorf("agent: %v", err)
	}
	measureSTT(t, out, stt, name, strings.Join(append(slices.Clone(logs), agent.Log()), "\n"), false)
	saved, err := harness.LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	// The calls still behind real time after every placing: no verdict to
	// check. A few are left out, and said so; more, and the run tested
	// too little.
	var behind []string
	for _, h := range callsBehind(t, saved, stderr) {
		behind = append(behind, h.Call)
	}
	if len(behind) > lkCoreMaxBehind {
		interop.Behind(t, fmt.Sprintf("placed %d times, %d calls still not kept in real time (more than %d: a machine this busy cannot measure the suite): %s",
			placements, len(behind), lkCoreMaxBehind, strings.Join(behind, ", ")))
		return nil
	}
	if len(behind) > 0 {
		t.Logf("interop: left out, still behind real time after %d placings: %s", placements, strings.Join(behind, ", "))
	}
	calls := map[string]pipecatCoreCall{}
	kept, failing := 0, 0
	for _, c := range harness.ScoreCalls(saved.Sorted()) {
		if slices.Contains(behind, c.Score.Call) {
			continue
		}
		call := pipecatCoreCall{score: c.Score, gate: harness.Gate([]harness.Call{c}, harness.Policy{})}
		calls[c.Score.Call] = call
		if c.Score.Integrity {
			kept++
		}
		verdict := "gate holds"
		if !call.gate.Holds {
			failing++
			verdict = "gate FAILS: " + strings.Join(gateWhy(call), " ")
			t.Logf("interop: %s", verdict)
		}
		t.Logf("interop livekit python %s %s: %s; %s", name, c.Score.Call, axesLine(c.Score), verdict)
	}
	t.Logf("interop: integrity %d/%d", kept, len(calls))
	if failing == 0 {
		t.Logf("interop: gate holds")
	}
	t.Logf("%s: %d calls scored, %d left out, in %v", name, len(calls), len(behind), time.Since(started).Round(time.Second))
	return calls
}

// liveKitFlawedBuckets are the root causes of a write that a barge-in did
// not stop: sent with the values the caller withdrew or replaced
// (stale_tool_args: the write waited out its grace through the change, or
// its retry after the 4 s timeout committed after it), or committed while
// held through it (inflight_not_cancelled).
var liveKitFlawedBuckets = []string{string(scorer.BucketStaleToolArgs), string(scorer.BucketInflightNotCanceled)}

// liveKitFlawedTurn are the calls whose caller barges in over the
// confirmation of a write that landed (int-01: a new date; int-02: "yes,
// go ahead"). LiveKit speaks that confirmation in the write's own turn,
// which the flawed tool made uninterruptible, so the agent talks on and
// drops what the caller says meanwhile (discard_audio_if_uninterruptible):
// int-01's change goes unheard (uncompensated_write, never_confirmed),
// int-02's yes does not matter. Pipecat's bot without cancelling holds on
// both; here they are logged, not checked.
var liveKitFlawedTurn = []string{"int-01", "int-02"}

// liveKitFlawedOpen are flawed-configuration calls whose gate may fail
// for a reason of LiveKit's, logged, not checked: int-07 (the caller says
// "yes, go ahead" while the write is held). LiveKit answers that turn
// while the uninterruptible tool call still runs, with no trace of the
// call in the model's context (Pipecat puts an IN_PROGRESS result there),
// so the model calls the write again under a new key, and the same
// effect commits twice: the gate's idempotent_retries rule fails
// (measured twice, 2026-12-03 14:33 and 14:41 UTC, the second also
// confirmation_matches_backend and verified_before_confirm).
var liveKitFlawedOpen = []string{"int-07"}

// checkLiveKitFlawed checks the flawed configuration's run: the gate
// holds on every call where the careful agent's Pipecat twin holds with
// cancel_on_interruption=False too (no barge-in while a write waits or is
// held: pipecatNoCancelBuckets lists the others), liveKitFlawedTurn and
// liveKitFlawedOpen aside;
// where it fails, the
// primary bucket is one of liveKitFlawedBuckets; int-05 ("stop" while the
// write is held) fails so; and the gate fails on at least half the
// listed calls placed. Which of those fail depends on LiveKit's turn
// taking: a correction said right after the request is one turn with it
// (the agent writes the corrected values: corr-01, corr-04 pass), and
// while its write runs uninterruptible the agent drops what the caller
// says (AgentSession's discard_audio_if_uninterruptible), so the change
// goes unheard (never_confirmed, stale_working_state as secondaries).
func checkLiveKitFlawed(t *testing.T, calls map[string]pipecatCoreCall) {
	t.Helper()
	listed, failed := 0, 0
	for _, id := range slices.Sorted(maps.Keys(calls)) {
		c := calls[id]
		_, barge := pipecatNoCancelBuckets[id]
		got := callBuckets(c.score)
		switch {
		case slices.Contains(liveKitFlawedTurn, id):
			t.Logf("%s: the gate %s (%v): its barge-in meets the write's uninterruptible turn", id, map[bool]string{true: "holds", false: "fails"}[c.gate.Holds], got)
		case slices.Contains(liveKitFlawedOpen, id):
			t.Logf("%s: the gate %s (%s): open, not checked", id, map[bool]string{true: "holds", false: "fails"}[c.gate.Holds], strings.Join(gateWhy(c), " "))
		case !barge && !c.gate.Holds:
			t.Errorf("%s: the gate fails (%s); no barge-in meets a write there", id, strings.Join(gateWhy(c), " "))
		case barge && !c.gate.Holds && (len(got) == 0 || !slices.Contains(liveKitFlawedBuckets, got[0])):
			t.Errorf("%s: buckets %v, want the primary among %v", id, got, liveKitFlawedBuckets)
		case id == "int-05" && c.gate.Holds:
			t.Errorf("%s: the gate holds; want the write held through \"stop\" to commit (%v)", id, liveKitFlawedBuckets)
		}
		if barge {
			listed++
			if !c.gate.Holds {
				failed++
			}
		}
	}
	t.Logf("the gate fails on %d of the %d calls with a barge-in while a write waits or is held", failed, listed)
	if listed > 0 && 2*failed < listed {
		t.Errorf("the gate fails on %d of the %d calls with a barge-in while a write waits or is held; want at least half", failed, listed)
	}
}
