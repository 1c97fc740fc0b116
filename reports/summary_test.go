package reports

import (
	"reflect"
	"testing"

	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// mkScore builds a score whose axes have the given verdicts (in Axes()
// order; "" means pass).
func mkScore(call string, outcome trace.Outcome, verdicts [6]scorer.Verdict, primary scorer.Bucket, secondary ...scorer.Bucket) scorer.CallScore {
	s := scorer.CallScore{Call: call, Scenario: "sc-" + call, Category: "correction", Outcome: outcome, Primary: primary, Secondary: secondary}
	integrity := outcome == trace.OutcomeScored
	for i, ax := range scorer.Axes() {
		v := verdicts[i]
		if v == "" {
			v = scorer.Pass
		}
		if v != scorer.Pass {
			integrity = false
		}
		s.Axes = append(s.Axes, scorer.AxisResult{Axis: ax, Verdict: v})
	}
	s.Integrity = integrity
	return s
}

var (
	P = scorer.Pass
	F = scorer.Fail
	U = scorer.Unknown
)

func syntheticScores() []scorer.CallScore {
	sc, ae, he, ex := trace.OutcomeScored, trace.OutcomeAgentError, trace.OutcomeHarnessError, trace.OutcomeExcluded
	unk := [6]scorer.Verdict{U, U, U, U, U, U}
	he1 := mkScore("c-he", he, unk, "")
	he1.Reason = "mock backend unreachable"
	ex1 := mkScore("c-ex", ex, unk, "")
	ex1.Reason = "required step correct never ran"
	ae1 := mkScore("c-ae", ae, [6]scorer.Verdict{P, P, U, U, F, U}, scorer.BucketNotExecuted)
	ae1.Reason = "agent closed the socket"
	return []scorer.CallScore{
		// Out of order on purpose: failed calls are listed by id.
		mkScore("c-9", sc, [6]scorer.Verdict{P, P, F, F, F, F}, scorer.BucketUnsafeRetry, scorer.BucketMissingIdempotency),
		mkScore("c-1", sc, [6]scorer.Verdict{}, ""),
		mkScore("c-5", sc, [6]scorer.Verdict{F, P, P, P, P, F}, scorer.BucketNoiseBargeIn),
		he1,
		mkScore("c-3", sc, [6]scorer.Verdict{P, P, P, F, F, P}, scorer.BucketUnsafeRetry, scorer.BucketWrongRecord),
		ex1,
		mkScore("c-7", sc, [6]scorer.Verdict{P, U, F, P, P, P}, scorer.BucketStaleToolArgs, scorer.BucketInflightNotCanceled),
		ae1,
		mkScore("c-2", sc, [6]scorer.Verdict{F, P, P, P, P, P}, scorer.BucketNoiseBargeIn, scorer.BucketUnsafeRetry),
		mkScore("c-4", sc, [6]scorer.Verdict{}, ""),
	}
}

func TestSummarizeCounts(t *testing.T) {
	s := Summarize(syntheticScores())
	if s.Calls != 10 {
		t.Errorf("Calls = %d, want 10", s.Calls)
	}
	// 7 scored + 1 agent_error count; harness_error and excluded do not.
	if s.Counted != 8 {
		t.Errorf("Counted = %d, want 8", s.Counted)
	}
	wantOutcomes := map[trace.Outcome]int{trace.OutcomeScored: 7, trace.OutcomeAgentError: 1, trace.OutcomeHarnessError: 1, trace.OutcomeExcluded: 1}
	if !reflect.DeepEqual(s.Outcomes, wantOutcomes) {
		t.Errorf("Outcomes = %v, want %v", s.Outcomes, wantOutcomes)
	}
	if s.Integrity != 2 {
		t.Errorf("Integrity = %d, want 2 (c-1, c-4)", s.Integrity)
	}
	wantAxes := []AxisCount{
		{Axis: scorer.Captured, Pass: 6, Fail: 2},
		{Axis: scorer.ActiveStateCorrect, Pass: 7, Unknown: 1},
		{Axis: scorer.ToolArgsCorrect, Pass: 5, Fail: 2, Unknown: 1},
		{Axis: scorer.StaleWritePrevented, Pass: 5, Fail: 2, Unknown: 1},
		{Axis: scorer.BackendCorrect, Pass: 5, Fail: 3},
		{Axis: scorer.ConfirmationMatchesBackend, Pass: 5, Fail: 2, Unknown: 1},
	}
	if !reflect.DeepEqual(s.Axes, wantAxes) {
		t.Errorf("Axes =\n%+v\nwant\n%+v", s.Axes, wantAxes)
	}
	for _, a := range s.Axes {
		if a.Pass+a.Fail+a.Unknown != s.Counted {
			t.Errorf("%s: %d+%d+%d != Counted %d", a.Axis, a.Pass, a.Fail, a.Unknown, s.Counted)
		}
	}
	if got := s.Axis(scorer.BackendCorrect).Fail; got != 3 {
		t.Errorf("Axis(backend_correct).Fail = %d, want 3", got)
	}
	if got := s.Axis("no_such_axis"); got != (AxisCount{Axis: "no_such_axis"}) {
		t.Errorf("Axis(unknown) = %+v, want zero counts", got)
	}
}

func TestSummarizeBuckets(t *testing.T) {
	s := Summarize(syntheticScores())
	// Primary: noise 2, unsafe_retry 2, stale 1, not_executed 1 (agent
	// error counts). Ties by precedence: noise before unsafe_retry, stale
	// before not_executed. Then secondary-only buckets, by precedence.
	want := []BucketCount{
		{Bucket: scorer.BucketNoiseBargeIn, Primary: 2},
		{Bucket: scorer.BucketUnsafeRetry, Primary: 2, Secondary: 1},
		{Bucket: scorer.BucketStaleToolArgs, Primary: 1},
		{Bucket: scorer.BucketNotExecuted, Primary: 1},
		{Bucket: scorer.BucketInflightNotCanceled, Secondary: 1},
		{Bucket: scorer.BucketMissingIdempotency, Secondary: 1},
		{Bucket: scorer.BucketWrongRecord, Secondary: 1},
	}
	if !reflect.DeepEqual(s.Buckets, want) {
		t.Errorf("Buckets =\n%+v\nwant\n%+v", s.Buckets, want)
	}
	if got := s.PrimaryCount(scorer.BucketUnsafeRetry); got != 2 {
		t.Errorf("PrimaryCount(unsafe_retry) = %d, want 2", got)
	}
	if got := s.PrimaryCount(scorer.BucketWrongRecord); got != 0 {
		t.Errorf("PrimaryCount(wrong_record) = %d, want 0 (secondary only)", got)
	}
	if got := s.PrimaryCount(scorer.BucketEarlyConfirmation); got != 0 {
		t.Errorf("PrimaryCount(absent) = %d, want 0", got)
	}
}

func TestSummarizeFailedCalls(t *testing.T) {
	s := Summarize(syntheticScores())
	want := []FailedCall{
		{Call: "c-2", Scenario: "sc-c-2", Outcome: trace.OutcomeScored, FirstAxis: scorer.Captured, Bucket: scorer.BucketNoiseBargeIn},
		{Call: "c-3", Scenario: "sc-c-3", Outcome: trace.OutcomeScored, FirstAxis: scorer.StaleWritePrevented, Bucket: scorer.BucketUnsafeRetry},
		{Call: "c-5", Scenario: "sc-c-5", Outcome: trace.OutcomeScored, FirstAxis: scorer.Captured, Bucket: scorer.BucketNoiseBargeIn},
		// An unknown verdict is not a pass: it is the first non-pass axis.
		{Call: "c-7", Scenario: "sc-c-7", Outcome: trace.OutcomeScored, FirstAxis: scorer.ActiveStateCorrect, Bucket: scorer.BucketStaleToolArgs},
		{Call: "c-9", Scenario: "sc-c-9", Outcome: trace.OutcomeScored, FirstAxis: scorer.ToolArgsCorrect, Bucket: scorer.BucketUnsafeRetry},
		{Call: "c-ae", Scenario: "sc-c-ae", Outcome: trace.OutcomeAgentError, FirstAxis: scorer.ToolArgsCorrect, Bucket: scorer.BucketNotExecuted, Reason: "agent closed the socket"},
		// Not counted: listed with their reason, no axis, no bucket.
		{Call: "c-ex", Scenario: "sc-c-ex", Outcome: trace.OutcomeExcluded, Reason: "required step correct never ran"},
		{Call: "c-he", Scenario: "sc-c-he", Outcome: trace.OutcomeHarnessError, Reason: "mock backend unreachable"},
	}
	if !reflect.DeepEqual(s.Failed, want) {
		t.Errorf("Failed =\n%+v\nwant\n%+v", s.Failed, want)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	s := Summarize(nil)
	if s.Calls != 0 || s.Counted != 0 || s.Integrity != 0 || len(s.Buckets) != 0 || len(s.Failed) != 0 {
		t.Errorf("Summarize(nil) = %+v", s)
	}
	if len(s.Axes) != 6 {
		t.Errorf("Summarize(nil) has %d axes, want all 6 at zero", len(s.Axes))
	}
}

func TestSummarizeDeterministic(t *testing.T) {
	scores := syntheticScores()
	want := Summarize(scores)
	for i := 0; i < 20; i++ {
		// Reverse the input: the figures and their order do not change.
		rev := make([]scorer.CallScore, len(scores))
		for j, s := range scores {
			rev[len(scores)-1-j] = s
		}
		scores = rev
		if got := Summarize(scores); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: Summarize depends on input order\n got %+v\nwant %+v", i, got, want)
		}
	}
}

func TestAccumulator(t *testing.T) {
	var a Accumulator
	scores := syntheticScores()
	for i, s := range scores {
		a.Add(s)
		if got, want := a.Summary(), Summarize(scores[:i+1]); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d scores: Accumulator.Summary() != Summarize", i+1)
		}
	}
}

