// Package spoken says values the way a caller or an agent would: amounts,
// dates, clock times, counts, codes and names, each in every form this
// package knows ("2026-12-08" is "December 8", "the 8th of December",
// "Tuesday, the eighth of December", ...). It is the one home of these
// renderers: the scorer's perturbation tests and the pack generator use
// it. It shares no table with package entity, which reads such forms
// back, so a reader and this writer can disagree and a test can see it.
// Pure: no I/O, no clock, no package state that is written.
package spoken
