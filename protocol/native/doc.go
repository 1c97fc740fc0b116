// Package native defines the messages of callproof's native text-mode
// protocol: JSON text frames over one WebSocket, shaped as an extension of
// the Twilio Media Streams envelope (an "event" field, "start" first,
// "stop" last). The harness dials the agent. Both the simulator and agents
// written in Go import these types; docs/PROTOCOL.md is the reference.
package native
