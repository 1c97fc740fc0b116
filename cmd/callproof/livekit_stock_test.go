package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
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
	"github.com/callproof/callproof/scorer"
)

// lkStockChildTimeout bounds one case's child in its namespace: the
// agent's start (a second or two of imports on a quiet machine, far more
// on a busy one), up to placements placings of a call and the stops.
const lkStockChildTimeout = 8 * time.Minute

// TestLiveKitStockAgent is `callproof run --transport livekit` against
// the stock LiveKit agent (agents/livekit/agent.py: livekit-agents 1.8.9
// from PyPI with Silero VAD, flite and the scripted fake model of
// agents/pipecat, hearing the caller with earstt, the scripted stand-in
// for a cloud STT; CALLPROOF_LIVEKIT_STT=pocketsphinx: with its own
// pocketsphinx), dispatched by name by a real LiveKit server,
// with the Pipecat bot's calls and verdicts (pipecatCases): the careful
// configuration (update_order given up on a barge-in) confirms, hangs up
// (the agent leaving the room: `agent hung up`) and keeps the held write
// from landing after "stop" (int-05); the flawed one
// (--no-interrupt-tools: disallow_interruptions during the call) lets it
// commit, failing the gate with inflight_not_cancelled (or stale_tool_args:
// the careful handler's 4 s timeout ends the held request and its retry
// under the same key commits after "stop"). Each case runs in a
// network namespace of its own (lkserver.InNamespaceVeth: libwebrtc
// gathers its candidate on 127.0.0.2 of a veth there). A missing python3,
// package, server or namespace fails under make test and CI, never skips
// (-short skips). mcp-tools places the calls of the three that use a
// catalogue tool again, each with the agent's tools over HTTP and then over
// MCP (--tools mcp), and compares the two (compareLiveKitMCP). make test
// runs the two barge-ins; INTEROP_ONLY leaves the others to make interop.
// docs/INTEROP.md, "LiveKit Agents".
func TestLiveKitStockAgent(t *testing.T) {
	_, _, root := pipecatVenv(t) // installed once, before the children
	cases := liveKitStockCases(root)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !lkserver.InNamespaceVeth(t, lkStockChildTimeout) {
				return
			}
			ctx, python, root := pipecatVenv(t)
			out, score := runLiveKitStock(ctx, t, python, root, tc)
			logInterop(t, out, score)
		})
	}
	t.Run("mcp-tools", func(t *testing.T) {
		for _, tc := range cases {
			if tc.hangUp {
				continue // the "confirms" call: only end_call, not a catalogue tool, differs
			}
			t.Run(tc.name, func(t *testing.T) {
				if !lkserver.InNamespaceVeth(t, 2*lkStockChildTimeout) {
					return
				}
				ctx, python, root := pipecatVenv(t)
				compareLiveKitMCP(ctx, t, python, root, tc)
			})
		}
	})
}

// liveKitStockCases are the Pipecat bot's calls and verdicts
// (pipecatCases), named for the stock agent's configurations.
func liveKitStockCases(root string) []pipecatCase {
	names := map[string]string{
		"confirms":                  "careful-confirms",
		"hangs-up":                  "careful-hangs-up",
		"cancel-on-interruption":    "careful-barge-in",
		"no-cancel-on-interruption": "flawed-barge-in",
	}
	cases := pipecatCases(root, regexp.QuoteMeta(livekit.ReasonAgentLeft))
	for i, tc := range cases {
		tc.name, tc.transport = names[tc.name], transportLiveKit
		tc.stt = sttEar // the agent hears the caller with earstt
		if os.Getenv(envLiveKitSTT) == sttPocketSphinx {
			tc.stt = sttPocketSphinx // its own pocketsphinx, to measure it
		}
		if tc.name == "flawed-barge-in" {
			// The agent may hear the "stop" (earstt always does,
			// pocketsphinx often): the fake model then puts the landed
			// write back (r2, the restore), and backend_correct may pass.
			// The write committed after "stop" is the flaw either way.
			tc.show = slices.DeleteFunc(slices.Clone(tc.show), func(re string) bool { return strings.Contains(re, "backend_correct") })
		}
		cases[i] = tc
	}
	return cases
}

