// Package hearing recognizes what an audio-only agent said, offline, so
// the claim reader (scorer/reader.go) can still judge axis 6
// (confirmation_matches_backend) on calls that carry no transcript.
//
// Recognition is Debian's pocketsphinx 0.8 (pocketsphinx_continuous with
// the pocketsphinx-en-us model) constrained by a JSGF grammar built from
// the call itself (BuildGrammar): a loop over a free vocabulary — the
// catalogue's words, the claim reader's cue words, confirmation and
// refusal glue — and whole-phrase entities: the records' codes spelled
// digit by digit, any digit string of a record code's length, any
// cardinal from a thousand ("four thousand four hundred seventy one"),
// dates ("wednesday december ninth", "tuesday the eighth", "next friday",
// "tomorrow", "the day after tomorrow"), times ("seven thirty p.m.", "nine
// in the morning"), amounts ("two hundred and fifteen dollars", "forty
// cents"), counts ("for four") and the records' text values (names).
// Normalize writes them as the claim reader's extractors (package entity)
// read them, so recognized words are read like a transcript. Number words exist only inside entities, which is
// how "two"/"to" and "four"/"for" are told apart (see Grammar.Normalize).
//
// Audio arrives as 8 kHz μ-law (Twilio Media Streams). The en-us model is
// trained at 16 kHz, so Recognize upsamples and adds the band's mirror
// image above 4 kHz: with that band empty the model hears almost nothing.
//
// # Uncertainty
//
// Telephone audio is often misheard, and a misheard code, date or "couldn't"
// could turn a false confirmation into a pass. So the caller decides on
// Heard.Uncertain, never on the text alone:
//
//   - Grammar.Normalize marks an utterance Uncertain when nothing was
//     recognized or when number words fit no entity;
//   - Normalize also distrusts "for for" and "to to": a number heard as its
//     homophone;
//   - with Recognizer.CrossCheck, Recognize decodes twice with different
//     language weights and Grammar.Hear also marks it Uncertain when the
//     two decodes name different entities or different kinds of claim
//     words (negation, done, verb, plan, restore, hedge, wait);
//   - and a third time with a grammar that offers no record's code: a
//     record's code the first decode heard that this one did not was
//     pulled onto the record by the grammar ("5599" said, "5519" heard,
//     both on file), not vouched for by the audio — Uncertain too.
//
// The contract with the scorer: an Uncertain utterance is recorded with
// its text and a flag; the claim reader must read it as undecided (axis 6
// unknown, insufficient_evidence) and it must count as no evidence on the
// other axes — never as a pass. docs/PERFORMANCE.md ("Speech: recognizer
// entity accuracy") has the measured rates.
//
// Every program run is bounded (Recognizer.Timeout); a Recognizer is safe
// for concurrent use and keeps no state but its dictionary cache and the
// words of its decoder runs: a run identical to one done or under way
// (the same samples, grammar and flags, as copies of a scenario hear the
// same synthesized reply) takes those words instead of decoding again.
package hearing
