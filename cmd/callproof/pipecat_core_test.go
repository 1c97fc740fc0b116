package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callproof/callproof/agents/earstt"
	"github.com/callproof/callproof/agents/pipecat"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// TestRunEvalPipecatCore is `callproof run --transport pipecat-eval
// --suite core` against the Pipecat bot (agents/pipecat), its model the
// fake reading each conversation (fake_llm.py --mode conversation: it acts
// on the caller's words so far and the tool results, like the careful
// reference agent), its tools the call's catalogue with bot.py's careful
// handling. In text the caller cannot make a sound: the scenarios with a
// noise step (noisyCore: int-08, int-09, int-10) are not placed.
//
//   - careful: Pipecat's default cancel_on_interruption=True. The release
//     gate holds on every call.
//   - no-cancel-on-interruption: a caller who stops or corrects the
//     request while its write waits or is held at the backend no longer
//     cancels it: the gate fails on exactly the calls of
//     pipecatNoCancelBuckets, with those buckets, and holds on the rest.
//
// make interop only (scripts/test.sh, INTEROP_ONLY): each is a whole suite
// in real time (27 calls, 6-8 min here).
func TestRunEvalPipecatCore(t *testing.T) {
	ctx, python, root := pipecatVenv(t)
	only := textCore(t)
	t.Run("careful", func(t *testing.T) {
		calls := runPipecatCore(ctx, t, python, root, "", pipecatCoreRun{
			name: "core-careful", transport: transportPipecatEval, cancel: true, only: only})
		checkCarefulCore(t, calls)
	})
	t.Run("no-cancel-on-interruption", func(t *testing.T) {
		calls := runPipecatCore(ctx, t, python, root, "", pipecatCoreRun{
			name: "core-no-cancel-on-interruption", transport: transportPipecatEval, cancel: false, only: only})
		checkNoCancelBuckets(t, calls, pipecatNoCancelBuckets)
	})
}

// TestRunAudioPipecatCore is the core suite against the Pipecat bot as
// TestRunEvalPipecatCore runs it, over the audio wires: Twilio Media
// Streams and SmallWebRTC (in a network namespace, as
// TestRunWebRTCPipecatBot), every scenario (the noise ones included), the
// bot hearing the caller with earstt. It logs each call's verdicts and
// the gate's, for make interop's lines. Over SmallWebRTC it asserts them
// as TestRunEvalPipecatCore does: careful, the gate holds on every scored
// call (checkCarefulCore); without cancelling, it fails on the calls of
// pipecatNoCancelBucketsAudio with their buckets (checkNoCancelBuckets); and
// confirmation_matches_backend is decided on every call in which the bot
// confirmed (runPipecatCore). Over Twilio it asserts the same gate and
// buckets, but the bot's words are only its audio, which callproof's
// recognizer may not vouch for: a call the gate fails only for that
// (undecidedByEar) is left out and named, at most maxUndecidedByEar of
// them (checkTwilioCore). make interop only.
func TestRunAudioPipecatCore(t *testing.T) {
	runs := []pipecatCoreRun{
		{name: "core-careful", cancel: true},
		{name: "core-no-cancel-on-interruption", cancel: false},
	}
	wires := []string{transportTwilio, transportWebRTC}
	if os.Getenv(envPipecatNetns) != "" {
		// The child, inside the namespace: one run (-test.run).
		ctx, python, root := pipecatVenv(t)
		for _, r := range runs {
			r.transport = transportWebRTC
			t.Run(transportWebRTC+"-"+r.name, func(t *testing.T) {
				calls := runPipecatCore(ctx, t, python, root, t.TempDir(), r)
				if r.cancel {
					checkCarefulCore(t, calls)
				} else {
					checkNoCancelBuckets(t, calls, pipecatNoCancelBucketsAudio)
				}
			})
		}
		return
	}
	ctx, python, root := pipecatVenv(t)
	for _, w := range wires {
		for _, r := range runs {
			r.transport = w
			name := w + "-" + r.name
			t.Run(name, func(t *testing.T) {
				if w == transportWebRTC {
					self, err := os.Executable()
					if err != nil {
						t.Fatal(err)
					}
					// Bounded by its own 28 min (under make interop's
					// -timeout 30m), not by the venv's 20.
					runInNetnsFor(context.WithoutCancel(ctx), t, pipecatNetns(t), self, "TestRunAudioPipecatCore", name, audioCoreBound)
					return
				}
				checkTwilioCore(t, r, runPipecatCore(ctx, t, python, root, t.TempDir(), r))
			})
		}
	}
}

