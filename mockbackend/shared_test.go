package mockbackend

import (
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

func TestCallsShareCompiledCatalogue(t *testing.T) {
	s := testServer(t, Options{})
	a := openCall(t, s, "a", nil) // each openCall builds its catalogue afresh
	b := openCall(t, s, "b", nil)
	require.Same(t, a.call.tools["update_order"], b.call.tools["update_order"])
	require.Equal(t, 1, s.catalogues.len())

	other := openCall(t, s, "c", func(cfg *CallConfig) { cfg.Tools[0].Description = "another catalogue" })
	require.NotSame(t, a.call.tools["get_order"], other.call.tools["get_order"])
	require.Equal(t, 2, s.catalogues.len())
}

func TestSharedCatalogueIgnoresLaterEdits(t *testing.T) {
	s := testServer(t, Options{})
	tools := orderTools()
	f := openCall(t, s, "a", func(cfg *CallConfig) { cfg.Tools = tools })
	// The caller changes its catalogue after Open: neither the open call
	// nor a call opened with the original catalogue sees it.
	tools[1].Args[3].Enum[0] = "lost"
	tools[1].Args[0].Pattern = `^\d{5}$`
	g := openCall(t, s, "b", nil)
	for _, c := range []*fixture{f, g} {
		r := c.post("update_order", map[string]any{"order_number": "5590", "status": "open"})
		require.Equal(t, http.StatusOK, r.status, r.body)
	}
	// A call opened with the edited catalogue gets it, compiled on its own.
	h := openCall(t, s, "c", func(cfg *CallConfig) { cfg.Tools = tools })
	r := h.post("update_order", map[string]any{"order_number": "5590", "status": "open"})
	require.Equal(t, http.StatusBadRequest, r.status, r.body)
	require.Equal(t, 2, s.catalogues.len())
}

// TestOpenErrorsAreUnchanged pins the messages of bad configurations,
// which sharing must not change, and checks none is kept: a second Open
// fails the same way.
func TestOpenErrorsAreUnchanged(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	cases := []struct {
		cfg  CallConfig
		want string
	}{
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: "purge", Table: "x"}}},
			`mockbackend: tool "t": unknown effect "purge"`},
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectUpdate, Table: "x"}}},
			`mockbackend: tool "t": update needs key_arg`},
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectRead, Table: "x", KeyArg: "k", Args: []trace.ArgSpec{{Name: "k", Pattern: "("}}}}},
			"mockbackend: tool \"t\" arg \"k\": error parsing regexp: missing closing ): `(`"},
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectCreate, Table: "x", Args: []trace.ArgSpec{{Name: "k", Type: "money"}}}}},
			`mockbackend: tool "t" arg "k": unknown type "money"`},
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectCreate}}},
			`mockbackend: tool "t" needs a name and a table`},
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectCreate, Table: "x"}, {Name: "t", Effect: trace.EffectCreate, Table: "y"}}},
			`mockbackend: tool "t" declared twice`},
		{CallConfig{Records: []trace.Record{{Table: "orders"}}},
			`mockbackend: record "orders"/"" needs a table and a key`},
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: "explode", Table: "x"}}, Records: []trace.Record{{Table: "orders"}}},
			`mockbackend: tool "t": unknown effect "explode"`}, // the catalogue is checked first
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectDelete, Table: "x"}}},
			`mockbackend: tool "t": delete needs key_arg`},
		{CallConfig{Tools: []trace.ToolSpec{{Name: "t", Effect: trace.EffectCancel, Table: "x", KeyArg: "k", StatusField: "status"}}},
			`mockbackend: tool "t": cancel needs key_arg, status_field and status_value`},
	}
	for i, tc := range cases {
		for range 2 {
			tc.cfg.ID = "x"
			_, err := s.Open(tc.cfg)
			require.EqualError(t, err, tc.want, "case %d", i)
		}
	}
	require.Equal(t, 1, s.catalogues.len(), "only the empty catalogue, which is valid")
	require.Zero(t, s.stores.len())
}

