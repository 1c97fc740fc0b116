// Package perturb derives metamorphic variants of recorded calls to test
// the scorer's reading of confirmations in a way that cannot be tuned to a
// handful of phrasings. From every correct call of a calibration set it
// takes the confirmation (the agent's last utterance after the last commit
// that names a committed value) and derives
//
//   - re-spellings: each named value said in every other form of its
//     dimension (amounts in words, "two fifty", times "9 am" / "nine in the
//     morning" / "09:00", dates by weekday, "the 8th" or relative to the
//     call's date, codes character by character or in the NATO alphabet),
//     and paraphrases of the claim's verb: each must still pass
//     confirmation_matches_backend;
//   - perturbations: one value replaced by a neighbour (another record's
//     value, a number one off, the other half of the day, the day before or
//     after, one character of a code changed), in every form: each must
//     fail it. A value the committed record itself holds in any field is
//     never substituted: naming it still names that record.
//
// Spoken forms are rendered by package spoken, never by the
// scorer's tables, so the two can disagree. A fixed corpus of spoken forms
// (testdata/spoken.txt at the repository root), written independently of
// docs/SCORING.md, is substituted the same way.
package perturb
