package mcptools_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/mockbackend"
	"github.com/callproof/callproof/mockbackend/mcptools"
	"github.com/callproof/callproof/scorer"
	"github.com/callproof/callproof/trace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// guard bounds every wait: it only stops a hung test, never decides one.
const guard = 20 * time.Second

func orderTools() []trace.ToolSpec {
	num := trace.ArgSpec{Name: "order_number", Type: "string", Required: true, Pattern: `^\d{4}$`, Description: "four digits"}
	return []trace.ToolSpec{
		{Name: "get_order", Description: "Read an order.", Effect: trace.EffectRead, Table: "orders", KeyArg: "order_number", Args: []trace.ArgSpec{num}},
		{Name: "update_order", Description: "Change an order.", Effect: trace.EffectUpdate, Table: "orders", KeyArg: "order_number", Consequential: true,
			Args: []trace.ArgSpec{num, {Name: "delivery_date", Type: "date"}, {Name: "quantity", Type: "integer"},
				{Name: "status", Type: "string", Enum: []string{"open", "cancelled"}}}},
	}
}

func orderRecords() []trace.Record {
	return []trace.Record{
		{Table: "orders", Key: "5590", Version: 1, Fields: map[string]string{"delivery_date": "2026-11-28", "quantity": "1", "status": "open"}},
		{Table: "orders", Key: "5599", Version: 1, Fields: map[string]string{"delivery_date": "2026-12-10", "quantity": "3", "status": "open"}},
	}
}

// fixture is one call on a started server, with an MCP client session
// of the SDK's own client over real HTTP on loopback.
type fixture struct {
	t    *testing.T
	h    http.Handler // the call's MCP endpoint
	call *mockbackend.Call
	rec  *trace.Recorder
	cs   *mcp.ClientSession
}

type bearer struct {
	tok  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.next.RoundTrip(r)
}

func newFixture(t *testing.T, faults ...trace.Fault) *fixture {
	t.Helper()
	return newFixtureBudget(t, mockbackend.Budget{PerSecond: -1, PerCall: -1}, faults...)
}

func newFixtureBudget(t *testing.T, budget mockbackend.Budget, faults ...trace.Fault) *fixture {
	t.Helper()
	return newFixtureTools(t, orderTools(), orderRecords(), budget, faults...)
}

// newFixtureTools opens a call with the catalogue tools and the records;
// its history starts as a run's does (call.start with both), so the
// scorer and the gate can read it.
func newFixtureTools(t *testing.T, tools []trace.ToolSpec, records []trace.Record, budget mockbackend.Budget, faults ...trace.Fault) *fixture {
	t.Helper()
	var h http.Handler
	s := mockbackend.New(mockbackend.Options{MCP: func(c *mockbackend.Call) http.Handler {
		h = mcptools.Handler(c)
		return h
	}})
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	rec := trace.NewRecorder("c1", nil)
	rec.Record(trace.SourceHarness, trace.KindCallStart, &trace.CallStart{Schema: trace.SchemaVersion, ScenarioID: "s1", Tools: tools, Records: records})
	c, err := s.Open(mockbackend.CallConfig{ID: "c1", Tools: tools, Records: records, Faults: faults,
		Seed: 1, TimeScale: 1, Recorder: rec, Budget: budget})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return &fixture{t: t, h: h, call: c, rec: rec, cs: connect(t, c.MCPURL(), c.Token())}
}

func connect(t *testing.T, url, tok string) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer{tok, tr}}, MaxRetries: -1,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func (f *fixture) callTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, guard)
	defer cancel()
	return f.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

type answer struct {
	res *mcp.CallToolResult
	err error
}

func (f *fixture) async(ctx context.Context, name string, args map[string]any) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		res, err := f.callTool(ctx, name, args)
		ch <- answer{res, err}
	}()
	return ch
}

func recv(t *testing.T, ch <-chan answer) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(guard):
		t.Fatal("no answer")
	}
	return answer{}
}

// waitKind blocks until the n-th event of kind is recorded.
func (f *fixture) waitKind(kind trace.Kind, n int) {
	f.t.Helper()
	wake := make(chan struct{}, 1)
	stop := f.rec.Subscribe(func(trace.Event) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer stop()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		if len(f.events(kind)) >= n {
			return
		}
		select {
		case <-wake:
		case <-timer.C:
			f.t.Fatalf("no %s event", kind)
		}
	}
}