func TestSharedCachesAreBounded(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	open := func(i int) *Call {
		tools := orderTools()
		tools[0].Description = fmt.Sprint("catalogue ", i)
		recs := orderRecords()
		recs[0].Fields["item"] = fmt.Sprint("item ", i)
		c, err := s.Open(CallConfig{ID: fmt.Sprint("c", i), Tools: tools, Records: recs})
		require.NoError(t, err)
		return c
	}
	require.Equal(t, 64, sharedCacheSize, "docs/PERFORMANCE.md says 64 entries")
	for i := range sharedCacheSize + 5 {
		open(i).Close()
	}
	require.Equal(t, sharedCacheSize, s.catalogues.len())
	require.Equal(t, sharedCacheSize, s.stores.len())
	c := open(0) // evicted long ago: built again
	defer c.Close()
	require.Equal(t, "item 0", c.Snapshot()[0].Fields["item"])
	require.Equal(t, "catalogue 0", c.tools["get_order"].spec.Description)
}

// TestCallsSharingAStoreAreIsolated: calls opened with the same records
// start from one template, yet each sees only its own writes.
func TestCallsSharingAStoreAreIsolated(t *testing.T) {
	s := testServer(t, Options{})
	a := openCall(t, s, "a", unlimited)
	b := openCall(t, s, "b", unlimited)
	require.Equal(t, http.StatusOK, a.post("update_order", update("5590", "2026-12-24"), withKey("k")).status)
	require.Equal(t, http.StatusOK, a.post("ship_order", map[string]any{"order_number": "5590"}).status)
	c := openCall(t, s, "c", unlimited)
	require.Equal(t, 1, s.stores.len())
	for _, f := range []*fixture{b, c} {
		require.Empty(t, f.call.Diff(orderRecords()), "call %s", f.call.ID())
		require.Empty(t, f.call.Ledger())
		// The key a used is free here.
		r := f.post("update_order", update("5590", "2026-12-03"), withKey("k"))
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"])
		require.Equal(t, 2, f.record("orders", "5590").Version)
	}
	require.Equal(t, "2026-12-24", a.record("orders", "5590").Fields["delivery_date"])
	require.Len(t, a.call.Snapshot(), 3)
	// The ledger's before and after stay what they were at the commit.
	row := a.call.Ledger()[0]
	require.Equal(t, "2026-11-28", row.Before["delivery_date"])
	require.Equal(t, "2026-12-24", row.After["delivery_date"])
}

