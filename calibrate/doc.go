// Package calibrate measures how far the scorer's verdicts can be trusted:
// it compares scores with hand labels (per call and axis: pass, fail or
// either, plus the expected primary bucket) and reports per-axis
// agreement, Cohen's kappa, false passes and false failures. A false pass
// (the scorer passed what a careful human failed) is the expensive error
// (seeds 000 and 003), so callers treat any as a failure.
package calibrate
