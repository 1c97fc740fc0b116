package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/agents/earstt"
	"github.com/callproof/callproof/agents/pipecat"
	"github.com/callproof/callproof/agents/realtime"
	"github.com/callproof/callproof/callsim/pipecateval"
	"github.com/callproof/callproof/callsim/twilio"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
)

// TestRunTwilioPipecatBot is `callproof run --transport twilio` against a
// real Pipecat bot (agents/pipecat: pipecat-ai from PyPI, its model the
// scripted fake fake_llm.py) with Pipecat's default
// cancel_on_interruption=True: the call passes the gate, and a bot that
// hangs up after its confirmation (end_call, then Pipecat closes the
// stream) is scored as a hang-up. The Python packages are installed by
// scripts/install-python.sh; a missing python3 or a failed install fails
// the test (it never skips for a missing framework). Skipped in -short
// mode; see docs/INTEROP.md, "Pipecat".
func TestRunTwilioPipecatBot(t *testing.T) {
	ctx, python, root := pipecatVenv(t)
	speech := t.TempDir()
	cases := pipecatCases(root, `agent closed the stream \(normal closure\)`)
	scores := map[string]scorer.CallScore{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scores[tc.name] = runPipecat(ctx, t, python, root, speech, tc)
		})
	}
	t.Run("mcp-tools", func(t *testing.T) {
		comparePipecatMCP(ctx, t, python, root, speech, "twilio", cases, scores)
	})
	// Pipecat's default, auto_hang_up: the bot ends the call through
	// Twilio's REST API, pointed (base_url) at callproof's stub.
	rest := cases[1]
	rest.name, rest.twilioAPI = "hangs-up-rest", true
	rest.show = append(slowLedger(),
		`agent\.hangup +`+regexp.QuoteMeta(twilio.ReasonRESTHangUp),
		`call\.end +completed: agent hung up`)
	t.Run(rest.name, func(t *testing.T) { runPipecat(ctx, t, python, root, speech, rest) })
}

// comparePipecatMCP runs the bot's MCP configuration (--tools mcp:
// Pipecat's MCPClient on the call's MCP endpoint, no tool code but the
// read-back of a write) on each
// call of cases that uses a catalogue tool, with the same expectations,
// and checks that each call scores as in the HTTP configuration: the five
// axes decided by the ledger and the timeline, and the primary bucket
// when the sixth agrees (over Twilio it is what pocketsphinx heard). An
// HTTP score missing from http (its subtest not run) is made here.
func comparePipecatMCP(ctx context.Context, t *testing.T, python, root, speech, wire string, cases []pipecatCase, http map[string]scorer.CallScore) {
	for _, tc := range cases {
		if tc.hangUp {
			continue // the same call as "confirms": only end_call, not a catalogue tool, differs
		}
		t.Run(tc.name, func(t *testing.T) {
			h, ok := http[tc.name]
			if !ok {
				h = runPipecat(ctx, t, python, root, speech, tc)
			}
			mc := tc
			mc.tools = "mcp"
			mc.show = append(slices.Clone(tc.show), pipecatMCPNotes[tc.name]...)
			if len(pipecatMCPNotes[tc.name]) == 0 {
				mc.absent = append(slices.Clone(tc.absent), `mcp: `) // nothing but calls reached the endpoint
			}
			m := runPipecat(ctx, t, python, root, speech, mc)
			if t.Failed() || len(h.Axes) == 0 || len(m.Axes) == 0 {
				return
			}
			t.Logf("interop pipecat %s mcp %s: http %s, mcp %s", wire, tc.call, axesLine(h), axesLine(m))
			sameVerdicts(t, tc.call, h, m)
		})
	}
}

// pipecatMCPNotes is what the MCP endpoint notes of Pipecat's MCPClient
// on a barge-in (measured; docs/INTEROP.md, "Tools over MCP"): with
// cancel_on_interruption Pipecat cancels the handler's task, and the MCP
// SDK under it (mcp 2.3.0, protocol 2025-11-25) sends
// notifications/cancelled for the call, so it is withdrawn as over HTTP.
// Without it (and in the calls without a barge-in) nothing but the call
// reaches the endpoint.
var pipecatMCPNotes = map[string][]string{
	"cancel-on-interruption": {`harness\.note +mcp: notifications/cancelled for request \d+ \("caller cancelled"\)`},
}

