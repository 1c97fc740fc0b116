// Package nativews is the native dialect of callsim: JSON text frames of
// protocol/native over one WebSocket that the harness dials at the agent's
// ws:// URL. Each connection has one reader and one writer goroutine.
package nativews
