// Package nativews is the native dialect of callsim: JSON text frames of
// protocol/native over one WebSocket that the harness dials at the agent's
// ws:// URL. A connection runs no goroutine of its own, so thousands fit
// in one process: Send and Recv do their I/O on the caller's goroutine and
// keepalive pings go out from a timer.
package nativews
