package main

import (
	"bytes"
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

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// fxStallRelay relays a native call between the caller and the agent at
// target, and calls stall (once, for the whole relay) when the caller's
// first utterance begins, before passing it on: the caller's next words
// are then on timers while stall runs.
func fxStallRelay(t *testing.T, target string, stall func()) string {
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
			if json.Unmarshal(b, &m) == nil && m.Event == native.EventSpeech && once.CompareAndSwap(false, true) {
				stall()
			}
			if agent.WriteMessage(kind, b) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
}

// A run whose process is stopped mid-call (SIGSTOP: what a machine's
// stall does to it, only longer) places the stalled call again and ends
// clean: exit 0, the call scored, the late attempt kept in attempts.jsonl
// and named on stderr. With --place-again 0 the same stall breaks the run
// (exit 3). The stop is 2 s while the caller's words wait on timers at
// scale 0.5, so its next word fires about 4 s of script time late, past
// the 2 s overload bound whatever the machine's speed.
func TestStalledRunPlacesTheCallAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("places calls in a subprocess it stops")
	}
	for _, c := range []struct {
		again    string
		code     int
		attempts int
	}{{"1", exitOK, 1}, {"0", exitBroken, 0}} {
		t.Run("place-again "+c.again, func(t *testing.T) {
			started := make(chan struct{})
			var proc *os.Process
			url := fxStallRelay(t, fxAgent(t, "careful"), func() {
				<-started
				if proc.Signal(syscall.SIGSTOP) == nil {
					time.Sleep(2 * time.Second)
					_ = proc.Signal(syscall.SIGCONT)
				}
			})
			dir := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(callproofBinary(t), "run", "--agent", url, "--out", dir,
				"--only", "corr-01", "--scale", "0.5", "--place-again", c.again)
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
				if end.Outcome != trace.OutcomeHarnessError || !strings.HasPrefix(end.Reason, harness.ReasonOverloaded) {
					t.Errorf("the stalled call ended %s (%s), want an overloaded harness error", end.Outcome, end.Reason)
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
			if r := earlier[0].End().Reason; !strings.HasPrefix(r, harness.ReasonOverloaded) {
				t.Errorf("the attempt kept ended %q, want overloaded", r)
			}
			for _, want := range []string{"callproof run: corr-01 placed again (attempt 1 kept in attempts.jsonl): overloaded",
				"callproof run: attempts callproof ran late in, placed again: 1 (kept in " + filepath.Join(dir, harness.AttemptsFile) + ")"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, &stderr)
				}
			}
		})
	}
}
