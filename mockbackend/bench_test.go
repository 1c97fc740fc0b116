package mockbackend

import (
	"fmt"
	"net/http"
	"testing"
)

// BenchmarkToolCall measures one update_order over loopback HTTP with a
// keep-alive client: auth, parse, validate, memdb commit, ledger, events.
func BenchmarkToolCall(b *testing.B) {
	s := testServer(b, Options{})
	f := openCall(b, s, "bench", unlimited)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r := f.post("update_order", update("5590", fmt.Sprintf("2026-12-%02d", 1+i%28)))
		if r.status != http.StatusOK {
			b.Fatalf("%d %s %v", r.status, r.body, r.err)
		}
	}
}