// maxUndecidedByEar bounds the calls a Twilio core run may leave out
// because callproof's recognizer could not vouch for the bot's words
// (undecidedByEar): a fifth of the suite. More, and the run says too
// little of the bot to pass. These are calls in which the caller
// withdraws the request and the bot answers "Okay, I won't make any
// change. Nothing was changed on order 5590." (flite kal16 through 8 kHz
// μ-law: corr-09, corr-10, int-03, int-05 in the runs measured), heard as "okay
// while won't make undid today and nothing was changed on order 5509
// didn't" (docs/INTEROP.md, "Over Twilio, asserted").
const maxUndecidedByEar = 6

// undecidedByEar: the gate fails on c only because callproof's own
// recognizer could not vouch for the bot's words: no axis fails, no
// bucket, and some utterance of the bot's was recorded unclear (its
// unknown confirmation, and the capture its words would have shown).
// Callproof's limit, never a verdict on the bot.
func undecidedByEar(c pipecatCoreCall) bool {
	if c.gate.Holds || c.unclear == 0 || c.score.Primary != "" || len(c.score.Secondary) > 0 {
		return false
	}
	for _, a := range c.score.Axes {
		if a.Verdict == scorer.Fail {
			return false
		}
	}
	return true
}

// leaveOutUnheard reports whether a call of run r is left out of the
// assertions and of make interop's gate line as undecidedByEar: over
// Twilio only, and without cancel-on-interruption only a call meant to
// hold (one of pipecatNoCancelBucketsAudio fails on the ledger, whatever
// was heard of the bot).
func leaveOutUnheard(r pipecatCoreRun, c pipecatCoreCall) bool {
	_, fails := pipecatNoCancelBucketsAudio[c.score.Call]
	return r.transport == transportTwilio && (r.cancel || !fails) && undecidedByEar(c)
}

// checkTwilioCore asserts a Twilio core run as the SmallWebRTC runs are
// (checkCarefulCore; checkNoCancelBuckets with
// pipecatNoCancelBucketsAudio), the calls leaveOutUnheard left out
// aside, at most maxUndecidedByEar of them.
func checkTwilioCore(t *testing.T, r pipecatCoreRun, calls map[string]pipecatCoreCall) {
	t.Helper()
	unheard := 0
	for _, c := range calls {
		if c.unheard {
			unheard++
		}
	}
	if unheard > maxUndecidedByEar {
		t.Errorf("%d calls left out whose bot words callproof could not vouch for, at most %d: the run says too little of the bot", unheard, maxUndecidedByEar)
	}
	if r.cancel {
		checkCarefulCore(t, calls)
	} else {
		checkNoCancelBuckets(t, calls, pipecatNoCancelBucketsAudio)
	}
}

// pipecatNoCancelBuckets is what the gate finds, call by call, when the
// bot's writes run on through a barge-in (cancel_on_interruption=False):
// the primary bucket first, then the secondary ones. A correction or a
// "stop" while the write waits out the bot's grace (corr-01/02/04/05/07/09,
// int-03, int-04) no longer cancels it: the write built from the withdrawn
// values is sent anyway (stale_tool_args). One while the backend holds the
// write (corr-03/06/08, int-06: a new value; corr-10, int-05: a "stop")
// lets it commit after the change (inflight_not_cancelled; the model puts
// the record back once it hears the write landed, which the gate still
// counts). The other calls hold: int-01 and int-02 barge in after the
// write landed, int-07 only confirms the held write, and the tool-failure
// calls have no barge-in.
var pipecatNoCancelBuckets = map[string][]string{
	"corr-01": {"stale_tool_args"},
	"corr-02": {"stale_tool_args"},
	"corr-03": {"stale_tool_args", "inflight_not_cancelled"},
	"corr-04": {"stale_tool_args"},
	"corr-05": {"stale_tool_args"},
	"corr-06": {"stale_tool_args", "inflight_not_cancelled"},
	"corr-07": {"stale_tool_args"},
	"corr-08": {"stale_tool_args", "inflight_not_cancelled"},
	"corr-09": {"stale_tool_args"},
	"corr-10": {"inflight_not_cancelled"},
	"int-03":  {"stale_tool_args"},
	"int-04":  {"stale_tool_args"},
	"int-05":  {"inflight_not_cancelled"},
	"int-06":  {"stale_tool_args", "inflight_not_cancelled"},
}

