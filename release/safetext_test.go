package release

import (
	"bytes"
	"encoding/xml"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/callproof/callproof/internal/safetext"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// hostileText is agent text built to act on a terminal or a viewer: a
// screen clear, an OSC 8 hyperlink, colours, bidi overrides, zero-width
// characters, C1 controls, DEL and line breaks.
const hostileText = "\x1b[2J\x1b]8;;http://x.test\x1b\\link\x1b]8;;\x1b\\\x1b[31mred\x1b[0m\u202eevil\u202c\u2066i\u2069\u200bz\u200d\ufeff\u0085\u009b\x7f\x00\r\nend"

// unsafeIn reports an unsafe character in out other than the line breaks
// and tabs the writer puts there itself.
func unsafeIn(out string) (rune, bool) {
	for _, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if r == utf8.RuneError || !safetext.Safe(r) {
			return r, true
		}
	}
	return 0, false
}

// hostileScores is the fixture with agent text in every free-text field
// Markdown and JUnit carry: outcome reasons and findings.
func hostileScores() []scorer.CallScore {
	s := fixture()
	for i := range s {
		s[i].Reason = "hangup " + hostileText
		if s[i].Outcome == trace.OutcomeScored {
			s[i].Outcome, s[i].Integrity = trace.OutcomeAgentError, false
		}
		for j := range s[i].Axes {
			s[i].Axes[j].Findings = []scorer.Finding{{Text: "args " + hostileText}}
		}
	}
	return s
}

func TestJUnitAndMarkdownEscapeAgentText(t *testing.T) {
	scores := hostileScores()
	tr := Trials(scores, 3)
	var j bytes.Buffer
	if err := WriteJUnitTimed(&j, "core", scores, tr, durations(scores)); err != nil {
		t.Fatal(err)
	}
	if r, bad := unsafeIn(j.String()); bad {
		t.Fatalf("JUnit carries %U raw", r)
	}
	var p parsed
	if err := xml.Unmarshal(j.Bytes(), &p); err != nil {
		t.Fatalf("JUnit does not parse: %v", err)
	}
	if !strings.Contains(j.String(), `hangup \x1b[2J\x1b]8;;http://x.test\x1b\link`) || !strings.Contains(j.String(), `\u202eevil`) {
		t.Errorf("the escapes are not visible:\n%s", j.String())
	}
	var m bytes.Buffer
	if err := WriteMarkdown(&m, "core "+hostileText, GateFails, tr, nil); err != nil {
		t.Fatal(err)
	}
	if r, bad := unsafeIn(m.String()); bad {
		t.Fatalf("Markdown carries %U raw", r)
	}
	if !strings.Contains(m.String(), `# core \x1b[2J`) {
		t.Errorf("the title's escapes are not visible:\n%s", m.String())
	}
}

// TestHistoryEscapesText: a version with hostile text reaches neither the
// history file nor the trend table raw, and reads back unchanged.
func TestHistoryEscapesText(t *testing.T) {
	path := t.TempDir() + "/history.jsonl"
	l := historyLines()[0]
	l.AgentVersion = "v1" + hostileText
	l.Gate = GateHolds + hostileText
	if err := AppendHistory(path, l); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r, bad := unsafeIn(string(data)); bad {
		t.Errorf("history file holds %U raw:\n%s", r, data)
	}
	got, warnings, err := ReadHistory(path)
	if err != nil || len(warnings) > 0 || len(got) != 1 || got[0].AgentVersion != l.AgentVersion {
		t.Fatalf("read back %+v, %v, %v", got, warnings, err)
	}
	var b bytes.Buffer
	if err := WriteTrend(&b, got); err != nil {
		t.Fatal(err)
	}
	if r, bad := unsafeIn(b.String()); bad {
		t.Errorf("trend holds %U raw:\n%s", r, b.String())
	}
	if n := strings.Count(b.String(), "\n"); n != 2 {
		t.Errorf("the version broke the table into %d lines:\n%s", n, b.String())
	}
}
