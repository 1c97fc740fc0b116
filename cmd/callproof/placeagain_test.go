package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/callsim"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// fxRelay relays calls between the caller and the agent at target (a
// WebSocket dialect whose messages carry an "event", native or Twilio's),
// and calls at (once, for the whole relay) when the first caller message
// of that event arrives, before passing it on.
func fxRelay(t *testing.T, target, event string, at func()) string {
	t.Helper()
	var once atomic.Bool
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer caller.Close()
		agent, _, err := websocket.DefaultDialer.Dial(target, nil)
		if err != nil {
			return
		}
		defer agent.Close()
		go func() {
			for {
				kind, b, err := agent.ReadMessage()
				if err != nil || caller.WriteMessage(kind, b) != nil {
					caller.Close()
					return
				}
			}
		}()
		for {
			kind, b, err := caller.ReadMessage()
			if err != nil {
				return
			}
			var m native.Message
			if json.Unmarshal(b, &m) == nil && m.Event == event && once.CompareAndSwap(false, true) {
				at()
			}
			if agent.WriteMessage(kind, b) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
}

// stallHello is a scenario of a greeting, a few words and a hang-up.
const stallHello = `id: stall-hello
category: interruption
description: "A greeting, a word and a hang-up: a short call to stop mid-stream."
steps:
  - id: hi
    do: say
    text: "Hi there."
    on: {event: agent.speech_end, timeout: 6s}
  - id: wait
    do: silence
    duration: 1s
  - id: bye
    do: hangup
expected: {captured: true, active_state_correct: true, tool_args_correct: true, stale_write_prevented: true,
           backend_correct: true, confirmation_matches_backend: true, should_execute: false}
`

// A run whose process is stopped mid-call (SIGSTOP: what a machine's
// stall does to it, only longer) places the stalled call again and ends
// clean: exit 0, the call scored, the late attempt kept in attempts.jsonl
// and named on stderr. With --place-again 0 the same stall breaks the run
// (exit 3). The call is over Twilio, whose caller sends a frame every
// 20 ms from a schedule fixed at its start: a stop of 300 ms from its
// first frame on leaves a frame at least 280 ms late, past the 60 ms
// jitter allowance, wherever in the caller's loop the stop falls. The
// call is a short one of the test's own (about 4 s), whose verdicts do
// not matter here: only whether it was scored.
func TestStalledRunPlacesTheCallAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("places real-time audio calls in a subprocess it stops")
	}
	cache := filepath.Join(t.TempDir(), "speech")
	cfg := agents.Careful()
	cfg.Audio = &agents.AudioConfig{SpeechCache: cache}
	careful, err := agents.Start(context.Background(), cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = careful.Close() })
	suite := filepath.Join(t.TempDir(), "stall-hello.yaml")
	if err := os.WriteFile(suite, []byte(stallHello), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		again    string
		code     int
		attempts int
	}{{"1", exitOK, 1}, {"0", exitBroken, 0}} {
		t.Run("place-again "+c.again, func(t *testing.T) {
			started := make(chan struct{})
			var proc *os.Process
			url := fxRelay(t, careful.URL, "media", func() {
				<-started
				if proc.Signal(syscall.SIGSTOP) == nil {
					time.Sleep(300 * time.Millisecond)
					_ = proc.Signal(syscall.SIGCONT)
				}
			})
			dir := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(callproofBinary(t), "run", "--transport", "twilio", "--agent", url, "--out", dir,
				"--speech-cache", cache, "--suite", suite, "--place-again", c.again)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			proc = cmd.Process
			close(started)
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			code := exitCode(t, cmd.Wait())
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, &stdout, &stderr)
			}
			saved, err := harness.LoadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(saved.Histories) != 1 {
				t.Fatalf("%d calls in the run, want 1", len(saved.Histories))
			}
			end := saved.Histories[0].End()
			earlier, err := harness.ReadRun(filepath.Join(dir, harness.AttemptsFile))
			if c.attempts == 0 {
				if end.Outcome != trace.OutcomeHarnessError || !strings.HasPrefix(end.Reason, callsim.ReasonBehind) {
					t.Errorf("the stalled call ended %s (%s), want a harness error: %s", end.Outcome, end.Reason, callsim.ReasonBehind)
				}
				if err == nil {
					t.Errorf("%d attempts kept with --place-again 0", len(earlier))
				}
				return
			}
			if end.Outcome != "" {
				t.Errorf("the call placed again ended %s (%s), want scored", end.Outcome, end.Reason)
			}
			if err != nil || len(earlier) != c.attempts {
				t.Fatalf("attempts kept: %d (%v), want %d", len(earlier), err, c.attempts)
			}
			if r := earlier[0].End().Reason; !strings.HasPrefix(r, callsim.ReasonBehind) {
				t.Errorf("the attempt kept ended %q, want %s", r, callsim.ReasonBehind)
			}
			for _, want := range []string{"callproof run: stall-hello placed again (attempt 1 kept in attempts.jsonl): " + callsim.ReasonBehind,
				"callproof run: attempts callproof ran late in, placed again: 1 (kept in " + filepath.Join(dir, harness.AttemptsFile) + ")"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, &stderr)
				}
			}
		})
	}
}
