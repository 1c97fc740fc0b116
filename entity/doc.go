// Package entity reads typed values out of spoken or written words: numbers,
// money, clock times, dates, durations, codes and names, one extractor per
// dimension. It is pure: no I/O, no clock (a relative date resolves against
// the Ref the caller passes), no mutable package state.
//
// Extract tokenizes an utterance and returns every value-bearing span as an
// Entity with a canonical Value in the form the scorer and the mock backend
// store ("215", "2.5", "09:00", "2026-12-08", "PT1H30M", "R4M9"), any other
// reading in Alternatives ("two fifty" is 250 or 2.50; a bare "9:00" is
// 09:00 or 21:00), its token Span and its Text. docs/SCORING.md, "Value
// dimensions", lists the forms each dimension reads and its limits.
package entity