// pipecatCases are the bot's configurations and calls with the verdicts
// every wire must give; hangUp is the wire's hang-up reason, as `show`
// prints it. A wire's test adds what only it shows.
func pipecatCases(root, hangUp string) []pipecatCase {
	slow := []string{"--suite", filepath.Join(root, "agents", "pipecat", "testdata", "twilio")}
	// pc-bot-hangs-up: the same request, and then the caller stays on the
	// line a minute (a silence step) before it hangs up: the bot's leaving,
	// which ends the call, comes first whatever the machine's load (its
	// confirmation, spoken in real time, and Pipecat's 2 s of closing
	// silence may take longer than any linger).
	hangsUp := []string{"--suite", filepath.Join(root, "agents", "pipecat", "testdata", "hangs-up")}
	int05 := []string{"--suite", "core", "--only", "int-05"}
	return []pipecatCase{
		{name: "confirms", cancel: true, suite: slow, call: "pc-slow-update", show: append(slowLedger(),
			`call\.end +completed: caller hung up`)},
		{name: "hangs-up", cancel: true, hangUp: true, suite: hangsUp, call: "pc-bot-hangs-up", show: append(slowLedger(),
			`agent\.hangup +`+hangUp,
			`call\.end +completed: agent hung up`)},
		// int-05: "stop" said while the write is held. Pipecat's default
		// cancels the handler on the caller's barge-in: its request's
		// connection closes and nothing commits.
		{name: "cancel-on-interruption", cancel: true, suite: int05, call: "int-05", show: []string{
			`tool\.cancelled +r\d+ update_order \(client gave up\)`,
			`(?m)^  stale_write_prevented +pass$`,
			`(?m)^  backend_correct +pass$`,
		}, absent: []string{`tool\.committed`}},
		// With cancel_on_interruption=False the handler runs on and the
		// held write commits after the "stop": callproof's bucket. Over
		// audio the backend holds it longer than the handler's timeout,
		// and its retry under the same key is what commits
		// (stale_tool_args; docs/INTEROP.md, "The bot's tool handling").
		{name: "no-cancel-on-interruption", cancel: false, suite: int05, call: "int-05", show: []string{
			`tool\.committed +r\d+ update_order orders/5590 v1->v2`,
			`(?m)^  backend_correct +fail$`,
		}, table: []string{`(?m)^  (inflight_not_cancelled|stale_tool_args) +\d`}}, // a root cause, primary or secondary
	}
}

// pipecatCase is one configuration of the bot and the call it takes.
type pipecatCase struct {
	name           string
	transport      string // --transport; "" is twilio
	tools          string // bot.py's --tools; "" is http
	cancel, hangUp bool   // cancel_on_interruption; the fake ends the call
	twilioAPI      bool   // the bot hangs up through callproof's stub of Twilio's REST API
	stt            string // the bot's --stt over audio; "": pipecatSTT's
	// measure: calls placed for what the bot's STT hears
	// (TestPipecatSTTWords; call names them all): their verdicts are not
	// checked; with earstt every caller utterance must be heard word for
	// word.
	measure bool
	suite   []string // run's flags naming the scenario
	call    string
	show    []string // regexps `callproof show` matches
	absent  []string // and does not
	table   []string // regexps the run's table matches
}

// slowLedger is what pc-slow-update's history holds whoever ends it: the
// slow write committed, axes 1-5 passing (the sixth hangs on what
// callproof's recognizer made of flite's words).
func slowLedger() []string {
	lines := []string{
		`fault\.applied +r\d+ update_order latency`,
		`tool\.committed +r\d+ update_order orders/5590 v1->v2 .* -> \{delivery_date=2026-12-03 `,
		`(?m)^  confirmation_matches_backend +(pass|unknown|fail)$`,
	}
	for _, axis := range []string{"captured", "active_state_correct", "tool_args_correct", "stale_write_prevented", "backend_correct"} {
		lines = append(lines, `(?m)^  `+axis+` +pass$`)
	}
	return lines
}