func (f *fixture) events(kind trace.Kind) []trace.Event {
	var out []trace.Event
	for _, e := range f.rec.Events() {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (f *fixture) commits() int { return len(f.events(trace.KindToolCommitted)) }

// notes are the endpoint's notes in the call's history ("mcp: …").
func (f *fixture) notes() []string {
	var out []string
	for _, e := range f.events(trace.KindNote) {
		if n := e.Data.(*trace.Note).Text; strings.HasPrefix(n, "mcp: ") {
			out = append(out, n)
		}
	}
	return out
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok)
	return tc.Text
}

func update(num, date, key string) map[string]any {
	a := map[string]any{"order_number": num, "delivery_date": date}
	if key != "" {
		a[mcptools.ArgIdempotencyKey] = key
	}
	return a
}

func TestListToolsIsTheCatalogue(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	res, err := f.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, 2)
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	var get, upd map[string]any
	b, _ := json.Marshal(byName["get_order"].InputSchema)
	require.NoError(t, json.Unmarshal(b, &get))
	b, _ = json.Marshal(byName["update_order"].InputSchema)
	require.NoError(t, json.Unmarshal(b, &upd))
	require.Equal(t, "Read an order.", byName["get_order"].Description)
	require.Equal(t, []any{"order_number"}, get["required"])
	require.Equal(t, false, get["additionalProperties"])
	gp := get["properties"].(map[string]any)
	require.Equal(t, map[string]any{"type": "string", "pattern": `^\d{4}$`, "description": "four digits", "minLength": 1.0}, gp["order_number"])
	require.NotContains(t, gp, mcptools.ArgIdempotencyKey, "only consequential tools take a key")
	up := upd["properties"].(map[string]any)
	require.Equal(t, []any{"open", "cancelled"}, up["status"].(map[string]any)["enum"])
	require.Equal(t, "date", up["delivery_date"].(map[string]any)["format"])
	require.Equal(t, `^-?[0-9]+$`, up["quantity"].(map[string]any)["pattern"])
	require.Equal(t, 255.0, up[mcptools.ArgIdempotencyKey].(map[string]any)["maxLength"])
	require.Equal(t, "integer", up[mcptools.ArgStateVersion].(map[string]any)["type"])
}

