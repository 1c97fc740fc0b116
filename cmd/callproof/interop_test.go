package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/agents/realtime"
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/callsim/audio"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/internal/interop"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// placements is how many times the test places a call the machine could
// not keep in real time (run, then run --resume).
const placements = 4

// TestRunTwilioOpenAIAgent is `callproof run --transport twilio` against
// a real third-party agent: the OpenAI Agents SDK's Twilio transport
// (agents/openai-twilio), its model agents/realtime's fake scripted for
// the scenarios in agents/realtime/testdata/openai-twilio
// (realtime.OrderDesk). The CLI is called as a user calls it; the test
// starts the fake and the agent, reads the results directory with `show`,
// and checks what the fake saw. It runs the agent in both of its
// configurations, its own HTTP tool and the SDK's MCP client on the call's
// MCP endpoint (--tools mcp), and checks that each call scores the same
// in both. Skipped in -short mode, and without node (a failure under
// `make test` and `make interop`: interop.Missing); see docs/INTEROP.md.
func TestRunTwilioOpenAIAgent(t *testing.T) {
	ctx, node, root := openAIAgentSetup(t, 15*time.Minute)
	speech := t.TempDir() // the caller's words (--speech-cache) and the fake's replies
	scores := map[string]map[string]scorer.CallScore{}
	for _, tools := range []string{"http", "mcp"} {
		t.Run(tools, func(t *testing.T) {
			scores[tools] = runOpenAIAgent(ctx, t, node, root, speech, tools)
		})
	}
	if len(scores["http"]) == 0 || len(scores["mcp"]) == 0 {
		return // a configuration failed or was skipped: nothing to compare
	}
	for id, h := range scores["http"] {
		m, ok := scores["mcp"][id]
		if !ok {
			t.Errorf("%s: no call in the MCP configuration", id)
			continue
		}
		t.Logf("interop openai-agents twilio %s: http %s, mcp %s", id, axesLine(h), axesLine(m))
		sameVerdicts(t, id, h, m)
	}
}

// sameVerdicts checks that a call scores alike in the HTTP (h) and MCP
// (m) configurations of an agent. The sixth axis is what a recognizer
// heard of the same words, which may differ from one placement to the
// next; the five others and the primary bucket (when the sixth agrees)
// must not.
func sameVerdicts(t *testing.T, call string, h, m scorer.CallScore) {
	t.Helper()
	for i := range 5 {
		if h.Axes[i].Verdict != m.Axes[i].Verdict {
			t.Errorf("%s: %s: http %s, mcp %s", call, h.Axes[i].Axis, h.Axes[i].Verdict, m.Axes[i].Verdict)
		}
	}
	if h.Axes[5].Verdict == m.Axes[5].Verdict && h.Primary != m.Primary {
		t.Errorf("%s: primary bucket: http %q, mcp %q", call, h.Primary, m.Primary)
	}
}

// openAIAgentSetup prepares a test of agents/openai-twilio: it skips in
// -short mode, fails when node is missing under make test and make
// interop (interop.Missing), installs the agent's packages, and returns a
// context bounding the test by limit, the node binary and the
// repository's root.
func openAIAgentSetup(t *testing.T, limit time.Duration) (context.Context, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("places real-time audio calls against a Node agent")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		interop.Missing(t, "node not found: agents/openai-twilio needs Node 20+")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	if err := realtime.InstallNodeAgents(ctx, root); err != nil {
		t.Fatal(err)
	}
	return ctx, node, root
}

// axesLine is a call's six verdicts and its primary bucket, for the log.
func axesLine(s scorer.CallScore) string {
	var b strings.Builder
	for _, a := range s.Axes {
		fmt.Fprintf(&b, "%s ", a.Verdict)
	}
	fmt.Fprintf(&b, "primary=%q", s.Primary)
	return b.String()
}

