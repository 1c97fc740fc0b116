// Package livekit is callproof's caller in a LiveKit room
// (docs/PROTOCOL.md, "LiveKit dialect"): per call it creates a room of its
// own on a LiveKit server, dispatches the agent into it with the call's
// data in the job metadata, joins as the caller with the same data in its
// participant attributes, publishes the caller's audio as a PCMU track on
// the audio call engine's clock (callsim/audiocall), plays the agent's
// track out (Opus decoded in pure Go, or PCMU), takes the agent's
// lk.transcription text streams as its own words, and treats the agent
// leaving the room as its hang-up. The LiveKit SDK is imported here only,
// so no other package of callproof builds it (docs/ARCHITECTURE.md).
package livekit