// compareLiveKitMCP places tc's call on the agent with its tools over
// HTTP and then over MCP (--tools mcp: LiveKit's MCPToolset on the call's
// MCP URL, no tool code), with the same expectations, and checks that the
// two score alike (sameVerdicts: the five axes decided by the ledger and
// the timeline, and the primary bucket when the sixth agrees; for the
// flawed call, the axes its tool decides and inflight_not_cancelled among
// the buckets, over HTTP stale_tool_args too). Both in one child, so that both meet the same minute of
// the shared machine.
func compareLiveKitMCP(ctx context.Context, t *testing.T, python, root string, tc pipecatCase) {
	hout, h := runLiveKitStock(ctx, t, python, root, tc)
	mc := tc
	mc.tools = "mcp"
	mc.show = append(slices.Clone(tc.show), liveKitMCPNotes[tc.name]...)
	if len(liveKitMCPNotes[tc.name]) == 0 {
		mc.absent = append(slices.Clone(tc.absent), `mcp: `) // nothing but calls reached the endpoint
	}
	mout, m := runLiveKitStock(ctx, t, python, root, mc)
	if t.Failed() || len(h.Axes) == 0 || len(m.Axes) == 0 {
		return
	}
	// Every write keyed both ways: the HTTP tool sets the header, and over
	// MCP the fake model fills in the idempotency_key the endpoint offers.
	assertGateRule(t, hout, harness.RuleIdempotentRetries)
	assertGateRule(t, mout, harness.RuleIdempotentRetries)
	t.Logf("interop livekit python mcp %s: http %s, mcp %s", tc.call, axesLine(h), axesLine(m))
	if tc.cancel {
		sameVerdicts(t, tc.call, h, m)
		return
	}
	// The flawed call: whether pocketsphinx heard "stop" before or after
	// the write landed decides whether the fake model puts it back (the
	// restore), and with it captured, active_state_correct,
	// backend_correct and the confirmation; the write committing after
	// "stop" is the tools' part, the same in both.
	for _, a := range []scorer.Axis{scorer.ToolArgsCorrect, scorer.StaleWritePrevented} {
		if hv, mv := h.Axis(a).Verdict, m.Axis(a).Verdict; hv != mv {
			t.Errorf("%s: %s: http %s, mcp %s", tc.call, a, hv, mv)
		}
	}
	// Over MCP the held call runs on to its commit (inflight_not_cancelled);
	// over HTTP the careful handler's 4 s timeout may end it first, and its
	// retry under the same key commits after "stop" (stale_tool_args).
	if b := callBuckets(m); !slices.Contains(b, string(scorer.BucketInflightNotCanceled)) {
		t.Errorf("%s (mcp): buckets %v, no %s", tc.call, b, scorer.BucketInflightNotCanceled)
	}
	if b := callBuckets(h); !slices.Contains(b, string(scorer.BucketInflightNotCanceled)) && !slices.Contains(b, string(scorer.BucketStaleToolArgs)) {
		t.Errorf("%s (http): buckets %v, neither %s nor %s", tc.call, b, scorer.BucketInflightNotCanceled, scorer.BucketStaleToolArgs)
	}
}

// liveKitMCPNotes is what the MCP endpoint notes of LiveKit's MCP client
// on a barge-in: the careful configuration cancels the task awaiting the
// tool (Guard.run in agent.py), and the MCP SDK under LiveKit's
// MCPServerHTTP (mcp 2.3.0) sends notifications/cancelled for the call,
// so it is withdrawn as over HTTP. In the flawed configuration (and the
// calls without a barge-in) nothing but the call reaches the endpoint.
var liveKitMCPNotes = map[string][]string{
	"careful-barge-in": {`harness\.note +mcp: notifications/cancelled for request \d+ \("caller cancelled"\)`},
}

// lkStockPlacing is one placing of a case's call: its own server, fake
// model and agent, and the run's results.
type lkStockPlacing struct {
	fake, agent    interface{ Stop() (int, error) }
	agentLog       func() string
	fakeLog, out   string
	code           int
	stdout, stderr string
}

// placeLiveKitStock starts a LiveKit server, the fake model and the agent
// as tc says (tc.cancel: the careful configuration) and places tc's call.
// Each placing has a server, fake and agent of its own, so that none
// inherits the last one's room (named after the call) or job.
func placeLiveKitStock(ctx context.Context, t *testing.T, python, root, speech string, tc pipecatCase) *lkStockPlacing {
	s := lkserver.Start(t)
	t.Setenv(livekit.EnvAPIKey, lkserver.APIKey)
	t.Setenv(livekit.EnvAPISecret, lkserver.APISecret)
	sctx, scancel := context.WithTimeout(ctx, 3*time.Minute)
	defer scancel()
	p := &lkStockPlacing{fakeLog: filepath.Join(t.TempDir(), "fake.jsonl"), out: filepath.Join(t.TempDir(), "out")}
	fake, err := pipecat.StartFake(sctx, python, root, p.fakeLog, orderDeskScript(tc.hangUp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = fake.Stop() })
	cfg := lkagent.Config{InterruptTools: tc.cancel, MCP: tc.tools == "mcp"}
	if tc.stt == sttEar {
		ear, err := earstt.Start(sctx, "127.0.0.1:0", earstt.Config{SpeechCache: speech, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ear.Close)
		cfg.STTURL = ear.URL
	}
	agent, err := lkagent.Start(sctx, python, root, s.URL, lkserver.APIKey, lkserver.APISecret, fake.URL, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = agent.Stop() })
	p.fake, p.agent, p.agentLog = fake, agent, agent.Log
	p.code, p.stdout, p.stderr = fxCLI(t, append([]string{"run", "--transport", transportLiveKit, "--agent", s.URL,
		"--livekit-agent-name", lkagent.AgentName, "--out", p.out, "--concurrency", "1", "--speech-cache", speech}, tc.suite...)...)
	return p
}

