package mockbackend

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

// orderTools is the built-in order domain's catalogue (docs/ARCHITECTURE.md).
func orderTools() []trace.ToolSpec {
	num := trace.ArgSpec{Name: "order_number", Type: "string", Required: true, Pattern: `^\d{4}$`}
	return []trace.ToolSpec{
		{Name: "get_order", Effect: trace.EffectRead, Table: "orders", KeyArg: "order_number", Args: []trace.ArgSpec{num}},
		{Name: "update_order", Effect: trace.EffectUpdate, Table: "orders", KeyArg: "order_number", Consequential: true,
			Args: []trace.ArgSpec{num, {Name: "delivery_date", Type: "date"}, {Name: "quantity", Type: "integer"},
				{Name: "status", Type: "string", Enum: []string{"open", "cancelled"}}}},
		{Name: "ship_order", Effect: trace.EffectCreate, Table: "shipments", Consequential: true, Args: []trace.ArgSpec{num}},
	}
}

func orderRecords() []trace.Record {
	return []trace.Record{
		{Table: "orders", Key: "5590", Version: 1, Fields: map[string]string{"delivery_date": "2026-11-28", "quantity": "1", "item": "lamp", "status": "open"}},
		{Table: "orders", Key: "5599", Version: 1, Fields: map[string]string{"delivery_date": "2026-12-10", "quantity": "3", "item": "desk", "status": "open"}},
	}
}

// testServer starts a real server on loopback, closed at cleanup.
func testServer(t testing.TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// fixture is one open call on a running server.
type fixture struct {
	t      testing.TB
	srv    *Server
	call   *Call
	rec    *trace.Recorder
	client *http.Client
}

func openCall(t testing.TB, s *Server, id string, mod func(*CallConfig)) *fixture {
	t.Helper()
	rec := trace.NewRecorder(id, nil)
	cfg := CallConfig{ID: id, Tools: orderTools(), Records: orderRecords(), Seed: 1, TimeScale: 1, Recorder: rec}
	if mod != nil {
		mod(&cfg)
	}
	c, err := s.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &fixture{t: t, srv: s, call: c, rec: cfg.Recorder, client: &http.Client{Transport: tr}}
}

func newFixture(t testing.TB, mod func(*CallConfig)) *fixture {
	return openCall(t, testServer(t, Options{}), "c1", mod)
}

// resp is one tool answer; err is set when no answer came.
type resp struct {
	status int
	body   string
	err    error
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.body), &m), "body %q", r.body)
	return m
}

func (r resp) errType(t testing.TB) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

// hdr is a request option.
type hdr func(*http.Request)

func withKey(k string) hdr {
	return func(r *http.Request) { r.Header.Set(native.HeaderIdempotencyKey, k) }
}
func withVersion(v string) hdr {
	return func(r *http.Request) { r.Header.Set(native.HeaderStateVersion, v) }
}
func withToken(tok string) hdr {
	return func(r *http.Request) {
		if tok == "" {
			r.Header.Del("Authorization")
		} else {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
	}
}

func (f *fixture) post(tool string, args any, opts ...hdr) resp {
	return f.postCtx(context.Background(), tool, args, opts...)
}

func (f *fixture) postCtx(ctx context.Context, tool string, args any, opts ...hdr) resp {
	var body []byte
	switch a := args.(type) {
	case string:
		body = []byte(a)
	default:
		var err error
		body, err = json.Marshal(a)
		require.NoError(f.t, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.call.BaseURL()+"/"+tool, bytes.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.call.Token())
	for _, o := range opts {
		o(req)
	}
	res, err := f.client.Do(req)
	if err != nil {
		return resp{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: string(b), err: err}
}

// async posts in the background; the answer arrives on the channel.
func (f *fixture) async(ctx context.Context, tool string, args any, opts ...hdr) <-chan resp {
	ch := make(chan resp, 1)
	go func() { ch <- f.postCtx(ctx, tool, args, opts...) }()
	return ch
}

func (f *fixture) record(table, key string) trace.Record {
	f.t.Helper()
	for _, r := range f.call.Snapshot() {
		if r.Table == table && r.Key == key {
			return r
		}
	}
	f.t.Fatalf("no record %s/%s", table, key)
	return trace.Record{}
}

// tev returns an event's tool payload.
func tev(e trace.Event) *trace.ToolEvent {
	te, _ := e.Data.(*trace.ToolEvent)
	return te
}

// kindOf selects events of a kind (and ref, when given).
func kindOf(kind trace.Kind, ref string) func(trace.Event) bool {
	return func(e trace.Event) bool {
		return e.Kind == kind && (ref == "" || (tev(e) != nil && tev(e).Ref == ref))
	}
}

func find(rec *trace.Recorder, pred func(trace.Event) bool) []trace.Event {
	var out []trace.Event
	for _, e := range rec.Events() {
		if pred(e) {
			out = append(out, e)
		}
	}
	return out
}

// one returns the single event matching pred, failing otherwise.
func one(t testing.TB, rec *trace.Recorder, pred func(trace.Event) bool) trace.Event {
	t.Helper()
	es := find(rec, pred)
	require.Len(t, es, 1, "events: %s", dump(rec))
	return es[0]
}

func kinds(rec *trace.Recorder, ref string) []trace.Kind {
	var out []trace.Kind
	for _, e := range rec.Events() {
		if te := tev(e); te != nil && (ref == "" || te.Ref == ref) {
			out = append(out, e.Kind)
		}
	}
	return out
}

func dump(rec *trace.Recorder) string {
	var b bytes.Buffer
	for _, e := range rec.Events() {
		j, _ := json.Marshal(e.Data)
		b.WriteString("\n  " + string(e.Kind) + " " + string(j))
	}
	return b.String()
}

// waitFor blocks until an event matching pred is recorded. The deadline
// is only a guard against a hung test, never part of an assertion.
func waitFor(t testing.TB, rec *trace.Recorder, pred func(trace.Event) bool) trace.Event {
	t.Helper()
	wake := make(chan struct{}, 1)
	cancel := rec.Subscribe(func(trace.Event) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer cancel()
	guard := time.NewTimer(20 * time.Second)
	defer guard.Stop()
	for {
		for _, e := range rec.Events() {
			if pred(e) {
				return e
			}
		}
		select {
		case <-wake:
		case <-guard.C:
			t.Fatalf("event never came; events so far:%s", dump(rec))
		}
	}
}

// recv takes an async answer, guarded against a hung test.
func recv(t testing.TB, ch <-chan resp) resp {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("no answer")
	}
	return resp{}
}

func ledgerRow(t testing.TB, c *Call, ref string) LedgerRow {
	t.Helper()
	for _, r := range c.Ledger() {
		if r.Ref == ref {
			return r
		}
	}
	t.Fatalf("no ledger row %s", ref)
	return LedgerRow{}
}

func update(num, date string) map[string]any {
	return map[string]any{"order_number": num, "delivery_date": date}
}

// unlimited lifts the call's tool request budget.
func unlimited(c *CallConfig) { c.Budget = Budget{PerSecond: -1, PerCall: -1} }
