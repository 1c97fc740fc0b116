package release

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// Golden files live in testdata/; refresh them with
// go test ./release/ -update (or UPDATE_GOLDEN=1).
var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update || os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./release/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (-update to accept)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// score builds one call's score from a compact spec:
//
//	"PPFFPP"            scored, one letter per axis in scorer.Axes() order
//	                    (P pass, F fail, U unknown)
//	"E:PPPPPU"          agent_error with those verdicts
//	"H"                 harness_error (axes unknown)
//	"X"                 excluded (axes unknown)
//
// Failing axes get a finding naming the axis and call; a failed call gets
// primary bucket p (when given) as its only bucket.
func score(call, spec string, p scorer.Bucket) scorer.CallScore {
	sc, _ := splitTrial(call)
	s := scorer.CallScore{Call: call, Scenario: sc, Outcome: trace.OutcomeScored}
	switch {
	case spec == "H":
		s.Outcome, s.Reason, spec = trace.OutcomeHarnessError, "agent socket closed by the harness", "UUUUUU"
	case spec == "X":
		s.Outcome, s.Reason, spec = trace.OutcomeExcluded, "trigger missed", "UUUUUU"
	case strings.HasPrefix(spec, "E:"):
		s.Outcome, s.Reason, spec = trace.OutcomeAgentError, "agent hung up", spec[2:]
	}
	if len(spec) != 6 {
		panic("score: want six verdicts in " + spec)
	}
	s.Integrity = s.Outcome == trace.OutcomeScored
	failed := false
	for i, a := range scorer.Axes() {
		r := scorer.AxisResult{Axis: a}
		switch spec[i] {
		case 'P':
			r.Verdict = scorer.Pass
		case 'F':
			r.Verdict = scorer.Fail
			failed = true
			r.Findings = []scorer.Finding{{Text: string(a) + " wrong in " + call, Events: []int{i + 1}}, {Text: "second finding"}}
		default:
			r.Verdict = scorer.Unknown
			r.Findings = []scorer.Finding{{Text: "no evidence for " + string(a)}}
		}
		if r.Verdict != scorer.Pass {
			s.Integrity = false
		}
		s.Axes = append(s.Axes, r)
	}
	if failed && p != "" {
		s.Primary = p
		s.Buckets = []scorer.BucketHit{{Bucket: p, Findings: []scorer.Finding{{Text: "because"}}}}
	}
	return s
}

// trialsOf builds trials t1, t2, ... of a scenario from specs.
func trialsOf(scenario string, p scorer.Bucket, specs ...string) []scorer.CallScore {
	var out []scorer.CallScore
	for i, sp := range specs {
		out = append(out, score(scenario+".t"+strconv.Itoa(i+1), sp, p))
	}
	return out
}

// fixture is a run of k=3 worked by hand in TestTrials:
//
//	corr-01  PPPPPP ×3                       3/3, pass^3 1
//	corr-02  pass, args+stale fail, pass, H  2/3, flaky, one harness error
//	int-01   pass, H, pass                   2/2, short
//	tf-01    PPFFFF ×3                       0/3, consistently failing
//	tf-02    agent error (all unknown), pass, confirmation unknown
//	                                         1/3, flaky on everything
//	tf-03    X, pass, pass                   2/2, short, one excluded
//	tf-04    X (a k=1 style id)              0/0, short
func fixture() []scorer.CallScore {
	var s []scorer.CallScore
	s = append(s, trialsOf("corr-01", "", "PPPPPP", "PPPPPP", "PPPPPP")...)
	s = append(s, trialsOf("corr-02", scorer.BucketStaleToolArgs, "PPPPPP", "PPFFPP", "PPPPPP", "H")...)
	s = append(s, trialsOf("int-01", "", "PPPPPP", "H", "PPPPPP")...)
	s = append(s, trialsOf("tf-01", scorer.BucketUnsafeRetry, "PPFFFF", "PPFFFF", "PPFFFF")...)
	s = append(s, trialsOf("tf-02", "", "E:UUUUUU", "PPPPPP", "PPPPPU")...)
	s = append(s, trialsOf("tf-03", "", "X", "PPPPPP", "PPPPPP")...)
	s = append(s, score("tf-04", "X", ""))
	return s
}