// audioCoreBound bounds a SmallWebRTC core run's child (one whole suite
// in real time, calls placed again while they fall behind it), under
// make interop's -timeout 30m.
const audioCoreBound = 28 * time.Minute

// TestPipecatCoreDocsLimits: docs/INTEROP.md states the core runs' limits
// as the code has them: the Pipecat bot's, and the stock LiveKit agent's
// placings and calls left behind.
func TestPipecatCoreDocsLimits(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "INTEROP.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		fmt.Sprintf("at most %d (`maxLeftOut`)", maxLeftOut),
		fmt.Sprintf("at most %d of 30 (`maxUndecidedByEar`)", maxUndecidedByEar),
		fmt.Sprintf("above its %d min bound", int(audioCoreBound.Minutes())),
		fmt.Sprintf("(`run --resume`, up to %d runs,", placements),
		fmt.Sprintf("up to %d (`lkCoreMaxBehind`)", lkCoreMaxBehind),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/INTEROP.md does not say %q", want)
		}
	}
}

// maxLeftOut bounds the calls of a core run left out of its assertions
// because they were not scored (an excluded call: its scenario's trigger
// never fired, so it tests nothing; a harness_error, which a run placed
// again until none is left: a call still behind real time after its
// placements skips the whole run instead): a tenth of the suite.
const maxLeftOut = 3

// leftOut says whether c is left out of a core run's assertions (not
// scored), logging why.
func leftOut(t *testing.T, id string, c pipecatCoreCall) bool {
	t.Helper()
	if c.unheard {
		return true // counted and bounded by checkTwilioCore
	}
	if o := c.score.Outcome; o != trace.OutcomeHarnessError && o != trace.OutcomeExcluded {
		return false // scored, or the agent's own error (agent_error): a verdict
	}
	t.Logf("%s: left out of the assertions: %s (%s)", id, c.score.Outcome, c.score.Reason)
	return true
}

// checkLeftOut fails a run that left out more than maxLeftOut calls.
func checkLeftOut(t *testing.T, n int) {
	t.Helper()
	if n > maxLeftOut {
		t.Errorf("%d calls not scored, more than the %d a run may leave out of its assertions", n, maxLeftOut)
	}
}

// checkCarefulCore checks a careful run (cancel_on_interruption=True):
// the release gate holds on every scored call.
func checkCarefulCore(t *testing.T, calls map[string]pipecatCoreCall) {
	t.Helper()
	out := 0
	for _, id := range slices.Sorted(maps.Keys(calls)) {
		c := calls[id]
		if leftOut(t, id, c) {
			if !c.unheard {
				out++
			}
			continue
		}
		if !c.gate.Holds {
			t.Errorf("%s: the gate fails: %s", id, strings.Join(gateWhy(c), " "))
		}
	}
	checkLeftOut(t, out)
}

// pipecatNoCancelBucketsAudio is pipecatNoCancelBuckets over SmallWebRTC,
// where the caller's changes take the time it takes to say them:
//   - corr-01 and corr-04 hold: their correction, "right away, before any
//     tool call", starts as the request's last word ends, within the turn
//     Pipecat has not closed yet, so the model's first call already
//     carries the corrected value (textActsFirst);
//   - every other listed call fails with stale_tool_args as its primary
//     bucket (inflight_not_cancelled, where text finds it, was not among
//     the buckets over audio in the runs measured): a write the backend
//     holds while the caller speaks outlasts the handler's TOOL_TIMEOUT,
//     and its retry, sent after the change under the same key, is what
//     commits (docs/INTEROP.md, "The bot's tool handling").
var pipecatNoCancelBucketsAudio = func() map[string][]string {
	m := map[string][]string{}
	for id := range pipecatNoCancelBuckets {
		if !slices.Contains(textActsFirst, id) {
			m[id] = []string{"stale_tool_args"}
		}
	}
	return m
}()