func TestCallGoesThroughTheLedger(t *testing.T) {
	f := newFixture(t)
	args := update("5590", "2026-12-03", "k1")
	args[mcptools.ArgStateVersion] = 5
	res, err := f.callTool(context.Background(), "update_order", args)
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	require.Equal(t, 200.0, res.Meta["httpStatus"])
	sc := res.StructuredContent.(map[string]any)
	require.Equal(t, true, sc["ok"])
	require.Equal(t, "2026-12-03", sc["record"].(map[string]any)["fields"].(map[string]any)["delivery_date"])
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(text(t, res)), &body))
	require.Equal(t, sc, body)

	rows := f.call.Ledger()
	require.Len(t, rows, 1)
	require.Equal(t, map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"}, rows[0].Args)
	require.Equal(t, "k1", rows[0].IdempotencyKey)
	require.Equal(t, 5, *rows[0].BuiltFrom)
	require.NotNil(t, rows[0].Committed)

	// A null argument is absent (a strict-schema client writes one).
	res, err = f.callTool(context.Background(), "update_order", map[string]any{"order_number": "5599", "quantity": nil, mcptools.ArgIdempotencyKey: "k2"})
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	require.Equal(t, map[string]string{"order_number": "5599"}, f.call.Ledger()[1].Args)

	// A read, keyless: as over HTTP.
	res, err = f.callTool(context.Background(), "get_order", map[string]any{"order_number": "5599"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Empty(t, f.call.Ledger()[2].IdempotencyKey)
}

func TestMetaCarriesKeyAndVersion(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_order", Arguments: update("5590", "2026-12-03", ""),
		Meta: mcp.Meta{mcptools.MetaIdempotencyKey: "m1", mcptools.MetaStateVersion: 7}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	row := f.call.Ledger()[0]
	require.Equal(t, "m1", row.IdempotencyKey)
	require.Equal(t, 7, *row.BuiltFrom)
}

func TestValidationErrorIsAToolError(t *testing.T) {
	f := newFixture(t)
	for _, args := range []map[string]any{
		{"delivery_date": "2026-12-03"},                         // missing required
		{"order_number": "55"},                                  // pattern
		{"order_number": "5590", "status": "lost"},              // enum
		{"order_number": "5590", "delivery_date": "tomorrow"},   // type
		{"order_number": "5590", "colour": "red"},               // unknown
		{"order_number": "5590", mcptools.ArgStateVersion: "x"}, // not an integer
	} {
		res, err := f.callTool(context.Background(), "update_order", args)
		require.NoError(t, err)
		require.True(t, res.IsError, "%v", args)
		require.Equal(t, 400.0, res.Meta["httpStatus"])
		require.Equal(t, "invalid_request", res.StructuredContent.(map[string]any)["error"].(map[string]any)["type"])
	}
	require.Len(t, f.events(trace.KindToolRejected), 6)
	require.Zero(t, f.commits())
}

func TestIdempotentRetryCommitsOnce(t *testing.T) {
	f := newFixture(t)
	first, err := f.callTool(context.Background(), "update_order", update("5590", "2026-12-03", "k1"))
	require.NoError(t, err)
	second, err := f.callTool(context.Background(), "update_order", update("5590", "2026-12-03", "k1"))
	require.NoError(t, err)
	require.Equal(t, text(t, first), text(t, second))
	require.Equal(t, 1, f.commits())
	require.Len(t, f.events(trace.KindToolReplayed), 1)
	// Another request under the same key is refused.
	res, err := f.callTool(context.Background(), "update_order", update("5599", "2026-12-03", "k1"))
	require.NoError(t, err)
	require.True(t, res.IsError)
}

// The release gate's idempotent_retries rule reads an MCP call's key as
// it reads the header: a retry keyed by the argument or by _meta holds it
// (one commit, the retry replayed), an unkeyed retry breaks it twice (no
// key, the effect committed twice).
func TestGateReadsTheMCPKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(f *fixture) (*mcp.CallToolResult, error)
		want []string // the rule's violations; none: it holds
	}{
		{"argument", func(f *fixture) (*mcp.CallToolResult, error) {
			return f.callTool(context.Background(), "update_order", update("5590", "2026-12-03", "k1"))
		}, nil},
		{"meta", func(f *fixture) (*mcp.CallToolResult, error) {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			return f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_order", Arguments: update("5590", "2026-12-03", ""),
				Meta: mcp.Meta{mcptools.MetaIdempotencyKey: "m1"}})
		}, nil},
		{"keyless", func(f *fixture) (*mcp.CallToolResult, error) {
			return f.callTool(context.Background(), "update_order", update("5590", "2026-12-03", ""))
		}, []string{"r1 update_order sent without an Idempotency-Key", "r2 update_order sent without an Idempotency-Key", "the same effect committed 2 times"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			first, err := tc.call(f)
			require.NoError(t, err)
			require.False(t, first.IsError, text(t, first))
			again, err := tc.call(f) // the retry: the same write
			require.NoError(t, err)
			require.False(t, again.IsError, text(t, again))
			for _, row := range f.call.Ledger() {
				require.Equal(t, map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"}, row.Args, "the key is no argument")
			}
			if tc.want == nil {
				require.Equal(t, 1, f.commits())
				require.Len(t, f.events(trace.KindToolReplayed), 1)
			}
			f.rec.Record(trace.SourceHarness, trace.KindCallEnd, &trace.CallEnd{Outcome: trace.OutcomeScored})
			h := f.rec.Close()
			g := harness.Gate([]harness.Call{{History: h, Score: scorer.Score(h)}}, harness.Policy{})
			require.False(t, g.Broken, g.Reason)
			var rule harness.RuleResult
			for _, r := range g.Rules {
				if r.Rule == harness.RuleIdempotentRetries {
					rule = r
				}
			}
			require.Equal(t, harness.RuleIdempotentRetries, rule.Rule)
			require.Len(t, rule.Violations, len(tc.want), "%+v", rule.Violations)
			require.Equal(t, tc.want == nil, rule.Holds)
			for i, w := range tc.want {
				require.Contains(t, rule.Violations[i].Text, w)
			}
		})
	}
}