func TestSummarizeFixture(t *testing.T) {
	s, _, _ := fixtureSummary(t)
	if s.Calls != 3 || s.Counted != 3 || s.Integrity != 1 {
		t.Errorf("calls %d counted %d integrity %d, want 3 3 1", s.Calls, s.Counted, s.Integrity)
	}
	if got := s.PrimaryCount(scorer.BucketStaleToolArgs); got != 1 {
		t.Errorf("stale_tool_args primary = %d, want 1 (corr-02)", got)
	}
	if len(s.Failed) != 2 || s.Failed[0].Call != "corr-02" || s.Failed[0].FirstAxis != scorer.ToolArgsCorrect || s.Failed[1].Call != "tf-06" {
		t.Errorf("Failed = %+v, want corr-02 (tool_args_correct) and tf-06", s.Failed)
	}
}

func TestSeedTable(t *testing.T) {
	s := SeedTable()
	if s.Calls != 30 || s.Counted != 30 || s.Integrity != 7 {
		t.Errorf("seed: calls %d counted %d integrity %d, want 30 30 7", s.Calls, s.Counted, s.Integrity)
	}
	sum := 0
	for _, b := range s.Buckets {
		sum += b.Primary
	}
	if sum != 30-7 {
		t.Errorf("seed buckets sum to %d, want the 23 failed calls", sum)
	}
	for _, a := range s.Axes {
		if a.Pass+a.Fail != 30 {
			t.Errorf("seed %s: %d + %d != 30", a.Axis, a.Pass, a.Fail)
		}
	}
}
