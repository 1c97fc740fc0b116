// Package release holds the figures and records behind a release decision:
// statistics over repeated trials of a scenario (pass^k and Wilson score
// intervals), baselines saved from an accepted run and compared with a new
// one, an append-only run history with its trend table, and the JUnit XML
// and Markdown summaries CI systems read.
//
// Everything here is pure apart from the few functions that read or write a
// named file (Save, Load, AppendHistory, ReadHistory): no clock (times come
// in with the data), no randomness, no package state. The package reads
// scorer.CallScore values and never scores anything itself; the formulas
// and file formats are described in docs/GATING.md.
package release