// A catalogue argument named like the key or the version is the tool's
// own: tools/list shows it as declared, a call passes it on as an
// argument, and only _meta carries a key.
func TestCatalogueArgumentOfTheSameName(t *testing.T) {
	tools := []trace.ToolSpec{{Name: "book_slot", Description: "Book a slot.", Effect: trace.EffectCreate, Table: "slots", KeyArg: "slot", Consequential: true,
		Args: []trace.ArgSpec{{Name: "slot", Type: trace.ArgString, Required: true},
			{Name: mcptools.ArgIdempotencyKey, Type: trace.ArgString, Required: true, Description: "the vendor's own"}}}}
	f := newFixtureTools(t, tools, nil, mockbackend.Budget{PerSecond: -1, PerCall: -1})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	list, err := f.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	b, _ := json.Marshal(list.Tools[0].InputSchema)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(b, &schema))
	props := schema["properties"].(map[string]any)
	require.Equal(t, "the vendor's own", props[mcptools.ArgIdempotencyKey].(map[string]any)["description"])
	require.Contains(t, props, mcptools.ArgStateVersion, "the version argument is still added")
	require.Equal(t, []any{"slot", mcptools.ArgIdempotencyKey}, schema["required"])

	res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "book_slot",
		Arguments: map[string]any{"slot": "a1", mcptools.ArgIdempotencyKey: "theirs", mcptools.ArgStateVersion: 1},
		Meta:      mcp.Meta{mcptools.MetaIdempotencyKey: "m1"}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	row := f.call.Ledger()[0]
	require.Equal(t, map[string]string{"slot": "a1", mcptools.ArgIdempotencyKey: "theirs"}, row.Args)
	require.Equal(t, "m1", row.IdempotencyKey)
	require.Equal(t, 1, *row.BuiltFrom)
}

func TestHoldReleaseAndFail(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.call.Hold("h", nil, time.Minute))
	ch := f.async(context.Background(), "update_order", update("5590", "2026-12-03", "k1"))
	f.waitKind(trace.KindToolHeld, 1)
	require.Zero(t, f.commits())
	require.NoError(t, f.call.Release("h"))
	a := recv(t, ch)
	require.NoError(t, a.err)
	require.False(t, a.res.IsError)
	require.Equal(t, 1, f.commits())

	require.NoError(t, f.call.Hold("h", nil, time.Minute))
	ch = f.async(context.Background(), "update_order", update("5599", "2026-12-04", "k2"))
	f.waitKind(trace.KindToolHeld, 2)
	require.NoError(t, f.call.Fail("h", 503))
	a = recv(t, ch)
	require.NoError(t, a.err)
	require.True(t, a.res.IsError)
	require.Equal(t, 503.0, a.res.Meta["httpStatus"])
	require.Equal(t, 1, f.commits())
}

