package release

import (
	"encoding/xml"
	"fmt"
	"github.com/callproof/callproof/internal/safetext"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// JUnit mapping (docs/GATING.md): a scenario is a test case. A case fails
// when any counted trial lacks integrity; it errs (and does not fail) when
// its only trouble is harness errors; it is skipped when every call of it
// was excluded. tests/failures/errors/skipped count cases by that status.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr,omitempty"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname  string          `xml:"classname,attr"`
	Name       string          `xml:"name,attr"`
	Time       string          `xml:"time,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitProblem   `xml:"failure,omitempty"`
	Error      *junitProblem   `xml:"error,omitempty"`
	Skipped    *junitProblem   `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes JUnit XML with one test case per scenario. Call scores
// carry no duration, so cases have no time; WriteJUnitTimed adds them.
func WriteJUnit(w io.Writer, suiteName string, scores []scorer.CallScore, trials TrialReport) error {
	return WriteJUnitTimed(w, suiteName, scores, trials, nil)
}

// WriteJUnitTimed is WriteJUnit with each call's duration (by call id); a
// case's time is the sum over its calls, the suite's the sum over cases.
func WriteJUnitTimed(w io.Writer, suiteName string, scores []scorer.CallScore, trials TrialReport, durations map[string]time.Duration) error {
	_, groups := groupScores(scores)
	suite := junitSuite{Name: suiteName, Properties: []junitProperty{
		{"k", strconv.Itoa(trials.K)},
		{"pass^k", fmt.Sprintf("%.4f", trials.PassK)},
		{"pass^k.scenarios", strconv.Itoa(trials.PassKScenarios)},
		{IntegrityMeasure, tallyText(trials.Integrity)},
	}}
	for _, a := range trials.Axes {
		suite.Properties = append(suite.Properties, junitProperty{string(a.Axis), tallyText(a.Tally)})
	}
	var total time.Duration
	for _, st := range trials.Scenarios {
		var d time.Duration
		for _, c := range groups[st.Scenario] {
			d += durations[c.Call]
		}
		total += d
		jc := junitCase{Classname: suiteName, Name: st.Scenario, Time: seconds(d, durations != nil)}
		jc.Properties = append(jc.Properties, junitProperty{"trials", strconv.Itoa(st.Trials())}, junitProperty{IntegrityMeasure, tallyText(st.Integrity)})
		if st.Short {
			jc.Properties = append(jc.Properties, junitProperty{"pass^k", "undefined: fewer than k trials"})
		} else {
			jc.Properties = append(jc.Properties, junitProperty{"pass^k", fmt.Sprintf("%.4f", st.PassK)})
		}
		if st.Flaky {
			jc.Properties = append(jc.Properties, junitProperty{"flaky", strings.Join(st.FlakyOn, ",")})
		}
		jc.Failure = junitFailure(st, groups[st.Scenario])
		if len(st.HarnessErrors) > 0 {
			jc.Error = junitError(groups[st.Scenario])
		}
		switch {
		case jc.Failure != nil:
			suite.Failures++
		case jc.Error != nil:
			suite.Errors++
		case st.Trials() == 0:
			jc.Skipped = &junitProblem{Message: "every call excluded: " + strings.Join(st.Excluded, ", ")}
			suite.Skipped++
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Time = seconds(total, durations != nil)
	doc := junitSuites{Name: suiteName, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []junitSuite{suite}}
	// Agent text is escaped where it is put in; the stream is guarded as
	// well, so no field escapes the rule (and XML's forbidden characters,
	// which the encoder would turn into U+FFFD, show as escapes).
	sw := safetext.NewWriter(w)
	w = sw
	defer sw.Flush()
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitFailure describes the trials without integrity: the message names
// the failing axes and primary buckets, the body each trial's first reason.
func junitFailure(st ScenarioTrials, calls []scorer.CallScore) *junitProblem {
	var failed []scorer.CallScore
	for _, c := range calls {
		if counted(c.Outcome) && !c.Integrity {
			failed = append(failed, c)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	axes := map[scorer.Axis]bool{}
	var buckets []string
	var outcomes []string
	seenB, seenO := map[scorer.Bucket]bool{}, map[string]bool{}
	var body strings.Builder
	for _, c := range failed {
		fmt.Fprintf(&body, "%s: %s", c.Call, c.Outcome)
		if c.Reason != "" {
			fmt.Fprintf(&body, " (%s)", safetext.Escape(c.Reason))
		}
		body.WriteString("\n")
		if o := string(c.Outcome); c.Outcome != trace.OutcomeScored && !seenO[o] {
			seenO[o] = true
			outcomes = append(outcomes, o)
		}
		for _, a := range failingAxes(c) {
			axes[a] = true
			r := c.Axis(a)
			fmt.Fprintf(&body, "  %s %s", a, r.Verdict)
			if len(r.Findings) > 0 {
				fmt.Fprintf(&body, ": %s", safetext.Escape(r.Findings[0].Text))
			}
			body.WriteString("\n")
		}
		if c.Primary != "" && !seenB[c.Primary] {
			seenB[c.Primary] = true
			buckets = append(buckets, string(c.Primary))
		}
		if len(c.Buckets) > 0 {
			var bs []string
			for _, b := range c.Buckets {
				bs = append(bs, string(b.Bucket))
			}
			fmt.Fprintf(&body, "  buckets: %s\n", strings.Join(bs, ", "))
		}
	}
	var names []string
	for _, a := range scorer.Axes() {
		if axes[a] {
			names = append(names, string(a))
		}
	}
	msg := fmt.Sprintf("integrity failed in %d of %d trials", len(failed), st.Trials())
	if len(names) > 0 {
		msg += "; axes: " + strings.Join(names, ", ")
	}
	if len(buckets) > 0 {
		msg += "; primary: " + strings.Join(buckets, ", ")
	}
	if len(outcomes) > 0 {
		msg += "; outcomes: " + strings.Join(outcomes, ", ")
	}
	return &junitProblem{Message: msg, Type: "integrity", Body: body.String()}
}

// junitError lists the harness errors: they say nothing about the agent,
// and CI should show them as the harness's fault, not a test failure.
func junitError(calls []scorer.CallScore) *junitProblem {
	var ids []string
	var body strings.Builder
	for _, c := range calls {
		if c.Outcome == trace.OutcomeHarnessError {
			ids = append(ids, c.Call)
			fmt.Fprintf(&body, "%s: %s\n", c.Call, safetext.Escape(c.Reason))
		}
	}
	return &junitProblem{Message: fmt.Sprintf("harness error in %s (not a verdict: re-run)", strings.Join(ids, ", ")), Type: "harness_error", Body: body.String()}
}

func tallyText(t Tally) string {
	return fmt.Sprintf("%d/%d [%.4f, %.4f]", t.Pass, t.N, t.Lo, t.Hi)
}

func seconds(d time.Duration, known bool) string {
	if !known {
		return ""
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}
