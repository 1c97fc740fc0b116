// Package hearing recognizes what an audio-only agent said, offline, so
// the claim reader (scorer/reader.go) can still judge axis 6
// (confirmation_matches_backend) on calls that carry no transcript.
//
// Recognition is Debian's pocketsphinx 0.8 (pocketsphinx_continuous with
// the pocketsphinx-en-us model) constrained by a JSGF grammar built from
// the call itself (BuildGrammar): a loop over a free vocabulary — the
// catalogue's words, the claim reader's cue words, confirmation and
// refusal glue — and whole-phrase entities: record codes spelled digit by
// digit or said as a cardinal, any digit string of a record code's length,
// dates ("wednesday december ninth"), times ("seven thirty p.m."), amounts
// ("forty five dollars fifty cents"), counts ("for four") and the records'
// text values (names). Number words exist only inside entities, which is
// how "two"/"to" and "four"/"for" are told apart (see Grammar.Normalize).
//
// Audio arrives as 8 kHz μ-law (Twilio Media Streams). The en-us model is
// trained at 16 kHz, so Recognize upsamples and adds the band's mirror
// image above 4 kHz: with that band empty the model hears almost nothing.
//
// # Uncertainty
//
// Recognition of telephone audio is often wrong, and a wrong code or date
// could turn a false confirmation into a pass. Grammar.Normalize therefore
// returns Heard.Uncertain with a reason when the words cannot be trusted:
// nothing recognized, or number words that fit no entity. An utterance
// marked Uncertain must make the claim reader's verdict undecided (axis 6
// unknown, insufficient_evidence), never pass; the integrator records the
// flag beside the text for the scorer to honour.
//
// Every program run is bounded (Recognizer.Timeout); a Recognizer is safe
// for concurrent use and keeps no state but its dictionary cache.
package hearing
