// Package callprooftest runs a callproof suite inside `go test`, next to
// an agent's own code: Run places every scenario against the agent,
// reports each call as a subtest whose failure names the failing axes,
// the root-cause buckets and the events that prove them, and returns the
// scores for further assertions. It starts and stops what it needs (the
// mock backend with the agent's tools); the agent is the caller's to run.
// A call the harness could not keep on time (harness_error for
// harness.RanLate: overloaded timers, or an audio caller behind real time,
// on a busy CI machine) is placed once more, alone, before it is judged. An
// agent that does not answer at its URL (harness.Preflight) fails the test
// once, before any call; Options.NoPreflight skips that check.
package callprooftest