// The SDK's client sends notifications/cancelled when the call's context
// ends: the held request is withdrawn, its key freed, nothing commits.
func TestCancelledNotificationWithdraws(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.call.Hold("h", nil, time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	ch := f.async(ctx, "update_order", update("5590", "2026-12-03", "k1"))
	f.waitKind(trace.KindToolHeld, 1)
	cancel()
	a := recv(t, ch)
	require.Error(t, a.err)
	f.waitKind(trace.KindToolCancelled, 1)
	require.Equal(t, "client gave up", f.events(trace.KindToolCancelled)[0].Data.(*trace.ToolEvent).Reason)
	// The Go client sends the notification (and closes the call's
	// stream, which the history notes when it comes first).
	require.Regexp(t, `(?m)^mcp: notifications/cancelled for request \d+`, strings.Join(f.notes(), "\n"))
	require.NoError(t, f.call.Release("h")) // the hold has ended: a no-op
	require.Zero(t, f.commits())
	// The key is free again: a retry executes.
	res, err := f.callTool(context.Background(), "update_order", update("5590", "2026-12-03", "k1"))
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Equal(t, 1, f.commits())
	require.Empty(t, f.events(trace.KindToolReplayed))
}

// Ending the session (HTTP DELETE) withdraws its in-flight calls.
func TestSessionDeleteWithdraws(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.call.Hold("h", nil, time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := f.async(ctx, "update_order", update("5590", "2026-12-03", "k1"))
	f.waitKind(trace.KindToolHeld, 1)
	// The SDK's Go client waits for its calls before it ends a session,
	// so send the DELETE as a client that ends it at once does.
	req, err := http.NewRequest(http.MethodDelete, f.call.MCPURL(), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.call.Token())
	req.Header.Set("Mcp-Session-Id", f.cs.ID())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	f.waitKind(trace.KindToolCancelled, 1)
	require.Zero(t, f.commits())
	require.Equal(t, []string{"mcp: session ended (DELETE) with 1 tool call(s) in flight"}, f.notes())
	cancel()
	recv(t, ch)
}

func TestCallClosedEndsSessions(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.call.Hold("h", nil, time.Minute))
	ch := f.async(context.Background(), "update_order", update("5590", "2026-12-03", "k1"))
	f.waitKind(trace.KindToolHeld, 1)
	f.call.Close()
	// Either the held request's 503 call_closed reaches the client, or
	// the session ends first.
	if a := recv(t, ch); a.err == nil {
		require.True(t, a.res.IsError)
		require.Equal(t, 503.0, a.res.Meta["httpStatus"])
	}
	require.Zero(t, f.commits())
	require.Equal(t, "call closed", f.events(trace.KindToolCancelled)[0].Data.(*trace.ToolEvent).Reason)
}

func TestEveryFaultKind(t *testing.T) {
	upd := func(key string) map[string]any { return update("5590", "2026-12-03", key) }
	cases := []struct {
		fault  trace.Fault
		check  func(t *testing.T, f *fixture, a answer)
		cancel bool // the client gives up: no answer ever comes
	}{
		{fault: trace.Fault{Kind: trace.FaultLatency, Delay: time.Millisecond}, check: func(t *testing.T, f *fixture, a answer) {
			require.False(t, a.res.IsError)
			require.Equal(t, 1, f.commits())
		}},
		{fault: trace.Fault{Kind: trace.FaultTimeout}, cancel: true, check: func(t *testing.T, f *fixture, a answer) {
			require.Error(t, a.err)
			f.waitKind(trace.KindToolCancelled, 1)
			require.Zero(t, f.commits())
		}},
		{fault: trace.Fault{Kind: trace.FaultStatus, Status: 502}, check: func(t *testing.T, f *fixture, a answer) {
			require.True(t, a.res.IsError)
			require.Equal(t, 502.0, a.res.Meta["httpStatus"])
			require.Equal(t, "server_error", a.res.StructuredContent.(map[string]any)["error"].(map[string]any)["type"])
			require.Zero(t, f.commits())
		}},
		{fault: trace.Fault{Kind: trace.FaultStatusAfter}, check: func(t *testing.T, f *fixture, a answer) {
			require.True(t, a.res.IsError)
			require.Equal(t, 500.0, a.res.Meta["httpStatus"])
			require.Equal(t, 1, f.commits())
		}},
		{fault: trace.Fault{Kind: trace.FaultEmpty}, check: func(t *testing.T, f *fixture, a answer) {
			require.False(t, a.res.IsError)
			require.Empty(t, text(t, a.res))
			require.Nil(t, a.res.StructuredContent)
			require.Equal(t, 1, f.commits())
		}},
		{fault: trace.Fault{Kind: trace.FaultWrongRecord, Record: "5599"}, check: func(t *testing.T, f *fixture, a answer) {
			require.False(t, a.res.IsError)
			require.Equal(t, "5599", a.res.StructuredContent.(map[string]any)["record"].(map[string]any)["key"])
			require.Equal(t, 1, f.commits())
		}},
		{fault: trace.Fault{Kind: trace.FaultLateSuccess, Delay: time.Millisecond}, check: func(t *testing.T, f *fixture, a answer) {
			require.False(t, a.res.IsError)
			require.Equal(t, 202.0, a.res.Meta["httpStatus"])
			require.Equal(t, "pending", a.res.StructuredContent.(map[string]any)["status"])
			f.waitKind(trace.KindToolCommitted, 1)
		}},
		{fault: trace.Fault{Kind: trace.FaultDuplicate}, check: func(t *testing.T, f *fixture, a answer) {
			require.False(t, a.res.IsError)
			f.waitKind(trace.KindToolReplayed, 1) // the second delivery carries the key
			require.Equal(t, 1, f.commits())
			require.Len(t, f.call.Ledger(), 2)
		}},
		{fault: trace.Fault{Kind: trace.FaultDropResp}, check: func(t *testing.T, f *fixture, a answer) {
			require.Error(t, a.err, "the stream is cut without the answer")
			require.Equal(t, 1, f.commits())
			require.True(t, f.call.Ledger()[0].Dropped)
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.fault.Kind), func(t *testing.T) {
			f := newFixture(t, tc.fault)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := f.async(ctx, "update_order", upd("k1"))
			if tc.cancel {
				f.waitKind(trace.KindFaultApplied, 1)
				cancel()
			}
			a := recv(t, ch)
			if !tc.cancel && tc.fault.Kind != trace.FaultDropResp {
				require.NoError(t, a.err)
			}
			tc.check(t, f, a)
			require.Equal(t, []trace.FaultKind{tc.fault.Kind}, f.call.Ledger()[0].Faults)
		})
	}
}

func TestEndpointNeedsTheCallsToken(t *testing.T) {
	f := newFixture(t)
	for _, tok := range []string{"", "not-the-token"} {
		req, err := http.NewRequest(http.MethodPost, f.call.MCPURL(), nil)
		require.NoError(t, err)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Contains(t, []int{401, 403}, resp.StatusCode)
	}
}

func TestSessionsAreBounded(t *testing.T) {
	f := newFixture(t) // one session open
	for range mcptools.DefaultMaxSessions - 1 {
		connect(t, f.call.MCPURL(), f.call.Token())
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "extra", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	_, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: f.call.MCPURL(), HTTPClient: &http.Client{Transport: bearer{f.call.Token(), http.DefaultTransport}}, MaxRetries: -1,
	}, nil)
	require.Error(t, err)
	// Ending one makes room.
	require.NoError(t, f.cs.Close())
	connect(t, f.call.MCPURL(), f.call.Token())
}

