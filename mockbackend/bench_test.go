package mockbackend

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
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

// openCallBatch is how many calls BenchmarkOpenCall holds open at once to
// measure the heap an open call retains.
const openCallBatch = 1000

// BenchmarkOpenCall measures what one call costs the backend, with the
// catalogues, records and faults of the core pack's scenarios, as the
// harness opens them: bytes allocated per Open and Close (B/op), and the
// heap retained per open call (B/opencall, HeapInuse after GC with
// openCallBatch calls open, less before; the recorders are made first, so
// only the backend's share and the events it records count). "idle" opens
// calls that serve nothing; "served" has each call answer a read, an
// idempotent update and a replay of it (no faults: they would only add
// delays).
func BenchmarkOpenCall(b *testing.B) {
	cases := corePackCalls(b)
	b.Run("idle", func(b *testing.B) { benchOpenCall(b, cases, nil) })
	noFaults := make([]CallConfig, len(cases))
	for i, c := range cases {
		c.Faults = nil
		noFaults[i] = c
	}
	b.Run("served", func(b *testing.B) { benchOpenCall(b, noFaults, serveTypical) })
}

// corePackCalls compiles every scenario of the core pack into the
// CallConfig the harness would open for it.
func corePackCalls(b *testing.B) []CallConfig {
	b.Helper()
	pack, err := scenarios.Pack("core")
	if err != nil {
		b.Fatal(err)
	}
	var out []CallConfig
	for _, sc := range pack {
		c, err := scenarios.Compile(sc)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, CallConfig{Tools: c.Tools, Records: c.Records, Faults: c.Faults, Seed: c.Seed, TimeScale: 1,
			Budget: Budget{PerSecond: -1, PerCall: -1}})
	}
	return out
}

func benchOpenCall(b *testing.B, cases []CallConfig, use func(testing.TB, *Server, *Call, CallConfig)) {
	s := New(Options{}) // not started: requests go straight to its Handler
	defer s.Close()
	open := func(i int, rec *trace.Recorder) *Call {
		cfg := cases[i%len(cases)]
		cfg.ID, cfg.Recorder = fmt.Sprintf("call-%d", i), rec
		c, err := s.Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if use != nil {
			use(b, s, c, cfg)
		}
		return c
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		open(i, trace.NewRecorder("call", nil)).Close()
		i++
	}

	b.StopTimer()
	recs := make([]*trace.Recorder, openCallBatch)
	for j := range recs {
		recs[j] = trace.NewRecorder("call", nil)
	}
	calls := make([]*Call, openCallBatch)
	before := heapInuse()
	for j := range calls {
		calls[j] = open(i+j, recs[j])
	}
	after := heapInuse()
	b.ReportMetric(float64(int64(after)-int64(before))/openCallBatch, "B/opencall")
	for _, c := range calls {
		c.Close()
	}
	runtime.KeepAlive(recs)
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// serveTypical has c answer what a typical call asks: a read, an
// idempotent update and a retry of it, through the server's Handler.
func serveTypical(t testing.TB, s *Server, c *Call, cfg CallConfig) {
	key := cfg.Records[0].Key
	for _, r := range []struct{ tool, body, idem string }{
		{"get_order", `{"order_number":"` + key + `"}`, ""},
		{"update_order", `{"order_number":"` + key + `","delivery_date":"2026-12-03"}`, "k-1"},
		{"update_order", `{"order_number":"` + key + `","delivery_date":"2026-12-03"}`, "k-1"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/calls/"+c.ID()+"/tools/"+r.tool, strings.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer "+c.Token())
		if r.idem != "" {
			req.Header.Set(native.HeaderIdempotencyKey, r.idem)
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", r.tool, w.Code, w.Body)
		}
	}
}
