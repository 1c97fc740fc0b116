package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callproof/callproof/agents"
	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// fxAgent serves a reference agent on loopback for the test.
func fxAgent(t *testing.T, name string) string {
	t.Helper()
	cfg, err := agents.Named(name)
	if err != nil {
		t.Fatal(err)
	}
	running, err := agents.Start(context.Background(), cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { running.Close() })
	return running.URL
}

// fxCLI runs a command in-process and returns its exit code and output.
func fxCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// gateVerdicts is what a gate says, without the run it says it of.
func gateVerdicts(t *testing.T, dir string) (int, []bool) {
	t.Helper()
	code, out, errOut := fxCLI(t, "gate", "--json", dir)
	var g harness.GateResult
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("gate --json: %v\n%s\n%s", err, out, errOut)
	}
	holds := []bool{g.Holds}
	for _, r := range g.Rules {
		holds = append(holds, r.Holds)
	}
	return code, holds
}

// A run killed in the middle of a write (simulated: run.jsonl cut
// mid-line, no completion marker) fails the gate as incomplete; --resume
// places only what is missing, and the run then has every call exactly
// once and gates as the uninterrupted run did.
func TestResumeAfterKill(t *testing.T) {
	url := fxAgent(t, "careful")
	whole := filepath.Join(t.TempDir(), "whole")
	only := "corr-01,corr-02,int-05,tf-06"
	if code, _, errOut := fxCLI(t, "run", "--agent", url, "--out", whole, "--only", only, "--scale", "0.05"); code != exitOK {
		t.Fatalf("run exit %d: %s", code, errOut)
	}
	wantCode, wantHolds := gateVerdicts(t, whole)
	if wantCode != exitOK {
		t.Fatalf("the careful run's gate exits %d", wantCode)
	}

	killed := filepath.Join(t.TempDir(), "killed")
	if err := os.MkdirAll(killed, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(whole, harness.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	cut := len(b) * 3 / 5
	for b[cut-1] == '\n' { // mid-line, not at a line's end
		cut--
	}
	copyFile(t, filepath.Join(whole, harness.MetaFile), filepath.Join(killed, harness.MetaFile))
	if err := os.WriteFile(filepath.Join(killed, harness.RunFile), b[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := fxCLI(t, "gate", killed)
	if code != exitIncomplete || !strings.Contains(out, "INCOMPLETE RUN") || !strings.Contains(errOut, "torn last line") {
		t.Fatalf("gate on the killed run: exit %d\n%s\n%s", code, out, errOut)
	}
	// score, show and report still read what is there.
	if code, _, errOut := fxCLI(t, "score", killed); code != exitOK || !strings.Contains(errOut, "calls missing") {
		t.Errorf("score on the killed run: exit %d: %s", code, errOut)
	}

	code, out, errOut = fxCLI(t, "run", "--resume", killed, "--agent", url)
	if code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "resuming "+killed) {
		t.Errorf("resume says nothing of what it does: %s", errOut)
	}
	saved, err := harness.LoadRun(killed)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, h := range saved.Histories {
		seen[h.Call]++
	}
	for _, id := range strings.Split(only, ",") {
		if seen[id] != 1 {
			t.Errorf("call %s appears %d times after the resume, want once", id, seen[id])
		}
	}
	if len(saved.Histories) != 4 || len(saved.Warnings) != 0 {
		t.Errorf("after the resume: %d histories, warnings %v", len(saved.Histories), saved.Warnings)
	}
	gotCode, gotHolds := gateVerdicts(t, killed)
	if gotCode != wantCode || !equalBools(gotHolds, wantHolds) {
		t.Errorf("resumed run gates %d %v, the uninterrupted one %d %v", gotCode, gotHolds, wantCode, wantHolds)
	}

	// Resuming a finished run places nothing and keeps it whole.
	code, _, errOut = fxCLI(t, "run", "--resume", killed, "--agent", url)
	if code != exitOK || !strings.Contains(errOut, "4 calls kept, 0 to place") {
		t.Errorf("second resume: exit %d: %s", code, errOut)
	}

	// A run whose output is lost (run > /dev/full) never exits 0.
	var stderr bytes.Buffer
	code = run([]string{"run", "--agent", url, "--out", filepath.Join(t.TempDir(), "full"), "--only", "corr-01", "--scale", "0.05"}, failingWriter{}, &stderr)
	if code == exitOK {
		t.Errorf("run with a failing stdout exits 0: %s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "writing output") {
		t.Errorf("run with a failing stdout says: %s", stderr.String())
	}

	// --force replaces a run; --rerun-failed into a new directory; merge.
	if code, _, errOut := fxCLI(t, "run", "--agent", url, "--out", whole, "--only", "corr-01", "--scale", "0.05"); code != exitUsage || !strings.Contains(errOut, "not empty") {
		t.Errorf("run into a used --out: exit %d: %s", code, errOut)
	}
	if code, _, errOut := fxCLI(t, "run", "--agent", url, "--out", whole, "--only", "corr-01", "--scale", "0.05", "--force"); code != exitOK {
		t.Errorf("run --force: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(whole, harness.DoneFile)); err != nil {
		t.Errorf("the forced run is complete: %v", err)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if code, out, errOut := fxCLI(t, "merge", merged, killed, whole); code != exitOK || !strings.Contains(out, "4 calls, 1 earlier attempts") {
		t.Errorf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _ := gateVerdicts(t, merged); code != exitOK {
		t.Errorf("merged run gates %d", code)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// callproofBinary is this test binary under the name callproof: TestMain
// runs it as the command (testscript.Main dispatches on the name).
func callproofBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "callproof")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// startRun starts `callproof run` as a subprocess against a slow (real
// time) agent and returns once the first call is under way: its caller
// has begun to speak, at scale 1, seconds before any call can end.
func startRun(t *testing.T, dir string) (*exec.Cmd, *bufio.Reader, *bytes.Buffer) {
	t.Helper()
	underway := make(chan struct{})
	url := fxRelay(t, fxAgent(t, "careful"), native.EventSpeech, func() { close(underway) })
	cmd := exec.Command(callproofBinary(t), "run", "--agent", url, "--out", dir,
		"--only", "corr-01,corr-02,int-05,tf-06", "--concurrency", "2", "--scale", "1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case <-underway:
	case <-time.After(time.Minute):
		t.Fatal("no call got under way in a minute")
	}
	return cmd, bufio.NewReader(pipe), &stdout
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ee != nil {
		return ee.ExitCode()
	}
	return 0
}

// Ctrl-C stops a run without waiting for its calls: every unfinished call
// is recorded as a harness error "run cancelled" (at scale 1 each call
// lasts well beyond its first words, so a run that waited for them would
// have none), the run says it was cut short (exit 4), and the gate will
// not pass it.
func TestInterruptStopsARun(t *testing.T) {
	if testing.Short() {
		t.Skip("places real-time calls in a subprocess")
	}
	dir := filepath.Join(t.TempDir(), "run")
	cmd, stderr, stdout := startRun(t, dir)
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	errOut, _ := io.ReadAll(stderr)
	code := exitCode(t, cmd.Wait())
	t.Logf("stopped %v after SIGINT", time.Since(start).Round(time.Millisecond))
	if code != exitIncomplete {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitIncomplete, stdout, errOut)
	}
	if !strings.Contains(string(errOut), "interrupted") || !strings.Contains(string(errOut), "run --resume "+dir) {
		t.Errorf("stderr does not say what happened and how to finish:\n%s", errOut)
	}
	saved, err := harness.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Histories) != 4 {
		t.Errorf("%d histories, want all 4 calls recorded", len(saved.Histories))
	}
	cancelled := 0
	for _, h := range saved.Histories {
		end := h.End()
		if end.Outcome == trace.OutcomeHarnessError && end.Reason == harness.ReasonCancelled {
			cancelled++
		}
	}
	if cancelled == 0 || saved.Done == nil || len(saved.Done.Cancelled) != cancelled {
		t.Errorf("%d calls recorded as cancelled, marker %+v", cancelled, saved.Done)
	}
	if code, out, _ := fxCLI(t, "gate", dir); code != exitIncomplete || !strings.Contains(out, "run cancelled") {
		t.Errorf("gate on the interrupted run: exit %d\n%s", code, out)
	}
}

// A second Ctrl-C exits at once.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("places real-time calls in a subprocess")
	}
	cmd, stderr, _ := startRun(t, filepath.Join(t.TempDir(), "run"))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// Wait for the first to be taken, then send the second at once.
	if line, err := stderr.ReadString(')'); err != nil || !strings.Contains(line, "interrupted") {
		t.Fatalf("first interrupt: %q %v", line, err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go io.Copy(io.Discard, stderr)
	code := exitCode(t, cmd.Wait())
	t.Logf("exit %d after the second interrupt", code)
	if code != exitKilled && code != exitIncomplete {
		t.Errorf("exit %d, want %d (or %d if the first had already finished)", code, exitKilled, exitIncomplete)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v to exit after the second interrupt", took)
	}
}

// TestKill9AtAnyMoment kills `callproof run` with SIGKILL at several
// moments (before any call finished, between calls, near the end), then
// finishes each run with --resume: every planned call is there exactly
// once, and the gate says what it says of an uninterrupted run.
func TestKill9AtAnyMoment(t *testing.T) {
	if testing.Short() {
		t.Skip("places calls in a subprocess")
	}
	url := fxAgent(t, "careful")
	only := []string{"corr-01", "corr-02", "int-05", "tf-06"}
	whole := filepath.Join(t.TempDir(), "whole")
	if code, _, errOut := fxCLI(t, "run", "--agent", url, "--out", whole, "--only", strings.Join(only, ","), "--scale", "0.1", "--concurrency", "1"); code != exitOK {
		t.Fatalf("uninterrupted run exit %d: %s", code, errOut)
	}
	wantCode, wantHolds := gateVerdicts(t, whole)
	bin := callproofBinary(t)
	for _, after := range []time.Duration{150 * time.Millisecond, 900 * time.Millisecond, 1800 * time.Millisecond, 2700 * time.Millisecond, 3200 * time.Millisecond, 3600 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "killed")
			cmd := exec.Command(bin, "run", "--agent", url, "--out", dir, "--only", strings.Join(only, ","), "--scale", "0.1", "--concurrency", "1")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(after)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			args := []string{"run", "--resume", dir, "--agent", url}
			if before, err := harness.LoadRun(dir); err != nil {
				// Killed before the directory was made: a fresh run is the resume.
				args = []string{"run", "--agent", url, "--out", dir, "--force", "--only", strings.Join(only, ","), "--scale", "0.1", "--concurrency", "1"}
				t.Logf("killed after %v: no run yet (%v)", after, err)
			} else {
				t.Logf("killed after %v: %d complete histories, warnings %v", after, len(before.Histories), before.Warnings)
			}
			if code, out, errOut := fxCLI(t, args...); code != exitOK {
				t.Fatalf("%s exit %d\n%s\n%s", args[1], code, out, errOut)
			}
			saved, err := harness.LoadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, h := range saved.Histories {
				seen[h.Call]++
			}
			for _, id := range only {
				if seen[id] != 1 {
					t.Errorf("call %s appears %d times after the resume, want once", id, seen[id])
				}
			}
			if len(saved.Histories) != len(only) || len(saved.Warnings) != 0 {
				t.Errorf("%d histories, warnings %v", len(saved.Histories), saved.Warnings)
			}
			if code, holds := gateVerdicts(t, dir); code != wantCode || !equalBools(holds, wantHolds) {
				t.Errorf("gate after kill and resume: exit %d %v, uninterrupted: exit %d %v", code, holds, wantCode, wantHolds)
			}
		})
	}
}
