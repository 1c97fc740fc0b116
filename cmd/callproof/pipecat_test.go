package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/agents/pipecat"
	"github.com/callproof/callproof/agents/realtime"
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
	if testing.Short() {
		t.Skip("places real-time audio calls against a Python bot")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 not found: agents/pipecat needs Python 3.10+ (scripts/install-python.sh)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	python, err := pipecat.Install(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	speech := t.TempDir()
	for _, tc := range []struct {
		name   string
		hangUp bool
		lines  []string
	}{
		{name: "confirms", lines: []string{`call\.end +completed: caller hung up`}},
		{name: "hangs-up", hangUp: true, lines: []string{
			`agent\.hangup +agent closed the stream \(normal closure\)`,
			`call\.end +completed: agent hung up`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runPipecat(ctx, t, python, root, speech, tc.hangUp, tc.lines)
		})
	}
}

// runPipecat starts the fake and the bot, runs pc-slow-update over
// Twilio, and checks `callproof show` for lines besides the ledger and
// axes 1-5 passing.
func runPipecat(ctx context.Context, t *testing.T, python, root, speech string, hangUp bool, lines []string) {
	sctx, scancel := context.WithTimeout(ctx, 2*time.Minute)
	defer scancel()
	fakeLog := filepath.Join(t.TempDir(), "fake.jsonl")
	fake, err := pipecat.StartFake(sctx, python, root, fakeLog, pipecat.Script{
		Request:      map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"},
		Restore:      map[string]string{"order_number": "5590", "delivery_date": "2026-12-01"},
		Confirm:      realtime.OrderDeskConfirm,
		RestoreReply: realtime.OrderDeskRestore,
		HangUp:       hangUp,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = fake.Stop() }()
	bot, err := pipecat.StartBot(sctx, python, root, fake.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = bot.Stop() }()

	suite := filepath.Join(root, "agents", "pipecat", "testdata", "twilio")
	out := filepath.Join(t.TempDir(), "out")
	cli := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, stdout, stderr := cli("run", "--transport", "twilio", "--agent", bot.URL, "--suite", suite, "--out", out,
		"--concurrency", "1", "--speech-cache", speech)
	for attempt := 2; code == exitBroken && attempt <= placements; attempt++ {
		t.Logf("attempt %d: exit %d: %s", attempt-1, code, strings.TrimSpace(stderr))
		code, stdout, stderr = cli("run", "--resume", out, "--concurrency", "1", "--speech-cache", speech)
	}
	if code == exitBroken {
		skipIfBehind(t, out, stderr)
	}
	if code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s\nbot log:\n%s", code, stdout, stderr, bot.Log())
	}
	t.Logf("the run's table:\n%s", stdout)
	code, timeline, stderr := cli("show", out, "pc-slow-update")
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	// The five axes the ledger and the timeline decide; the sixth hangs
	// on what callproof's recognizer made of flite's words.
	lines = append(lines,
		`fault\.applied +r1 update_order latency`,
		`tool\.committed +r1 update_order orders/5590 v1->v2 .* -> \{delivery_date=2026-12-03 `,
		`(?m)^  confirmation_matches_backend +(pass|unknown|fail)$`,
	)
	for _, axis := range []string{"captured", "active_state_correct", "tool_args_correct", "stale_write_prevented", "backend_correct"} {
		lines = append(lines, `(?m)^  `+axis+` +pass$`)
	}
	for _, re := range lines {
		if !regexp.MustCompile(re).MatchString(timeline) {
			t.Errorf("show pc-slow-update: no line matching %s\n%s", re, timeline)
		}
	}
	// One write: the bot did not act twice on one request.
	if regexp.MustCompile(`tool\.received +r2 `).MatchString(timeline) {
		log, _ := os.ReadFile(fakeLog)
		t.Errorf("show pc-slow-update: a second write\n%s\nthe fake model's requests:\n%s", timeline, log)
	}
	// uvicorn shuts down on SIGTERM and then dies of it: the exit status
	// is the signal's, but it must not need killing.
	if _, err := bot.Stop(); err != nil {
		t.Errorf("bot: %v\n%s", err, bot.Log())
	}
}