// checkNoCancelBuckets checks a no-cancel-on-interruption run against
// want (pipecatNoCancelBuckets, or pipecatNoCancelBucketsAudio): each
// listed call fails the gate with its primary bucket and (at least) its
// secondary ones; every other call holds.
func checkNoCancelBuckets(t *testing.T, calls map[string]pipecatCoreCall, buckets map[string][]string) {
	t.Helper()
	out := 0
	defer func() { checkLeftOut(t, out) }()
	for _, id := range slices.Sorted(maps.Keys(calls)) {
		c := calls[id]
		if leftOut(t, id, c) {
			if !c.unheard {
				out++
			}
			continue
		}
		want, fails := buckets[id]
		got := callBuckets(c.score)
		switch {
		case !fails && !c.gate.Holds:
			t.Errorf("%s: the gate fails (%s); it holds with cancel_on_interruption", id, strings.Join(gateWhy(c), " "))
		case fails && c.gate.Holds:
			t.Errorf("%s: the gate holds; want it to fail with %v", id, want)
		case fails && (len(got) == 0 || got[0] != want[0]):
			t.Errorf("%s: buckets %v, want the primary %s", id, got, want[0])
		case fails:
			for _, b := range want[1:] {
				if !slices.Contains(got, b) {
					t.Errorf("%s: buckets %v, want %s among them", id, got, b)
				}
			}
		}
	}
}

// textCore is the core suite's scenarios less those with a noise step,
// which the eval wire's text cannot play (noisyCore), as run's --only.
func textCore(t *testing.T) string {
	t.Helper()
	core, err := scenarios.Pack("core")
	if err != nil {
		t.Fatal(err)
	}
	noisy := noisyCore(t)
	var ids []string
	for _, s := range core {
		if !slices.Contains(noisy, s.ID) {
			ids = append(ids, s.ID)
		}
	}
	t.Logf("not placed over the eval wire (text cannot play their noise): %s", strings.Join(noisy, ", "))
	return strings.Join(ids, ",")
}

// pipecatCoreRun is one whole-suite run of the core pack against the
// Pipecat bot with the fake reading the conversation.
type pipecatCoreRun struct {
	name      string   // the configuration, in the interop lines: core-careful, …
	transport string   // run's --transport
	cancel    bool     // the writes' cancel_on_interruption
	only      string   // run's --only ("": the whole suite)
	flags     []string // more of bot.py's flags
}

// pipecatCoreCall is one call of such a run: its score, and the release
// gate on it alone.
type pipecatCoreCall struct {
	score scorer.CallScore
	gate  harness.GateResult
	// confirms is the bot's last outcome claim in the call (its words,
	// from RTVI over SmallWebRTC and the eval wire): "" when it made none.
	confirms string
	// unclear counts the bot's utterances callproof's recognizer could
	// not vouch for (recorded trace.UnclearText; over Twilio); unheard
	// marks a call left out for that (leaveOutUnheard).
	unclear int
	unheard bool
}