// runPipecat starts the fake and the bot as tc says, places tc's call
// over Twilio, checks the run's table and `callproof show`, and returns
// the call's score.
func runPipecat(ctx context.Context, t *testing.T, python, root, speech string, tc pipecatCase) scorer.CallScore {
	sctx, scancel := context.WithTimeout(ctx, 2*time.Minute)
	defer scancel()
	fakeLog := filepath.Join(t.TempDir(), "fake.jsonl")
	fake, err := pipecat.StartFake(sctx, python, root, fakeLog, orderDeskScript(tc.hangUp))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = fake.Stop() }()
	var flags, runFlags []string
	if tc.tools != "" {
		flags = []string{"--tools", tc.tools}
	}
	if tc.twilioAPI {
		addr := freeLoopbackAddr(t)
		flags = append(flags, "--twilio-api", "http://"+addr)
		runFlags = []string{"--twilio-api", addr}
	}
	transport := tc.transport
	if transport == "" {
		transport = transportTwilio
	}
	stt := pipecatSTT(transport)
	if tc.stt != "" && stt != "" {
		stt = tc.stt
	}
	if stt == sttEar {
		// The bot's cloud STT: callproof's scripted stand-in, on the
		// caller's speech cache (in this process, in the namespace if any).
		// It serves until the deferred Close, not until sctx's 2 minutes:
		// a call placed again after them would reach a bot whose STT
		// cannot connect, which ends the call at once.
		ear, err := earstt.Start(context.WithoutCancel(sctx), "127.0.0.1:0", earstt.Config{SpeechCache: speech, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer ear.Close()
		flags = append(flags, "--stt", sttEar, "--stt-url", ear.URL)
	}
	bot, err := pipecat.StartBot(sctx, python, root, fake.URL, tc.cancel, flags...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = bot.Stop() }()
	defer func() {
		if t.Failed() {
			t.Logf("bot log:\n%s", bot.Log())
		}
	}()

	out := filepath.Join(t.TempDir(), "out")
	cli := func(args ...string) (int, string, string) { return fxCLI(t, args...) }
	agent := bot.URL
	if transport == transportWebRTC {
		agent = bot.OfferURL()
	}
	args := []string{"run", "--transport", transport, "--agent", agent, "--out", out, "--concurrency", "1"}
	resume := []string{"run", "--resume", out, "--concurrency", "1", "--no-preflight"}
	if transport != transportPipecatEval {
		args = append(args, "--speech-cache", speech)
		resume = append(resume, "--speech-cache", speech)
	}
	args = append(append(args, tc.suite...), runFlags...)
	resume = append(resume, runFlags...)
	code, stdout, stderr := placeResuming(t, args, resume)
	if code == exitBroken {
		// What the last placement would have scored, for the log.
		if _, timeline, _ := cli("show", out, tc.call); timeline != "" {
			t.Logf("the last placement:\n%s", strings.Join(regexp.MustCompile(`(?m)^.*(would have ended|agent\.hangup|agent\.speech_start|caller\.speech_final|user-transcription|tool\.received|tool\.committed|tool\.cancelled).*$`).FindAllString(timeline, -1), "\n"))
		}
		skipIfBehind(t, out, stderr)
	}
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s\nbot log:\n%s", code, stdout, stderr, bot.Log())
	}
	t.Logf("the run's table:\n%s", stdout)
	if tc.measure {
		measureSTT(t, out, stt, tc.call, bot.Log(), true)
		return scorer.CallScore{}
	}
	for _, re := range tc.table {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("the run's table: no line matching %s", re)
		}
	}
	code, timeline, stderr := cli("show", out, tc.call)
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	if tc.tools != "" {
		// What the tools saw, for the log: the ledger and the MCP endpoint's notes.
		t.Logf("show %s (%s tools):\n%s", tc.call, tc.tools, strings.Join(regexp.MustCompile(`(?m)^.*(tool\.|mcp: ).*$`).FindAllString(timeline, -1), "\n"))
	}
	log, _ := os.ReadFile(fakeLog)
	assertTimelineLines(t, tc.call, timeline, tc.show, tc.absent, log)
	// One write at most: the bot did not act twice on one request (its
	// reads, get_order, are requests of their own, and a retry of the
	// same function call carries its key).
	keys := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)tool\.received +r\d+ update_order .*?( key=\S+|\(no key\))`).FindAllStringSubmatch(timeline, -1) {
		keys[m[1]] = true
	}
	if len(keys) > 1 {
		t.Errorf("show %s: update_order received under %d keys\n%s\nthe fake model's requests:\n%s", tc.call, len(keys), timeline, log)
	}
	// uvicorn shuts down on SIGTERM and then dies of it: the exit status
	// is the signal's, but it must not need killing.
	if _, err := bot.Stop(); err != nil {
		t.Errorf("bot: %v\n%s", err, bot.Log())
	}
	score := loadScore(t, out, tc.call)
	pipecatInterop(t, out, transport, tc, score)
	if stt != "" {
		// What the bot's STT made of the caller's words (docs/INTEROP.md's
		// accuracy figures).
		measureSTT(t, out, stt, tc.call, bot.Log(), false)
	}
	// Every write is keyed, whichever way the tools go: the HTTP handler
	// sets the Idempotency-Key, and over MCP the fake model fills in the
	// idempotency_key argument the endpoint offers, as a careful model does.
	assertGateRule(t, out, harness.RuleIdempotentRetries)
	if tc.tools == "mcp" && tc.cancel {
		// Over MCP too the bot reads its write back through the call's
		// read tool before the model hears it landed (bot.py's
		// mcp_read_back), so the confirmation comes after a read.
		assertGateRule(t, out, harness.RuleVerifiedBeforeConfirm)
	}
	// Over the wires that carry the bot's words (RTVI bot-output), a call
	// in which the bot confirmed has confirmation_matches_backend decided
	// from them, never left unknown.
	if transport != transportTwilio && confirmed(log, realtime.OrderDeskConfirm) {
		if v := score.Axis(scorer.ConfirmationMatchesBackend).Verdict; v == scorer.Unknown {
			t.Errorf("%s: the bot confirmed (%q) but confirmation_matches_backend is %s\n%s", tc.call, realtime.OrderDeskConfirm, v, timeline)
		}
	}
	return score
}

// The bot's speech-to-text (bot.py --stt) over the audio wires.
const (
	sttEar          = "ear"          // callproof's earstt, the scripted stand-in for a cloud STT
	sttPocketSphinx = "pocketsphinx" // open dictation in the bot
)

// envPipecatSTT, set to pocketsphinx, has the Pipecat bot hear the caller
// with pocketsphinx over the audio wires instead of earstt (to measure it;
// the verdicts the tests expect are the ear's).
const envPipecatSTT = "CALLPROOF_PIPECAT_STT"

// envLiveKitSTT, set to pocketsphinx, has the stock LiveKit agent hear
// the caller with its own pocketsphinx (agent.py's default) instead of
// earstt (agent.py --stt ear), to measure it; the verdicts the tests
// expect are the ear's (docs/INTEROP.md, "The stock agent").
const envLiveKitSTT = "CALLPROOF_LIVEKIT_STT"

// pipecatSTT is the bot's STT on transport: none over the eval wire (the
// caller's words arrive as text), else earstt unless envPipecatSTT says
// pocketsphinx.
func pipecatSTT(transport string) string {
	switch {
	case transport == transportPipecatEval:
		return ""
	case os.Getenv(envPipecatSTT) == sttPocketSphinx:
		return sttPocketSphinx
	}
	return sttEar
}

// assertGateRule checks that the release gate's rule holds on the run in
// out.
func assertGateRule(t *testing.T, out string, rule harness.Rule) {
	t.Helper()
	saved, err := harness.LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range harness.GateRun(saved, harness.Policy{}).Rules {
		if r.Rule == rule && !r.Holds {
			t.Errorf("the gate's %s rule fails: %+v", rule, r.Violations)
		}
	}
}

// confirmed reports whether the fake model's log (one JSON line per
// request it answered) has it say confirm.
func confirmed(log []byte, confirm string) bool {
	for _, line := range strings.Split(string(log), "\n") {
		var l struct {
			Do   string `json:"do"`
			With any    `json:"with"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && strings.HasPrefix(l.Do, "say") && l.With == confirm {
			return true
		}
	}
	return false
}