func TestSharedCachesUnderConcurrentOpens(t *testing.T) {
	s := testServer(t, Options{})
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			tools := orderTools()
			tools[0].Description = fmt.Sprint("variant ", i%4)
			c, err := s.Open(CallConfig{ID: fmt.Sprint("c", i), Tools: tools, Records: orderRecords(), Budget: Budget{PerSecond: -1}})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			f := &fixture{t: t, srv: s, call: c, rec: c.Recorder(), client: &http.Client{}}
			if r := f.post("update_order", update("5590", fmt.Sprintf("2026-12-%02d", 1+i%28))); r.status != http.StatusOK {
				errs <- fmt.Errorf("call %d: %d %s", i, r.status, r.body)
				return
			}
			if got, _ := findRecord(c.Snapshot(), "orders", "5590"); got.Fields["delivery_date"] != fmt.Sprintf("2026-12-%02d", 1+i%28) {
				errs <- fmt.Errorf("call %d sees %v", i, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Equal(t, 4, s.catalogues.len())
	require.Equal(t, 1, s.stores.len())
}

// TestDigestsCoverEveryField changes each field of a catalogue and of the
// records alone, and wants a new digest every time: a field trace adds
// must be added to catalogueDigest or recordsDigest, or calls with
// different configurations would share one compiled form.
func TestDigestsCoverEveryField(t *testing.T) {
	seen := map[digest]string{}
	distinct := func(name string, d digest) {
		t.Helper()
		if prev, dup := seen[d]; dup {
			t.Errorf("%s digests like %s", name, prev)
		}
		seen[d] = name
	}
	base := trace.ToolSpec{Args: []trace.ArgSpec{{}}}
	distinct("catalogue", catalogueDigest([]trace.ToolSpec{base}))
	for i := range reflect.TypeFor[trace.ToolSpec]().NumField() {
		sp := cloneSpec(base)
		perturb(t, reflect.ValueOf(&sp).Elem().Field(i))
		distinct("ToolSpec."+reflect.TypeFor[trace.ToolSpec]().Field(i).Name, catalogueDigest([]trace.ToolSpec{sp}))
	}
	for i := range reflect.TypeFor[trace.ArgSpec]().NumField() {
		sp := cloneSpec(base)
		perturb(t, reflect.ValueOf(&sp.Args[0]).Elem().Field(i))
		distinct("ArgSpec."+reflect.TypeFor[trace.ArgSpec]().Field(i).Name, catalogueDigest([]trace.ToolSpec{sp}))
	}
	// Lengths keep neighbouring strings apart.
	distinct("name ab", catalogueDigest([]trace.ToolSpec{{Name: "ab"}}))
	distinct("name a, description b", catalogueDigest([]trace.ToolSpec{{Name: "a", Description: "b"}}))

	clear(seen)
	distinct("records", recordsDigest([]trace.Record{{}}))
	for i := range reflect.TypeFor[trace.Record]().NumField() {
		r := trace.Record{}
		perturb(t, reflect.ValueOf(&r).Elem().Field(i))
		distinct("Record."+reflect.TypeFor[trace.Record]().Field(i).Name, recordsDigest([]trace.Record{r}))
	}
	distinct("fields k=v", recordsDigest([]trace.Record{{Fields: map[string]string{"k": "v"}}}))
	distinct("fields k=w", recordsDigest([]trace.Record{{Fields: map[string]string{"k": "w"}}}))
}

// perturb changes a zero-valued field so that it is no longer equal.
func perturb(t *testing.T, f reflect.Value) {
	t.Helper()
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Int, reflect.Int64:
		f.SetInt(f.Int() + 1)
	case reflect.Slice:
		f.Set(reflect.Append(f, reflect.New(f.Type().Elem()).Elem()))
	case reflect.Map:
		m := reflect.MakeMap(f.Type())
		m.SetMapIndex(reflect.New(f.Type().Key()).Elem(), reflect.New(f.Type().Elem()).Elem())
		f.Set(m)
	default:
		t.Fatalf("no way to change a %s field: teach perturb and the digests", f.Kind())
	}
}

// TestLedgerCopiesStayPrivate: rows share maps inside the store, so what
// Ledger, Snapshot and the events hand out must be copies.
func TestLedgerCopiesStayPrivate(t *testing.T) {
	f := newFixture(t, unlimited)
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-24")).status)
	scribble := func(m map[string]string) {
		for k := range m {
			m[k] = "scribbled"
		}
	}
	for _, row := range f.call.Ledger() {
		scribble(row.Args)
		scribble(row.Before)
		scribble(row.After)
	}
	for _, r := range f.call.Snapshot() {
		scribble(r.Fields)
	}
	for _, e := range f.rec.Events() {
		if te := tev(e); te != nil {
			scribble(te.Args)
			scribble(te.Before)
			scribble(te.After)
		}
	}
	row := f.call.Ledger()[0]
	require.Equal(t, map[string]string{"order_number": "5590", "delivery_date": "2026-12-24"}, row.Args)
	require.Equal(t, "2026-11-28", row.Before["delivery_date"])
	require.Equal(t, "2026-12-24", row.After["delivery_date"])
	require.Equal(t, "2026-12-24", f.record("orders", "5590").Fields["delivery_date"])
	// A second call from the same template starts clean.
	g := openCall(t, f.srv, "c2", nil)
	require.Empty(t, g.call.Diff(orderRecords()))
}