// runPipecatCore starts the fake model (--mode conversation) and the bot
// as r says, runs the core suite over r.transport (placing again with
// --resume while calls fall behind real time), and returns each call's
// score and gate. It logs what scripts/interop.sh reads (interop:
// integrity k/N; interop: gate holds, or one interop: gate FAILS line per
// failing call), one line per call with its axes and buckets, and leaves
// each call's score in $CALLPROOF_PIPECAT_VERDICTS as
// WIRE-NAME-CALL.json. speech is the speech cache for the audio wires.
func runPipecatCore(ctx context.Context, t *testing.T, python, root, speech string, r pipecatCoreRun) map[string]pipecatCoreCall {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	fakeLog := filepath.Join(t.TempDir(), "fake.jsonl")
	fake, err := pipecat.StartFake(sctx, python, root, fakeLog, pipecat.Script{Conversation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = fake.Stop() }()
	flags := r.flags
	stt := pipecatSTT(r.transport)
	if stt == sttEar {
		// The bot hears the caller with earstt, the scripted stand-in for
		// its cloud STT, on the caller's speech cache. It serves until the
		// deferred Close, after the last placement, never until sctx's
		// end: the placements are not bound by sctx, and a call placed
		// after earstt closed would reach no pipeline of the bot (it ends
		// the call at once when its STT cannot connect) and end with the
		// caller having said nothing, all axes unknown.
		ear, err := earstt.Start(context.WithoutCancel(sctx), "127.0.0.1:0", earstt.Config{SpeechCache: speech, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer ear.Close()
		flags = append(slices.Clone(flags), "--stt", sttEar, "--stt-url", ear.URL)
	}
	bot, err := pipecat.StartBot(sctx, python, root, fake.URL, r.cancel, flags...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = bot.Stop() }()
	defer func() {
		if t.Failed() {
			t.Logf("bot log (last 20000 bytes):\n%s", tailString(bot.Log(), 20000))
		}
	}()
	agent := bot.URL
	if r.transport == transportWebRTC {
		agent = bot.OfferURL()
	}
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"run", "--transport", r.transport, "--agent", agent, "--out", out, "--concurrency", "1", "--suite", "core"}
	resume := []string{"run", "--resume", out, "--concurrency", "1", "--no-preflight"}
	if r.only != "" {
		args = append(args, "--only", r.only)
	}
	if r.transport != transportPipecatEval {
		args = append(args, "--speech-cache", speech)
		resume = append(resume, "--speech-cache", speech)
	}
	code, stdout, stderr := placeResuming(t, args, resume)
	if code == exitBroken {
		skipIfBehind(t, out, stderr)
	}
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("the run's table:\n%s", stdout)
	if _, err := bot.Stop(); err != nil {
		t.Errorf("bot: %v", err)
	}
	if stt != "" {
		if sc := measureSTT(t, out, stt, r.name, bot.Log(), false); len(sc.Silent) > 0 {
			// Calls in which the caller never spoke: the bot took no call
			// (it ends one at once when its STT cannot connect). A fault of
			// the test's, never a verdict on the bot.
			_, timeline, _ := fxCLI(t, "show", out, sc.Silent[0])
			t.Errorf("the caller said nothing in %s: the bot took no call; %s:\n%s\nbot log (last 30000 bytes):\n%s",
				strings.Join(sc.Silent, ", "), sc.Silent[0], timeline, tailString(bot.Log(), 30000))
		}
	}

	saved, err := harness.LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if g := harness.GateRun(saved, harness.Policy{}); g.Incomplete != nil || g.Broken {
		t.Fatalf("the run is incomplete or broken: %+v", g)
	}
	dir := os.Getenv(envPipecatVerdicts)
	if dir != "" {
		// The run itself (histories, table) beside the scores, to read
		// a disagreement's timelines (callproof show --out).
		kept := filepath.Join(dir, r.transport+"-"+r.name+".out")
		if err := os.RemoveAll(kept); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(kept, os.DirFS(out)); err != nil {
			t.Errorf("keeping the run: %v", err)
		}
	}
	calls := map[string]pipecatCoreCall{}
	kept, failing := 0, 0
	var unheard []string
	for _, c := range harness.ScoreCalls(saved.Sorted()) {
		call := pipecatCoreCall{score: c.Score, gate: harness.Gate([]harness.Call{c}, harness.Policy{}), confirms: botConfirms(c.History),
			unclear: unclearUtterances(c.History)}
		call.unheard = leaveOutUnheard(r, call)
		calls[c.Score.Call] = call
		if c.Score.Integrity {
			kept++
		}
		verdict := "gate holds"
		switch {
		case call.unheard:
			verdict = "left out: callproof's recognizer could not vouch for the bot's words"
			unheard = append(unheard, c.Score.Call)
		case !call.gate.Holds:
			failing++
			verdict = "gate FAILS: " + strings.Join(gateWhy(call), " ")
			t.Logf("interop: %s", verdict)
		}
		t.Logf("interop pipecat %s %s %s: %s; %s", r.transport, r.name, c.Score.Call, axesLine(c.Score), verdict)
		if dir != "" {
			b, err := json.Marshal(c.Score)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s-%s.json", r.transport, r.name, c.Score.Call)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("interop: integrity %d/%d", kept, len(calls))
	if len(unheard) > 0 {
		t.Logf("interop: left out %d (callproof's recognizer could not vouch for the bot's words): %s", len(unheard), strings.Join(unheard, ", "))
	}
	if r.transport != transportTwilio {
		checkConfirmationsDecided(t, calls)
	}
	if failing == 0 {
		t.Logf("interop: gate holds")
	}
	if t.Failed() {
		log, _ := os.ReadFile(fakeLog)
		t.Logf("the fake model's requests (last 20000 bytes):\n%s", tailString(string(log), 20000))
	}
	if want := len(strings.Split(r.only, ",")); r.only != "" && len(calls) != want {
		t.Errorf("%d calls scored, want %d", len(calls), want)
	}
	return calls
}

// pipecatClaim matches the fake model's sentences that claim an outcome
// (fake_llm.py --mode conversation): "Done. Order 5590 now has …" or
// "… has been shipped." (the write landed; its TTS may say "Done." and
// the rest as two utterances, and RTVI reports them so), "… Nothing was
// changed …" (withdrawn, or failed) and "… can't confirm yet …" (its
// outcome open). Its other words claim nothing ("What would you like to
// change…?", "Sorry, I couldn't undo the change on …").
var pipecatClaim = regexp.MustCompile(`^Done\.| now has | has been |Nothing was changed|can't confirm yet`)

// botConfirms is the last of the bot's completed utterances in h (ended,
// not cleared) whose words (its agent.speech_text, or the end's text)
// claim an outcome; "" when none does. Over SmallWebRTC the words of an
// utterance (RTVI's bot-output) may be recorded after its end.
func botConfirms(h *trace.History) string {
	type utt struct {
		words       string
		ended, gone bool
	}
	utts := map[string]*utt{}
	var order []string
	for _, e := range h.Events {
		a, ok := e.Data.(*trace.AgentSpeech)
		if !ok {
			continue
		}
		u := utts[a.Utterance]
		if u == nil {
			u = &utt{}
			utts[a.Utterance] = u
			order = append(order, a.Utterance)
		}
		switch e.Kind {
		case trace.KindAgentSpeechText:
			u.words = a.Text
		case trace.KindAgentSpeechEnd:
			u.ended = true
			if a.Text != "" { // everything it said, when the wire tells
				u.words = a.Text
			}
		case trace.KindAgentClear:
			u.gone = true
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if u := utts[order[i]]; u.ended && !u.gone && pipecatClaim.MatchString(u.words) {
			return u.words
		}
	}
	return ""
}

// checkConfirmationsDecided: over the wires that carry the bot's words
// (RTVI's bot-output), every scored call in which the bot claimed an
// outcome has confirmation_matches_backend decided, pass or fail, never
// unknown.
func checkConfirmationsDecided(t *testing.T, calls map[string]pipecatCoreCall) {
	t.Helper()
	n := 0
	for _, id := range slices.Sorted(maps.Keys(calls)) {
		c := calls[id]
		if c.confirms == "" || c.score.Outcome != trace.OutcomeScored {
			continue
		}
		n++
		if a := c.score.Axis(scorer.ConfirmationMatchesBackend); a.Verdict == scorer.Unknown {
			t.Errorf("%s: the bot said %q, but confirmation_matches_backend is unknown: %v", id, c.confirms, a.Findings)
		}
	}
	t.Logf("confirmation_matches_backend decided on the %d scored calls in which the bot claimed an outcome", n)
}

// gateWhy is why the gate fails on one call: its buckets, primary first,
// then the failing rules (rule:NAME).
func gateWhy(c pipecatCoreCall) []string {
	why := callBuckets(c.score)
	for _, r := range c.gate.Rules {
		if !r.Holds {
			why = append(why, "rule:"+string(r.Rule))
		}
	}
	return why
}

// TestCompareCoreRuns: the core runs' scores a wire's suite leaves
// (WIRE-CONFIG-CALL.json) are grouped by configuration and call, and a
// call placed over two wires is compared once; one placed over a single
// wire, an excluded call, or a file of no core run, is not. Between the
// eval wire and SmallWebRTC the whole verdict must agree (the sixth axis
// too); with Twilio, the ledger's three axes.
func TestCompareCoreRuns(t *testing.T) {
	dir := t.TempDir()
	axes := func(v6 scorer.Verdict) []scorer.AxisResult {
		var as []scorer.AxisResult
		for _, a := range scorer.Axes() {
			as = append(as, scorer.AxisResult{Axis: a, Verdict: scorer.Pass})
		}
		as[5].Verdict = v6
		return as
	}
	write := func(name string, s scorer.CallScore) {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pass := scorer.CallScore{Call: "int-05", Outcome: trace.OutcomeScored, Axes: axes(scorer.Pass)}
	for _, name := range []string{"pipecat-eval-core-careful-int-05", "twilio-core-careful-int-05",
		"twilio-core-no-cancel-on-interruption-int-05", "webrtc-core-careful-int-08", "twilio-cancel-on-interruption"} {
		write(name, pass)
	}
	// Over Twilio the sixth axis is what callproof's recognizer heard:
	// not compared.
	write("twilio-core-careful-int-05", scorer.CallScore{Call: "int-05", Outcome: trace.OutcomeScored, Axes: axes(scorer.Unknown)})
	// An excluded call is not compared.
	write("pipecat-eval-core-careful-int-06", pass)
	write("webrtc-core-careful-int-06", scorer.CallScore{Call: "int-06", Outcome: trace.OutcomeExcluded, Axes: axes(scorer.Unknown)})
	var compared atomic.Int32
	if d := compareCoreRuns(t, dir, &compared); len(d) != 0 {
		t.Errorf("disagreements %q, want none", d)
	}
	if n := compared.Load(); n != 1 {
		t.Errorf("%d calls compared, want 1", n)
	}
	// Between the RTVI wires, the sixth axis disagreeing is a disagreement.
	write("webrtc-core-careful-int-05", scorer.CallScore{Call: "int-05", Outcome: trace.OutcomeScored, Axes: axes(scorer.Unknown)})
	if d := compareCoreRuns(t, dir, &compared); len(d) != 1 || !strings.Contains(d[0], "confirmation_matches_backend=unknown") {
		t.Errorf("disagreements %q, want one on confirmation_matches_backend", d)
	}
}

// TestBotConfirms: the bot's last completed utterance that claims an
// outcome is its confirmation; a claim cut off (cleared, never ended) and
// words that claim nothing are not.
func TestBotConfirms(t *testing.T) {
	h := &trace.History{Call: "corr-01"}
	say := func(utt, text string, end bool) {
		h.Events = append(h.Events, trace.Event{Kind: trace.KindAgentSpeechStart, Data: &trace.AgentSpeech{Utterance: utt}},
			trace.Event{Kind: trace.KindAgentSpeechText, Data: &trace.AgentSpeech{Utterance: utt, Text: text}})
		if end {
			h.Events = append(h.Events, trace.Event{Kind: trace.KindAgentSpeechEnd, Data: &trace.AgentSpeech{Utterance: utt}})
		}
	}
	say("a1", "What would you like to change on order 5590?", true)
	if got := botConfirms(h); got != "" {
		t.Errorf("a question: %q, want none", got)
	}
	say("a2", "Done. Order 5590 now has delivery date December 3.", true)
	say("a3", "Okay, I won't make any change. Nothing was changed on order 5590.", false)
	say("a4", "Sorry, I couldn't undo the change on order 5590.", true)
	if got, want := botConfirms(h), "Done. Order 5590 now has delivery date December 3."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Its words recorded after its end, as over SmallWebRTC.
	h.Events = append(h.Events, trace.Event{Kind: trace.KindAgentSpeechStart, Data: &trace.AgentSpeech{Utterance: "a7"}},
		trace.Event{Kind: trace.KindAgentSpeechEnd, Data: &trace.AgentSpeech{Utterance: "a7"}},
		trace.Event{Kind: trace.KindAgentSpeechText, Data: &trace.AgentSpeech{Utterance: "a7", Text: "Okay, I won't make any change. Nothing was changed on order 5590."}})
	if got, want := botConfirms(h), "Okay, I won't make any change. Nothing was changed on order 5590."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	say("a5", "Done.", true) // the same claim in two utterances
	say("a6", "Order 5590 has been shipped.", true)
	if got, want := botConfirms(h), "Order 5590 has been shipped."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// unclearUtterances counts the agent's utterances in h recorded as words
// the recognizer could not vouch for (trace.UnclearText).
func unclearUtterances(h *trace.History) int {
	n := 0
	for _, e := range h.Events {
		if sp, ok := e.Data.(*trace.AgentSpeech); ok && e.Kind == trace.KindAgentSpeechText && strings.HasPrefix(sp.Text, trace.UnclearText) {
			n++
		}
	}
	return n
}

// TestUndecidedByEar: a call is left out only when the gate fails on
// unknowns alone (no failing axis, no bucket) and some utterance of the
// bot's was recorded unclear; only over Twilio, and without
// cancel-on-interruption only a call meant to hold.
func TestUndecidedByEar(t *testing.T) {
	axes := func(vs ...scorer.Verdict) []scorer.AxisResult {
		out := make([]scorer.AxisResult, len(vs))
		for i, v := range vs {
			out[i] = scorer.AxisResult{Axis: scorer.Axes()[i], Verdict: v}
		}
		return out
	}
	p, u, f := scorer.Pass, scorer.Unknown, scorer.Fail
	fails := harness.GateResult{Holds: false}
	for _, tc := range []struct {
		name string
		c    pipecatCoreCall
		want bool
	}{
		{"unknowns, unclear words", pipecatCoreCall{score: scorer.CallScore{Axes: axes(u, u, p, p, p, u)}, gate: fails, unclear: 1}, true},
		{"unknowns, words vouched for", pipecatCoreCall{score: scorer.CallScore{Axes: axes(u, u, p, p, p, u)}, gate: fails}, false},
		{"a failing axis", pipecatCoreCall{score: scorer.CallScore{Axes: axes(p, p, f, p, p, u)}, gate: fails, unclear: 1}, false},
		{"a bucket", pipecatCoreCall{score: scorer.CallScore{Axes: axes(u, u, p, p, p, u), Primary: "stale_tool_args"}, gate: fails, unclear: 1}, false},
		{"the gate holds", pipecatCoreCall{score: scorer.CallScore{Axes: axes(p, p, p, p, p, p)}, gate: harness.GateResult{Holds: true}, unclear: 1}, false},
	} {
		if got := undecidedByEar(tc.c); got != tc.want {
			t.Errorf("%s: undecidedByEar %v, want %v", tc.name, got, tc.want)
		}
	}
	unheard := func(id string) pipecatCoreCall {
		return pipecatCoreCall{score: scorer.CallScore{Call: id, Axes: axes(u, u, p, p, p, u)}, gate: fails, unclear: 1}
	}
	careful := pipecatCoreRun{transport: transportTwilio, cancel: true}
	noCancel := pipecatCoreRun{transport: transportTwilio}
	for _, tc := range []struct {
		r    pipecatCoreRun
		id   string
		want bool
	}{
		{careful, "int-03", true},
		{noCancel, "int-03", false}, // meant to fail with its bucket
		{noCancel, "corr-01", true}, // holds over audio
		{pipecatCoreRun{transport: transportWebRTC, cancel: true}, "int-03", false}, // RTVI words: nothing to leave out
	} {
		if got := leaveOutUnheard(tc.r, unheard(tc.id)); got != tc.want {
			t.Errorf("%s over %s (cancel %v): leaveOutUnheard %v, want %v", tc.id, tc.r.transport, tc.r.cancel, got, tc.want)
		}
	}
}
