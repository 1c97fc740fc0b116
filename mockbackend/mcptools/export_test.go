package mcptools

import "net/http"

// OpenStreams is how many POST streams the endpoint h is serving: tests
// wait on it to order an event after the server has seen a stream close.
func OpenStreams(h http.Handler) int {
	e := h.(*endpoint)
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.streams)
}
