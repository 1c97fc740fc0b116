// Package twilio is callproof's caller speaking Twilio Media Streams: it
// dials the agent's WebSocket as Twilio does, streams the caller's
// synthesized speech and background noise as real-time 20 ms μ-law media
// frames, plays the agent's audio out in real time (marks echoed when
// playout reaches them, the queue dropped on clear), and turns what was
// heard back into the native events the simulator records.
package twilio
