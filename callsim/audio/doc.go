// Package audio is the sound layer of callsim: 8 kHz mono PCM and its μ-law
// wire form (Twilio Media Streams: 20 ms = 160-byte frames), WAV files,
// resampling, offline speech synthesis (flite, espeak-ng) with a shared
// on-disk cache, generated background noise, an energy voice-activity
// detector, and a stereo recorder of a whole call (caller left, agent right).
//
// Everything works on PCM: 16-bit signed samples at SampleRate. Audio from
// other rates, depths and channel counts is converted on the way in
// (ReadWAV, Resample) so the rest of callproof deals with one format.
//
// The package has no mutable package-level state. Randomness (Noise) comes
// from an explicit seed; external programs (flite, espeak-ng) run bounded
// by the caller's context.
//
// Measured choices: DefaultVoice and the recognizer front ends in
// docs/PERFORMANCE.md, "Speech: voice choice" (TestVoiceQuality); the VAD
// defaults in DefaultVADConfig (pinned by TestVADDefaults).
//
// None of the first sketch's signatures changed. Additions: DecodeWAV (a
// file as it is, no conversion), WriteWAVRate (any rate and channel count,
// e.g. 16 kHz for a recognizer), WriteWAVFile, ErrNotWAV, MaxWAVBytes,
// Frames, Gain, Samples, SilenceDBFS, NewSynth and DefaultVoice (a synth
// by name), ErrEmptyText, Cache.Key, NoiseKinds (plus "hum50"/"hum60"),
// the VAD default constants, VAD.Frames/OffsetFrame/Reset, and the
// Recorder's cap and accessors (MaxRecording, NewRecorderLimit,
// Truncated, Duration, Channels, ErrRecordingTruncated).
package audio