// runOpenAIAgent places the suite's calls on the agent in one tools
// configuration and returns each call's score.
func runOpenAIAgent(ctx context.Context, t *testing.T, node, root, speech, tools string) map[string]scorer.CallScore {
	suite := filepath.Join(root, "agents", "realtime", "testdata", "openai-twilio")
	fake, agent := startOrderDesk(ctx, t, node, root, speech, tools)
	out := filepath.Join(t.TempDir(), "out")
	cli := func(args ...string) (int, string, string) { return fxCLI(t, args...) }
	stdout := placeOpenAI(t, agent, out, speech, "--suite", suite, "--record")
	t.Logf("the run's table:\n%s", stdout)
	for _, id := range []string{"oa-slow-update", "oa-stop-over-confirmation"} {
		if _, err := os.Stat(filepath.Join(out, harness.RecordingsDir, id+".wav")); err != nil {
			t.Errorf("recording: %v", err)
		}
	}

	show := func(id string) string {
		code, stdout, stderr := cli("show", out, id)
		if code != exitOK {
			t.Fatalf("show %s: exit %d: %s", id, code, stderr)
		}
		return stdout
	}
	// Five axes are decided by the ledger and the timeline; the sixth by
	// what pocketsphinx made of the agent's audio, so it may be unknown.
	// The agent told the truth, so a fail is the recognizer mishearing a
	// number: asserted against only with CALLPROOF_ASR_ACCURACY set (see
	// TestInteropOpenAIAgentsTwilio).
	axes := []string{"captured", "active_state_correct", "tool_args_correct", "stale_write_prevented", "backend_correct"}
	confirmation := `(?m)^  confirmation_matches_backend +(pass|unknown|fail)$`
	if os.Getenv("CALLPROOF_ASR_ACCURACY") != "" {
		confirmation = `(?m)^  confirmation_matches_backend +(pass|unknown)$`
	}
	expect := map[string][]string{
		"oa-slow-update": {
			`fault\.applied +r1 update_order latency`,
			`tool\.committed +r1 update_order orders/5590 v1->v2 .* -> \{delivery_date=2026-12-03 `,
		},
		"oa-stop-over-confirmation": {
			`tool\.committed +r1 update_order orders/5590 v1->v2 .* -> \{delivery_date=2026-12-03 `,
			`agent\.clear +a1`,
			`tool\.committed +r2 update_order orders/5590 v2->v3 .* -> \{delivery_date=2026-12-01 `,
		},
	}
	for id, lines := range expect {
		timeline := show(id)
		for _, axis := range axes {
			lines = append(lines, `(?m)^  `+axis+` +pass$`)
		}
		lines = append(lines, confirmation)
		for _, re := range lines {
			if !regexp.MustCompile(re).MatchString(timeline) {
				t.Errorf("show %s: no line matching %s\n%s", id, re, timeline)
			}
		}
	}
	checkFake(t, fake)
	if code, err := agent.Stop(); err != nil || code != 0 {
		t.Errorf("agent exit status %d after SIGTERM (%v)\n%s", code, err, agent.Log())
	}
	saved, err := harness.LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	scores := map[string]scorer.CallScore{}
	for _, h := range saved.Histories {
		scores[h.Call] = scorer.Score(h)
		// Both configurations key every update: over HTTP in the header,
		// over MCP in _meta (the agent's toolMetaResolver).
		for _, e := range h.Events {
			if te, ok := e.Data.(*trace.ToolEvent); ok && e.Kind == trace.KindToolReceived && !strings.HasPrefix(te.IdempotencyKey, "oa-") {
				t.Errorf("%s: %s %s arrived with key %q, want oa-…", h.Call, te.Ref, te.Tool, te.IdempotencyKey)
			}
		}
	}
	return scores
}

// startOrderDesk starts the fake Realtime model scripted by
// realtime.OrderDesk and the OpenAI agent on it in one tools
// configuration; both stop when the test ends.
func startOrderDesk(ctx context.Context, t *testing.T, node, root, speech, tools string) (*realtime.Server, *realtime.NodeAgent) {
	t.Helper()
	synth, err := audio.NewSynth(audio.DefaultVoice)
	if err != nil {
		t.Fatal(err)
	}
	script, err := realtime.OrderDesk(ctx, &audio.Cache{Dir: speech, Synth: synth}, 1.25)
	if err != nil {
		t.Fatal(err)
	}
	fake := realtime.NewServer(script)
	t.Cleanup(fake.Close)
	sctx, scancel := context.WithTimeout(ctx, time.Minute)
	defer scancel()
	agent, err := realtime.StartNodeAgent(sctx, node, root, fake.URL(), "--tools", tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = agent.Stop() })
	return fake, agent
}

// placeOpenAI runs `callproof run --transport twilio` on agent into out
// with more flags, placing again (--resume) the calls the machine could
// not keep in real time (a harness error, exit 3), and skips the test
// when they still fall behind; it returns the run's table.
func placeOpenAI(t *testing.T, agent *realtime.NodeAgent, out, speech string, more ...string) string {
	t.Helper()
	args := append([]string{"run", "--transport", "twilio", "--agent", agent.URL, "--out", out,
		"--concurrency", "1", "--speech-cache", speech}, more...)
	resume := []string{"run", "--resume", out, "--concurrency", "1", "--speech-cache", speech}
	if slices.Contains(more, "--record") {
		resume = append(resume, "--record")
	}
	code, stdout, stderr := placeResuming(t, args, resume)
	if code == exitBroken {
		skipIfBehind(t, out, stderr)
	}
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s\nagent log:\n%s", code, stdout, stderr, agent.Log())
	}
	return stdout
}

