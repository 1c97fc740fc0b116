// Package rtvi is the one place callproof reads and writes Pipecat's RTVI
// messages (pipecat-ai 1.14): the envelope, the caller's messages
// (client-ready, client-message, dtmf, disconnect-bot), the call's data
// as flat string keys, and a Decoder that says what each bot event means
// (words, speaking, interruption, tool lifecycle). The dialects that
// carry RTVI (callsim/pipecateval over a WebSocket, callsim/webrtc over
// the data channel) decide what each meaning becomes in their calls.
package rtvi
