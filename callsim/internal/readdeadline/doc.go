// Package readdeadline keeps a WebSocket's read deadline for the callsim
// dialects: the earlier of the call's deadline and the agent's last sign
// of life plus the idle timeout, moved on by every frame, ping and pong,
// and says which of the two a timed-out read ran into.
package readdeadline