// placeResuming runs `callproof run` with args, and again with resume
// (run --resume) while the run is broken (exit 3: calls the machine could
// not keep in real time), up to placements runs in all; it returns the
// last run's exit code and output.
func placeResuming(t *testing.T, args, resume []string) (int, string, string) {
	t.Helper()
	code, stdout, stderr := fxCLI(t, args...)
	for attempt := 2; code == exitBroken && attempt <= placements; attempt++ {
		t.Logf("attempt %d: exit %d: %s", attempt-1, code, strings.TrimSpace(stderr))
		// (resume may carry --no-preflight: the agent answered the first
		// run's, and on a busy machine a second can time out while the
		// agent loads a call.)
		code, stdout, stderr = fxCLI(t, resume...)
	}
	return code, stdout, stderr
}

// checkFake: on each connection (one per call placed) the SDK answered
// each function call with its output and asked for the reply, and sent one
// conversation.item.truncate per barge-in (a connection with two turns,
// the second answering a "stop" said over the first's reply) and none
// otherwise; the fake noted nothing wrong.
func checkFake(t *testing.T, fake *realtime.Server) {
	t.Helper()
	type conn struct{ calls, outputs, creates, truncates int }
	conns := map[int]*conn{}
	// The agent opens its Realtime session when a WebSocket is upgraded,
	// so the preflight's probe (upgraded, closed before any frame) has a
	// session too: one that never carried the caller's audio was no call.
	spoke := map[int]bool{}
	for _, e := range fake.Events() {
		if e.Dir == realtime.FromClient && e.Type == "input_audio_buffer.append" {
			spoke[e.Conn] = true
		}
	}
	for _, e := range fake.Events() {
		if !spoke[e.Conn] {
			continue
		}
		c := conns[e.Conn]
		if c == nil {
			c = &conn{}
			conns[e.Conn] = c
		}
		switch {
		case e.Dir == realtime.FromServer && e.Type == "response.function_call_arguments.done":
			c.calls++
		case e.Dir == realtime.FromClient && e.Type == "conversation.item.create" && strings.Contains(string(e.Raw), `"function_call_output"`):
			c.outputs++
		case e.Dir == realtime.FromClient && e.Type == "response.create":
			c.creates++
		case e.Dir == realtime.FromClient && e.Type == "conversation.item.truncate":
			c.truncates++
		case e.Dir == realtime.Note && e.Type != "connect" && e.Type != "disconnect":
			t.Errorf("connection %d: the fake noted %s: %s", e.Conn, e.Type, e.Text)
		}
	}
	if len(conns) < 2 {
		t.Errorf("the fake saw %d connections, want one per call", len(conns))
	}
	for k, c := range conns {
		t.Logf("Realtime connection %d: %d function calls, %d outputs, %d response.create, %d truncates", k, c.calls, c.outputs, c.creates, c.truncates)
		if c.calls < 1 || c.outputs != c.calls || c.creates != c.calls || c.truncates != c.calls-1 {
			t.Errorf("connection %d: %+v: want each call answered and asked on, one truncate per barge-in", k, *c)
		}
	}
}

// callsBehind returns the saved run's calls that ended as harness errors
// because the machine could not keep them in real time; any other
// harness error (ours, never a verdict on the agent) fails the test.
func callsBehind(t *testing.T, saved *harness.SavedRun, stderr string) []*trace.History {
	t.Helper()
	var behind []*trace.History
	for _, h := range saved.Sorted() {
		end := h.End()
		if end == nil || end.Outcome != trace.OutcomeHarnessError {
			continue
		}
		if !strings.HasPrefix(end.Reason, callsim.ReasonBehind) {
			t.Fatalf("%s: harness error: %s\n%s", h.Call, end.Reason, stderr)
		}
		behind = append(behind, h)
	}
	return behind
}

// skipIfBehind skips when the run's harness errors are all calls the
// machine could not keep in real time: they have no verdict to check
// (whether the caller itself keeps time is TestInteropOpenAIAgentsTwilio's
// question). Under CI=true it fails instead (interop.Behind): a CI run
// whose calls were never kept in time tested nothing. Any other harness
// error fails.
func skipIfBehind(t *testing.T, out, stderr string) {
	t.Helper()
	saved, err := harness.LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	var behind []string
	for _, h := range callsBehind(t, saved, stderr) {
		behind = append(behind, fmt.Sprintf("%s: %s", h.Call, h.End().Reason))
	}
	if len(behind) == 0 {
		t.Fatalf("run: exit %d without a harness error in %s\n%s", exitBroken, out, stderr)
	}
	interop.Behind(t, fmt.Sprintf("placed %d times, still not kept in real time (a machine this busy cannot measure the calls): %s", placements, strings.Join(behind, "; ")))
}
