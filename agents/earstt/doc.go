// Package earstt is a SCRIPTED FAKE streaming speech-to-text service: it
// stands in for the cloud STT (Deepgram and the like, reached over a
// WebSocket: audio in, transcripts out) that a third-party voice agent
// under test sends its caller's audio to, so that such an agent — the
// Pipecat bot (agents/pipecat/bot.py, `--stt ear`) and the stock LiveKit
// agent (agents/livekit/agent.py) — hears callproof's caller exactly,
// offline, on loopback.
//
// It does not recognize speech. Behind it is the reference agents' ear
// (agents.Ear, agents/ear.go): callproof's caller synthesizes each
// utterance into a speech cache on this machine before playing it, and
// the ear identifies which cached utterance the stream's μ-law frames
// are. So it recognizes ONLY callproof's own cached utterances, played
// by callproof's caller on this machine, whose samples reach it
// unchanged: μ-law as sent, or 16-bit PCM at 8 kHz that re-encodes to the
// same bytes (as a Pipecat pipeline at 8 kHz passes them on from Twilio
// or PCMU over WebRTC, and LiveKit's room input at 8 kHz without its gain
// control). Audio resampled or gain-controlled on the way no longer
// matches the cache and is not heard (docs/INTEROP.md).
//
// Samples may be lost or added on the way (a WebRTC receiver's jitter
// buffer stretches time when it must): the stream then slips off the
// caller's 20 ms frame boundaries and no frame matches. So a loud frame
// the cache does not hold makes the service look for the boundary in the
// next 159 samples; a shift that puts a cached frame at the head drops
// those samples and goes on from there (Stream.Shifts, Stream.Dropped).
//
// The protocol, on one WebSocket per audio stream:
//
//	GET ws://HOST:PORT/v1/listen?encoding=linear16|mulaw&sample_rate=8000[&channels=1]
//
// The client sends binary messages of audio (any length; 16-bit
// little-endian samples for linear16, one μ-law byte per sample for mulaw),
// cut into 20 ms frames counted from the stream's first byte, and may send
// the text message {"type":"close_stream"} to end it (the service answers
// "closed" and closes; closing the socket does as well). Any other
// sample rate, encoding or channel count is refused with HTTP 400. The
// service sends one JSON text message per event, times in seconds of the
// stream's audio:
//
//	{"type":"speech_started","id":"u1","start":1.24}
//	{"type":"transcript","id":"u1","is_final":true,"text":"Wait, stop, don't change anything.","start":1.24,"end":3.1}
//	{"type":"sound_started","id":"n1","start":5.0}
//	{"type":"sound_ended","id":"n1","end":5.4}
//	{"type":"closed","frames":812,"finals":3,"unmatched":0}
//
// A transcript's text is "" when speech was heard but the ear could not
// tell which cached utterance it was; there are no interim transcripts.
// GET /v1/streams lists what each finished stream heard (Stream), and
// Config.RecordDir keeps each stream's audio as it arrived.
//
// Tests start it in-process (Start) on the loopback address of the network
// namespace they run in; `callproof agent ear-stt --speech-cache DIR`
// serves it for a bot run by hand. docs/INTEROP.md ("The caller's words:
// a scripted stand-in for the cloud STT") has its accuracy per wire.
package earstt