// runLiveKitStock places tc's call, again (up to placements) while the
// run is broken, checks the run's table and `callproof show`, and returns
// the run's directory and the call's score.
func runLiveKitStock(ctx context.Context, t *testing.T, python, root string, tc pipecatCase) (string, scorer.CallScore) {
	speech := t.TempDir()
	p := placeLiveKitStock(ctx, t, python, root, speech, tc)
	for attempt := 2; p.code == exitBroken && attempt <= placements; attempt++ {
		t.Logf("attempt %d: exit %d: %s", attempt-1, p.code, strings.TrimSpace(p.stderr))
		if _, timeline, _ := fxCLI(t, "show", p.out, tc.call); timeline != "" {
			t.Logf("attempt %d:\n%s", attempt-1, tailString(timeline, 6000))
		}
		_, _ = p.agent.Stop()
		_, _ = p.fake.Stop()
		p = placeLiveKitStock(ctx, t, python, root, speech, tc)
	}
	defer func() {
		if t.Failed() {
			t.Logf("agent log:\n%s", tailString(p.agentLog(), 12000))
		}
	}()
	out, code, stdout, stderr, fakeLog, agent := p.out, p.code, p.stdout, p.stderr, p.fakeLog, p.agent
	if code == exitBroken {
		skipIfBehind(t, out, stderr)
	}
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("the run's table:\n%s", stdout)
	for _, re := range tc.table {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("the run's table: no line matching %s", re)
		}
	}
	code, timeline, stderr := fxCLI(t, "show", out, tc.call)
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	log, _ := os.ReadFile(fakeLog)
	assertTimelineLines(t, tc.call, timeline, tc.show, tc.absent, log)
	// One write at most: the agent did not act twice on one request. A
	// retry under the write's own key is that write again (the careful
	// handler retries a held write that timed out); its reads (get_order)
	// are requests of their own, and so is the flawed configuration's
	// restore of a write that landed after "stop".
	writes := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)tool\.received +r\d+ update_order (.*)$`).FindAllStringSubmatch(timeline, -1) {
		if tc.cancel || !strings.Contains(m[1], "delivery_date=2026-12-01") {
			key := regexp.MustCompile(`key=(\S+)`).FindStringSubmatch(m[1])
			if key == nil {
				key = []string{"", m[0]} // no key: each request a write of its own
			}
			writes[key[1]] = true
		}
	}
	if len(writes) > 1 {
		t.Errorf("show %s: update_order received under %d keys\n%s\nthe fake model's requests:\n%s", tc.call, len(writes), timeline, log)
	}
	score := loadScore(t, out, tc.call)
	if tc.stt != "" {
		measureSTT(t, out, tc.stt, tc.call, p.agentLog(), false)
	}
	// A LiveKit worker drains its jobs and exits on SIGTERM: it must not
	// need killing.
	if _, err := agent.Stop(); err != nil {
		t.Errorf("agent: %v\n%s", err, tailString(p.agentLog(), 12000))
	}
	return out, score
}

// logInterop logs what scripts/interop.sh reads of one third-party call
// (a Pipecat bot's, the stock LiveKit agent's): its integrity, and whether
// the release gate holds on it (the call's buckets and the gate's failing
// rules, rule:NAME, when not).
func logInterop(t *testing.T, out string, score scorer.CallScore) {
	t.Helper()
	saved, err := harness.LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	if score.Integrity {
		kept = 1
	}
	t.Logf("interop: integrity %d/1", kept)
	g := harness.GateRun(saved, harness.Policy{})
	if g.Holds {
		t.Logf("interop: gate holds")
		return
	}
	why := callBuckets(score)
	for _, r := range g.Rules {
		if !r.Holds {
			why = append(why, "rule:"+string(r.Rule))
		}
	}
	t.Logf("interop: gate FAILS: %s", strings.Join(why, " "))
}

// assertTimelineLines checks a third-party call's timeline (show's
// output): a line matching each of show, none matching any of absent; a
// miss prints the timeline and the fake model's requests (fakeLog).
func assertTimelineLines(t *testing.T, call, timeline string, show, absent []string, fakeLog []byte) {
	t.Helper()
	for _, re := range show {
		if !regexp.MustCompile(re).MatchString(timeline) {
			t.Errorf("show %s: no line matching %s\n%s\nthe fake model's requests:\n%s", call, re, timeline, fakeLog)
		}
	}
	for _, re := range absent {
		if regexp.MustCompile(re).MatchString(timeline) {
			t.Errorf("show %s: a line matching %s\n%s\nthe fake model's requests:\n%s", call, re, timeline, fakeLog)
		}
	}
}

// tailString is the last n bytes of s.
func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
