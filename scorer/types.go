package scorer

import (
	"time"

	"github.com/callproof/callproof/trace"
)

// Verdict is one axis's three-way result. Unknown (no evidence) is never a pass.
type Verdict string

// Verdicts.
const (
	Pass    Verdict = "pass"
	Fail    Verdict = "fail"
	Unknown Verdict = "unknown"
)

// Axis names one of the six integrity axes (names from seed 001).
type Axis string

// The six axes, in report order.
const (
	Captured                   Axis = "captured"
	ActiveStateCorrect         Axis = "active_state_correct"
	ToolArgsCorrect            Axis = "tool_args_correct"
	StaleWritePrevented        Axis = "stale_write_prevented"
	BackendCorrect             Axis = "backend_correct"
	ConfirmationMatchesBackend Axis = "confirmation_matches_backend"
)

// Axes lists the six axes in report order.
func Axes() []Axis {
	return []Axis{Captured, ActiveStateCorrect, ToolArgsCorrect, StaleWritePrevented, BackendCorrect, ConfirmationMatchesBackend}
}

// Bucket is a root cause of a failed call.
type Bucket string

// Root-cause buckets, in precedence order (the first that fits is primary).
const (
	BucketStaleToolArgs       Bucket = "stale_tool_args"            // args built from superseded values reached the backend
	BucketInflightNotCanceled Bucket = "inflight_not_cancelled"     // a call in flight when the caller invalidated it committed
	BucketUnverifiedResult    Bucket = "unverified_tool_result"     // a bad tool result accepted without a verifying read
	BucketNoiseBargeIn        Bucket = "noise_as_barge_in"          // background noise stopped the agent
	BucketUnsafeRetry         Bucket = "unsafe_retry"               // backend error, then a retry that repeated the effect
	BucketEarlyConfirmation   Bucket = "early_confirmation"         // done-claim spoken before the write landed
	BucketMissingIdempotency  Bucket = "missing_idempotency_key"    // a consequential effect repeated for want of a key
	BucketNotExecuted         Bucket = "action_not_executed"        // done claimed, nothing committed
	BucketGaveUp              Bucket = "gave_up_on_transient_error" // transient backend errors, too few retries, nothing written
	BucketUncompensated       Bucket = "uncompensated_write"        // a write the caller later withdrew or replaced, never put back
	BucketStaleState          Bucket = "stale_working_state"        // after a change, the agent's first act still showed the old values
	BucketNeverConfirmed      Bucket = "never_confirmed"            // the agent never told the caller the outcome
	BucketWrongRecord         Bucket = "wrong_record"               // a record the caller never meant was written
	BucketUnclassified        Bucket = "unclassified"               // failed, and no rule explains it
)

// Buckets lists every bucket in precedence order.
func Buckets() []Bucket {
	return []Bucket{BucketStaleToolArgs, BucketInflightNotCanceled, BucketUnverifiedResult, BucketNoiseBargeIn,
		BucketUnsafeRetry, BucketEarlyConfirmation, BucketMissingIdempotency, BucketNotExecuted, BucketGaveUp, BucketUncompensated, BucketStaleState, BucketNeverConfirmed, BucketWrongRecord, BucketUnclassified}
}

// Finding is one reason behind a verdict or bucket, with the events that prove it.
type Finding struct {
	Text   string `json:"text"`
	Events []int  `json:"events,omitempty"` // seq numbers in the call's history
}

// AxisResult is one axis's verdict and why.
type AxisResult struct {
	Axis     Axis      `json:"axis"`
	Verdict  Verdict   `json:"verdict"`
	Findings []Finding `json:"findings,omitempty"`
}

// BucketHit is one bucket that fits a failed call.
type BucketHit struct {
	Bucket   Bucket    `json:"bucket"`
	Findings []Finding `json:"findings"`
}

// Diagnostics are measured beside the axes; they are never verdicts.
// Latencies are real time; TimeScale (the scale the call ran at) turns
// them into script time (real / scale) for comparing runs.
type Diagnostics struct {
	ResponseLatency time.Duration `json:"response_latency,omitempty"`
	YieldLatency    time.Duration `json:"yield_latency,omitempty"`
	TimeScale       float64       `json:"time_scale,omitempty"`
	// Audio: an audio call's frame timing and turn-taking.
	Audio *trace.AudioDiag `json:"audio,omitempty"`
	// Lateness: how late the harness's own timers fired in the call.
	Lateness *trace.HarnessLateness `json:"harness_lateness,omitempty"`
}

// CallScore is everything the scorer says about one call.
type CallScore struct {
	Call     string `json:"call"`
	Scenario string `json:"scenario"`
	Category string `json:"category,omitempty"` // label copied from call.start; not an input
	// Challenge is what the scorer inferred the call tests (script + events).
	Challenge ChallengeKind `json:"challenge,omitempty"`
	Outcome   trace.Outcome `json:"outcome"`
	Reason    string        `json:"reason,omitempty"`
	Axes      []AxisResult  `json:"axes"` // always six, in Axes() order
	Integrity bool          `json:"integrity"`
	// Primary is the first bucket by precedence; empty for passing calls.
	Primary   Bucket            `json:"primary,omitempty"`
	Secondary []Bucket          `json:"secondary,omitempty"`
	Buckets   []BucketHit       `json:"buckets,omitempty"`
	Diff      []trace.FieldDiff `json:"diff,omitempty"` // final state vs the caller's last intent
	Diag      Diagnostics       `json:"diagnostics"`
}

// Axis returns the result for one axis.
func (c *CallScore) Axis(a Axis) AxisResult {
	for _, r := range c.Axes {
		if r.Axis == a {
			return r
		}
	}
	return AxisResult{Axis: a, Verdict: Unknown}
}
