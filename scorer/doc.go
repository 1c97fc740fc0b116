// Package scorer turns one call's History into a CallScore: six integrity
// axes (pass, fail or unknown, each citing the events that prove it), the
// call's outcome, its root-cause buckets and the final-state diff.
//
// Score is a pure function of the history. It never reads the scenario id
// or category (they are copied as labels): it infers what the call was
// testing from the compiled script in call.start and judges the agent by
// what happened — its self-reports, tool calls, the backend ledger and
// snapshot, and what it finally said. docs/SCORING.md is the rulebook; the
// code follows it rule for rule.
package scorer