// loadScore scores call's history in the results directory out.
func loadScore(t *testing.T, out, call string) scorer.CallScore {
	t.Helper()
	saved, err := harness.LoadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range saved.Histories {
		if h.Call == call {
			return scorer.Score(h)
		}
	}
	t.Fatalf("no history of %s in %s", call, out)
	return scorer.CallScore{}
}

// TestRunEvalPipecatBot is `callproof run --transport pipecat-eval`
// against the same Pipecat bot as TestRunTwilioPipecatBot, on the same
// /ws route: Pipecat's runner recognizes the eval wire and builds its
// eval transport. The caller plays in text (send-text), the bot's words
// arrive as RTVI bot-output, its function calls as
// llm-function-call-in-progress, and its hang-up as the socket's normal
// closure. Each configuration's verdicts are the Twilio test's
// (pipecatCases, shared), and the bot's confirmation is read from its own
// words, so confirmation_matches_backend is decided. Like the Twilio test
// it fails, never skips, when Python or pipecat-ai is missing.
func TestRunEvalPipecatBot(t *testing.T) {
	ctx, python, root := pipecatVenv(t)
	// What only the eval wire shows, beside every wire's verdicts: the
	// bot's confirmation read from its own words (axis 6 decided), its
	// tool intent, and Pipecat's own word on the cancellation. The fake,
	// hearing the stop words exactly here (as over audio with earstt;
	// pocketsphinx never heard them), has nothing to put back: no write
	// landed.
	more := map[string][]string{
		"confirms":                  {`(?m)^  confirmation_matches_backend +pass$`, `agent\.tool_intent +update_order`},
		"hangs-up":                  {`(?m)^  confirmation_matches_backend +pass$`},
		"cancel-on-interruption":    {`llm-function-call-stopped.*"cancelled": true`},
		"no-cancel-on-interruption": {`llm-function-call-stopped.*"cancelled": false`},
	}
	cases := pipecatCases(root, regexp.QuoteMeta(pipecateval.ReasonClosedCleanly))
	scores := map[string]scorer.CallScore{}
	for i, tc := range cases {
		tc.show = append(tc.show, more[tc.name]...)
		tc.transport = transportPipecatEval
		cases[i] = tc
		t.Run(tc.name, func(t *testing.T) {
			scores[tc.name] = runPipecat(ctx, t, python, root, "", tc)
		})
	}
	t.Run("mcp-tools", func(t *testing.T) {
		comparePipecatMCP(ctx, t, python, root, "", "eval", cases, scores)
	})
}

// pipecatVenv installs the venv agents/pipecat runs in and returns a
// context bounding the test, its python and the repository's root. A
// missing python3 or a failed install fails the test: it never skips for
// a missing framework (only in -short mode).
func pipecatVenv(t *testing.T) (context.Context, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("places real-time calls against a Python bot")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 not found: agents/pipecat needs Python 3.10+ (scripts/install-python.sh)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	t.Cleanup(cancel)
	python, err := pipecat.Install(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, python, root
}

// freeLoopbackAddr is a loopback address with a port free a moment ago,
// for a server the test names before it starts (the bot is told the
// stub's address before callproof serves it).
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// orderDeskScript is what the fake model says in the third-party bots'
// calls (the Pipecat bot's, the stock LiveKit agent's): the order desk's
// request, its restore after a "stop", its confirmation, and end_call
// when hangUp.
func orderDeskScript(hangUp bool) pipecat.Script {
	return pipecat.Script{
		Request:      map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"},
		Restore:      map[string]string{"order_number": "5590", "delivery_date": "2026-12-01"},
		Confirm:      realtime.OrderDeskConfirm,
		RestoreReply: realtime.OrderDeskRestore,
		HangUp:       hangUp,
	}
}
