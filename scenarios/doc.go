// Package scenarios holds callproof's scenario files: the Go types, a strict
// YAML/JSON loader whose errors name file, line and field, Validate (every
// problem at once), the compiler from a scenario to a trace.Script, and the
// built-in packs "core" and "extended" embedded from packs/.
//
// A scenario is either compact (category + setup, seed 001's case shape) or
// an explicit step script; compact cases compile into a step script, so both
// end in the same trace.Script. The compiler never reads Expected: that block
// is the oracle the packs are tested with, not an input to a call.
package scenarios
