// Package wsprobe is the preflight of the WebSocket dialects (native and
// Twilio): one upgrade, closed again before any message is sent; and the upgrade
// itself, for the dialects that dial with the default dialer.
package wsprobe
