// Package webrtc is callproof's caller over WebRTC (pion): it offers a
// call with a PCMU audio transceiver and a "chat" data channel through
// Pipecat's SmallWebRTC signaling or WHIP, streams the caller's audio as
// real-time RTP, plays the agent's RTP out and follows its utterances
// (callsim/audiocall, as the Twilio dialect does), and carries the native
// protocol's text events on the data channel (docs/PROTOCOL.md, "WebRTC
// dialect").
package webrtc
