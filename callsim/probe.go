package callsim

import "context"

// Prober is an optional Transport capability: say whether an agent
// answers at agentURL in the transport's dialect, without placing a call.
// Probe makes one connection, its dialect's handshake and nothing more
// (no start, no media), closes it again, and records nothing; ctx bounds
// it. A nil error means a call would get past the dial.
type Prober interface {
	Probe(ctx context.Context, agentURL string) error
}
