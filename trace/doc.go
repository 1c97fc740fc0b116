// Package trace is the evidence model every other callproof package shares:
// the events of one call on one clock (Event, History), the recorder that
// numbers them, the compiled caller script and tool catalogue that open every
// history, and a JSONL codec so any stage can run on a saved file.
//
// It is the leaf of the import graph: callsim, mockbackend and scorer all
// import it and never one another.
package trace
