// Package conformance is `callproof check`: it places a few short calls
// against an agent and says, message by message, what the agent gets right
// and what it must fix before a suite run means anything — the handshake,
// speech framing, barge-in, tool calls (auth, arguments, keys) and the
// optional notices (tool intent, self-reports).
package conformance
