package reports

import (
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
)

// SeedTable is seed 001's published run of its known-bad mock pipeline:
// 30 calls, the six axes, integrity and the seven root-cause buckets. It is
// shown beside the demo for reference, never used as a target.
func SeedTable() Summary {
	ax := func(a scorer.Axis, pass int) AxisCount { return AxisCount{Axis: a, Pass: pass, Fail: 30 - pass} }
	return Summary{
		Calls:    30,
		Counted:  30,
		Outcomes: map[trace.Outcome]int{trace.OutcomeScored: 30},
		Axes: []AxisCount{
			ax(scorer.Captured, 24), ax(scorer.ActiveStateCorrect, 24), ax(scorer.ToolArgsCorrect, 11),
			ax(scorer.StaleWritePrevented, 8), ax(scorer.BackendCorrect, 8), ax(scorer.ConfirmationMatchesBackend, 7),
		},
		Integrity: 7,
		Buckets: []BucketCount{
			{Bucket: scorer.BucketStaleToolArgs, Primary: 10},
			{Bucket: scorer.BucketUnverifiedResult, Primary: 4},
			{Bucket: scorer.BucketInflightNotCanceled, Primary: 3},
			{Bucket: scorer.BucketNoiseBargeIn, Primary: 2},
			{Bucket: scorer.BucketUnsafeRetry, Primary: 2},
			{Bucket: scorer.BucketEarlyConfirmation, Primary: 1},
			{Bucket: scorer.BucketMissingIdempotency, Primary: 1},
		},
	}
}
