package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/callproof/callproof/agents/hostile"
	"github.com/callproof/callproof/internal/safetext"
)

// rawUnsafe reports the first character of out that no command may write
// as such (the line breaks and tabs of the command's own layout aside).
func rawUnsafe(out string) (rune, int, bool) {
	for i, r := range out {
		if r == '\n' || r == '\t' || r == '\r' {
			continue
		}
		if r == utf8.RuneError || !safetext.Safe(r) {
			return r, i, true
		}
	}
	return 0, 0, false
}

// TestAgentTextIsEscapedInEveryOutput runs calls against an agent that
// puts terminal control sequences, bidi overrides and zero-width
// characters in every string it sends (ack agent name, state slots and
// pending, tool_intent tool and args, speech ids and text, clear id,
// hangup reason, transfer target, close reason), then prints the results
// with every command that shows agent text (run, report, show, gate with
// its JUnit, Markdown and history files, history, calibrate, replay,
// sweep, check): no such character reaches stdout, stderr or a file
// raw, and the junk is shown escaped.
//
// Parallel, its ends with one another and with other parallel tests: only
// the bytes written are checked, never a verdict or a time, and each end
// has its own agent and directory.
func TestAgentTextIsEscapedInEveryOutput(t *testing.T) {
	t.Parallel()
	for _, end := range []string{hostile.EndHangup, hostile.EndTransfer, hostile.EndClose} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			agent, err := hostile.Start(ctx, hostile.Options{Behaviour: hostile.TerminalText, End: end}, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "run")
			file := func(name string) string { return filepath.Join(tmp, name) }
			labels := "calls:\n  - id: corr-01\n    axes: {captured: either, active_state_correct: either, tool_args_correct: either,\n" +
				"           stale_write_prevented: either, backend_correct: either, confirmation_matches_backend: either}\n"
			if err := os.WriteFile(file("labels.yaml"), []byte(labels), 0o644); err != nil {
				t.Fatal(err)
			}
			outputs := map[string]string{}
			do := func(name string, args ...string) {
				var out, errw bytes.Buffer
				run(args, &out, &errw)
				outputs[name+" stdout"] = out.String()
				outputs[name+" stderr"] = errw.String()
			}
			do("run", "run", "--agent", agent.URL, "--out", dir, "--only", "corr-01", "--scale", "0.05")
			do("report", "report", dir)
			do("report --json", "report", "--json", dir)
			do("show", "show", dir, "corr-01")
			do("gate", "gate", dir, "--junit", file("junit.xml"), "--markdown", file("gate.md"),
				"--history", file("history.jsonl"), "--agent-version", "v1"+hostile.TerminalJunk)
			do("history", "history", file("history.jsonl"))
			do("calibrate", "calibrate", file("labels.yaml"), dir)
			do("replay", "replay", dir, "corr-01", "--agent", agent.URL, "--out", file("replay"))
			do("sweep", "sweep", filepath.Join("..", "..", "examples", "sweep", "correction-in-flight.yaml"),
				"--param", "correct.delay=0..700/700", "--agent", agent.URL, "--scale", "0.05", "--out", file("sweep"))
			// At the scale of the run: check's default, real time, took 15 s
			// of the 16 and prints the same lines.
			do("check", "check", "--agent", agent.URL, "--scale", "0.05")
			for _, f := range []string{"junit.xml", "gate.md", "history.jsonl"} {
				b, err := os.ReadFile(file(f))
				if err != nil {
					t.Fatal(err)
				}
				outputs[f] = string(b)
			}
			for name, out := range outputs {
				if r, i, bad := rawUnsafe(out); bad {
					t.Errorf("%s: %U at byte %d:\n%s", name, r, i, out)
				}
			}
			if show := outputs["show stdout"]; !strings.Contains(show, `\x1b[2J\x1b]8;;http://evil.test`) || !strings.Contains(show, `\u202e`) {
				t.Errorf("show does not carry the junk escaped:\n%s", show)
			}
			if h := outputs["history stdout"]; !strings.Contains(h, `v1\x1b[2J`) {
				t.Errorf("history does not show the version escaped:\n%s", h)
			}
			var js any
			if err := json.Unmarshal([]byte(outputs["report --json stdout"]), &js); err != nil {
				t.Errorf("report --json is no longer JSON: %v", err)
			}
			if err := xml.Unmarshal([]byte(outputs["junit.xml"]), &js); err != nil {
				t.Errorf("the JUnit file is no longer XML: %v", err)
			}
		})
	}
}
