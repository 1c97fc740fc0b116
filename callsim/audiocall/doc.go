// Package audiocall is an audio call as callproof's caller lives it,
// whatever the wire under it: the call's 20 ms frame clock, the caller's
// synthesized speech and background noise mixed into μ-law frames, the
// agent's audio played out in real time and followed by an energy
// detector into utterances, whose words come from the agent's own
// transcript or from a recognizer, and the turn-taking, lateness and
// recording of the call. A dialect (callsim/twilio, callsim/webrtc) gives
// it a Wire to send frames on and feeds it what the agent sends.
package audiocall
