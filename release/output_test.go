package release

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/scorer"
)

// parsed is what a JUnit consumer reads back.
type parsed struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Errors     int    `xml:"errors,attr"`
		Time       string `xml:"time,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func durations(scores []scorer.CallScore) map[string]time.Duration {
	d := map[string]time.Duration{}
	for i, s := range scores {
		d[s.Call] = time.Duration(1000+250*i) * time.Millisecond
	}
	return d
}

func TestWriteJUnit(t *testing.T) {
	scores := fixture()
	// A finding with characters XML must escape, and a control character
	// XML 1.0 cannot carry at all.
	scores[4].Axes[2].Findings[0].Text = `args {"date": "<Mar 4>"} & more` + "\x01"
	tr := Trials(scores, 3)
	var b bytes.Buffer
	if err := WriteJUnitTimed(&b, "core", scores, tr, durations(scores)); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.xml.golden", b.Bytes())

	var p parsed
	if err := xml.Unmarshal(b.Bytes(), &p); err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	// Cases: corr-02, tf-01, tf-02 fail; int-01 errs (only a harness
	// error); tf-04 is skipped (excluded); corr-01 and tf-03 pass.
	if p.Tests != 7 || p.Failures != 3 || p.Errors != 1 || p.Skipped != 1 || len(p.Suites) != 1 {
		t.Fatalf("counts %d tests %d failures %d errors %d skipped", p.Tests, p.Failures, p.Errors, p.Skipped)
	}
	s := p.Suites[0]
	if s.Name != "core" || s.Tests != 7 || s.Failures != 3 || s.Errors != 1 {
		t.Errorf("suite %s %d/%d/%d", s.Name, s.Tests, s.Failures, s.Errors)
	}
	// corr-01: calls 0..2 of the fixture, 1 + 1.25 + 1.5 s.
	if c := s.Cases[0]; c.Name != "corr-01" || c.Classname != "core" || c.Time != "3.750" || c.Failure != nil || c.Error != nil {
		t.Errorf("corr-01 case %+v", c)
	}
	c := s.Cases[1]
	if c.Name != "corr-02" || c.Failure == nil || c.Error == nil {
		t.Fatalf("corr-02 case %+v", c)
	}
	if want := "integrity failed in 1 of 3 trials; axes: tool_args_correct, stale_write_prevented; primary: stale_tool_args"; c.Failure.Message != want {
		t.Errorf("message %q, want %q", c.Failure.Message, want)
	}
	if !strings.Contains(c.Failure.Body, `tool_args_correct fail: args {"date": "<Mar 4>"} & more\x01`) || strings.Contains(c.Failure.Body, "second finding") {
		t.Errorf("body does not carry the first finding alone:\n%s", c.Failure.Body)
	}
	props := map[string]string{}
	for _, pr := range s.Properties {
		props[pr.Name] = pr.Value
	}
	if props["k"] != "3" || props["pass^k"] != "0.2500" || !strings.HasPrefix(props["integrity"], "10/16 [") {
		t.Errorf("suite properties %v", props)
	}

	// Without durations there is no time at all rather than a made-up zero.
	b.Reset()
	if err := WriteJUnit(&b, "core", scores, tr); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "time=") {
		t.Errorf("untimed output has a time attribute")
	}
	if err := xml.Unmarshal(b.Bytes(), &p); err != nil {
		t.Fatalf("untimed output does not parse: %v", err)
	}
}

func TestWriteMarkdown(t *testing.T) {
	tr := Trials(fixture(), 3)
	var b bytes.Buffer
	if err := WriteMarkdown(&b, "careful | core", GateFails, tr, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.md.golden", b.Bytes())

	base := runOf(3,
		scen{"a", "h1", []string{ok6, ok6, ok6}},
		scen{"b", "h2", []string{"PPFPPP", ok6, ok6}},
		scen{"c", "h3", []string{ok6, ok6, ok6}},
		scen{"d", "h4", []string{ok6, ok6, ok6}},
		scen{"gone", "h5", []string{ok6}})
	cur := runOf(3,
		scen{"a", "h1", []string{ok6, "PPFFPP", ok6}},
		scen{"b", "h2", []string{ok6, ok6, ok6}},
		scen{"c", "h3", []string{ok6, ok6, "E:PPPPPU"}},
		scen{"d", "h4-new", []string{ok6, ok6, ok6}},
		scen{"new", "h6", []string{ok6}})
	cmp := Compare(base, cur)
	b.Reset()
	if err := WriteMarkdown(&b, "careful vs baseline", GateFails, tr, &cmp); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md.golden", b.Bytes())
}

func TestMdText(t *testing.T) {
	if got := mdText("a|b\nc`d"); got != `a\|b\nc'd` {
		t.Errorf("mdText = %q", got)
	}
}

// TestWriteMarkdownEmpty: a run with nothing counted still says something
// sensible rather than dividing by zero.
func TestWriteMarkdownEmpty(t *testing.T) {
	var b bytes.Buffer
	tr := Trials([]scorer.CallScore{score("corr-01", "H", "")}, 3)
	if err := WriteMarkdown(&b, "broken", GateBroken, tr, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Release gate: broken**", "| captured | 0 / 0 | 0.0 % | - |", "pass^3: undefined, no scenario has 3 counted trials.", "`corr-01`"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
