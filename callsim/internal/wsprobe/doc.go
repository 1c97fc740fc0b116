// Package wsprobe is the preflight of the WebSocket dialects (native and
// Twilio): one upgrade, closed again before any message is sent.
package wsprobe
