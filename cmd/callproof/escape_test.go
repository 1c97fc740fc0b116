package main

import (
	"bytes"
	"context"
	"encoding/json"
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
// characters in every string it sends (state slots and pending,
// tool_intent tool and args, speech ids and text, clear id, hangup
// reason, transfer target, close reason), then prints the results with
// each command that shows agent text: no such character reaches stdout
// or stderr raw, and the junk is shown escaped.
func TestAgentTextIsEscapedInEveryOutput(t *testing.T) {
	for _, end := range []string{hostile.EndHangup, hostile.EndTransfer, hostile.EndClose} {
		t.Run(end, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			agent, err := hostile.Start(ctx, hostile.Options{Behaviour: hostile.TerminalText, End: end}, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			dir := filepath.Join(t.TempDir(), "run")
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
			do("gate", "gate", dir)
			for name, out := range outputs {
				if r, i, bad := rawUnsafe(out); bad {
					t.Errorf("%s: %U at byte %d:\n%s", name, r, i, out)
				}
			}
			if show := outputs["show stdout"]; !strings.Contains(show, `\x1b[2J\x1b]8;;http://evil.test`) || !strings.Contains(show, `\u202e`) {
				t.Errorf("show does not carry the junk escaped:\n%s", show)
			}
			var js any
			if err := json.Unmarshal([]byte(outputs["report --json stdout"]), &js); err != nil {
				t.Errorf("report --json is no longer JSON: %v", err)
			}
		})
	}
}
