// Package agents holds callproof's two reference voice agents, naive and
// careful: one engine whose failure modes are named Flaws that can each be
// switched off. They are real programs — they answer the native protocol
// over a WebSocket (the harness dials them) and call their tools over HTTP —
// so the harness can be shown to pass a good agent and catch a bad one.
//
// They stand in for an LLM pipeline, but their "understanding" is a small
// scripted parser of the caller phrasing in docs/ARCHITECTURE.md: 4-digit
// order numbers, 1-3 digit quantities, dates such as "December 3" or
// 2026-12-03, negation words (don't, do not, stop, cancel) and "go ahead" /
// "yes" to proceed. Which slot a "make that X" correction changes is decided
// by the shape of X. Like the seed's known-bad mock, both agents hear
// perfectly; naive fails only in what it does with what it heard.
//
// Audio mode (Config.Audio, `callproof agent --transport twilio`): the same
// engine behind a Twilio Media Streams bot (twilio.go; AUDIO.md), or with
// AudioConfig.Wire WireWebRTC (`--transport webrtc`) behind a WebRTC bot
// that answers SmallWebRTC and WHIP offers (webrtc.go, webrtc_signal.go).
// It speaks with flite and hears with a SCRIPTED FAKE speech recognizer
// (ear.go) that stands for a cloud speech-to-text service: it identifies
// which of the utterances in callproof's own speech cache the caller's
// μ-law frames are, so it only works with callproof's caller on the same
// machine. A session reaches its connection only through a wire
// (session.go): native text, Twilio or WebRTC.
//
// An agent learns of a call only over the wire: this package never imports
// scenarios, mockbackend or scorer, and of callsim only its sound layer,
// callsim/audio (μ-law, WAV, the speech cache, flite, the VAD); its WebRTC
// side is pion through internal/rtcpeer, as the harness's. The audio
// mode's ear reads nothing but the frames the caller sent and the files of
// the shared speech cache.
package agents