// A stream closed without notifications/cancelled is not a withdrawal
// (the MCP spec does not make it one): the call runs on and, released,
// commits.
func TestClosedStreamLeavesTheCallRunning(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.call.Hold("h", nil, time.Minute))
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"update_order","arguments":{"order_number":"5590","delivery_date":"2026-12-03"}}}`
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.call.MCPURL(), strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.call.Token())
	req.Header.Set("Mcp-Session-Id", f.cs.ID())
	req.Header.Set("Mcp-Protocol-Version", f.cs.InitializeResult().ProtocolVersion)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	done := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	f.waitKind(trace.KindToolHeld, 1)
	cancel() // the stream closes; no notification is sent
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatal("the request did not end")
	}
	// Release only once the endpoint has let go of the closed stream.
	for stop := time.Now().Add(guard); mcptools.OpenStreams(f.h) > 0; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(stop), "the endpoint never saw the stream close")
	}
	require.NoError(t, f.call.Release("h"))
	f.waitKind(trace.KindToolCommitted, 1)
	require.Empty(t, f.events(trace.KindToolCancelled))
	// The history says what the client did.
	require.Equal(t, []string{"mcp: the stream of tools/call update_order closed before its answer"}, f.notes())
}

// The documented limits: arguments are bounded like an HTTP body (413,
// recorded as rejected), a request to the endpoint by MaxMessageBytes.
func TestArgumentsAreBoundedLikeABody(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("x", mockbackend.MaxBodyBytes)
	res, err := f.callTool(context.Background(), "get_order", map[string]any{"order_number": big})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, 413.0, res.Meta["httpStatus"])
	require.Len(t, f.events(trace.KindToolRejected), 1)

	body := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"` + strings.Repeat("x", mcptools.MaxMessageBytes) + `"}}`
	req, err := http.NewRequest(http.MethodPost, f.call.MCPURL(), strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.call.Token())
	req.Header.Set("Mcp-Session-Id", f.cs.ID())
	req.Header.Set("Mcp-Protocol-Version", f.cs.InitializeResult().ProtocolVersion)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

// Only tools/call counts in the budget; past it the model sees a 429.
func TestBudgetCountsToolCalls(t *testing.T) {
	f := newFixtureBudget(t, mockbackend.Budget{PerSecond: -1, PerCall: 1})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	for range 3 {
		_, err := f.cs.ListTools(ctx, nil)
		require.NoError(t, err)
	}
	res, err := f.callTool(ctx, "get_order", map[string]any{"order_number": "5590"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	res, err = f.callTool(ctx, "get_order", map[string]any{"order_number": "5590"})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, 429.0, res.Meta["httpStatus"])
	require.Len(t, f.call.Ledger(), 1)
}

// A tool outside the catalogue is the MCP layer's error, not recorded.
func TestUnknownToolIsAProtocolError(t *testing.T) {
	f := newFixture(t)
	_, err := f.callTool(context.Background(), "delete_everything", nil)
	require.Error(t, err)
	require.Empty(t, f.call.Ledger())
}
