// Package harness runs suites: it wires a scenario, the mock backend, the
// caller simulator and the scorer into one isolated call per scenario, runs
// calls with bounded concurrency, writes each call's history and score to a
// results directory as it completes, and applies the release gate. Over
// an audio transport every utterance of the planned calls is synthesized
// before the first dial (PrepareSpeech), so no synthesizer competes with
// the calls' frame clocks.
//
// It is the only package that imports scenarios, mockbackend, callsim and
// scorer together; they never import one another.
package harness
