package trace

import (
	"reflect"
	"strings"
	"testing"
)

var orderTools = []ToolSpec{
	{Name: "get_order", Effect: EffectRead, Table: "orders", KeyArg: "order_number"},
	{Name: "update_order", Effect: EffectUpdate, Table: "orders", KeyArg: "order_number", Consequential: true},
	{Name: "ship_order", Effect: EffectCreate, Table: "shipments", Consequential: true},
	{Name: "explode", Effect: "explode", Table: "orders"},
}

func tool(t *testing.T, name string) ToolSpec {
	t.Helper()
	s, ok := Catalog(orderTools, name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return s
}

func startRecords() []Record {
	return []Record{
		{Table: "orders", Key: "5590", Version: 1, Fields: map[string]string{"quantity": "1", "delivery_date": "2026-12-01"}},
		{Table: "orders", Key: "5599", Version: 3, Fields: map[string]string{"quantity": "2"}},
		{Table: "shipments", Key: "shipments-1", Version: 1, Fields: map[string]string{"order_number": "5599"}},
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		args    map[string]string
		want    []Record
		wantErr string
	}{
		{
			name: "read changes nothing",
			tool: "get_order", args: map[string]string{"order_number": "5590"},
			want: startRecords(),
		},
		{
			name: "read of a missing record is not an error",
			tool: "get_order", args: map[string]string{"order_number": "0000"},
			want: startRecords(),
		},
		{
			name: "update sets the other args as fields and bumps the version",
			tool: "update_order", args: map[string]string{"order_number": "5590", "quantity": "4", "note": "gift"},
			want: func() []Record {
				r := startRecords()
				r[0].Version = 2
				r[0].Fields["quantity"] = "4"
				r[0].Fields["note"] = "gift"
				return r
			}(),
		},
		{
			name: "update of another record leaves the first alone",
			tool: "update_order", args: map[string]string{"order_number": "5599", "quantity": "9"},
			want: func() []Record {
				r := startRecords()
				r[1].Version = 4
				r[1].Fields["quantity"] = "9"
				return r
			}(),
		},
		{
			name: "update of a missing record",
			tool: "update_order", args: map[string]string{"order_number": "1234", "quantity": "4"},
			wantErr: `update_order: no orders record "1234"`,
		},
		{
			name: "update without the key arg",
			tool: "update_order", args: map[string]string{"quantity": "4"},
			wantErr: `update_order: no orders record ""`,
		},
		{
			name: "create adds <table>-<n>, version 1, fields = args",
			tool: "ship_order", args: map[string]string{"order_number": "5590"},
			want: append(startRecords(), Record{Table: "shipments", Key: "shipments-2", Version: 1, Fields: map[string]string{"order_number": "5590"}}),
		},
		{
			name: "unknown effect",
			tool: "explode", args: map[string]string{},
			wantErr: `explode: unknown effect "explode"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := startRecords()
			got, err := Apply(in, tool(t, tt.tool), tt.args)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("records returned with an error: %+v", got)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got\n%+v\nwant\n%+v", got, tt.want)
				}
			}
			// The input is never modified, and the output shares no map.
			if !reflect.DeepEqual(in, startRecords()) {
				t.Errorf("Apply modified its input: %+v", in)
			}
			if len(got) > 0 {
				got[0].Fields["quantity"] = "changed"
				if in[0].Fields["quantity"] != "1" {
					t.Error("output shares field maps with the input")
				}
			}
		})
	}
}

func TestApplyCreateTwice(t *testing.T) {
	ship := tool(t, "ship_order")
	rs, err := Apply(nil, ship, map[string]string{"order_number": "5590"})
	if err != nil {
		t.Fatal(err)
	}
	rs, err = Apply(rs, ship, map[string]string{"order_number": "5590"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Key != "shipments-1" || rs[1].Key != "shipments-2" {
		t.Errorf("keys %+v, want shipments-1, shipments-2", rs)
	}
	// Created fields are a copy of the args.
	args := map[string]string{"order_number": "1"}
	rs, _ = Apply(nil, ship, args)
	args["order_number"] = "2"
	if rs[0].Fields["order_number"] != "1" {
		t.Error("created record shares the args map")
	}
}

func TestDiff(t *testing.T) {
	rec := func(table, key string, v int, kv ...string) Record {
		f := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			f[kv[i]] = kv[i+1]
		}
		return Record{Table: table, Key: key, Version: v, Fields: f}
	}
	tests := []struct {
		name      string
		want, got []Record
		diff      []FieldDiff
	}{
		{"equal", []Record{rec("orders", "1", 1, "q", "1")}, []Record{rec("orders", "1", 1, "q", "1")}, nil},
		{"versions are ignored", []Record{rec("orders", "1", 1, "q", "1")}, []Record{rec("orders", "1", 7, "q", "1")}, nil},
		{"both empty", nil, nil, nil},
		{
			"missing record",
			[]Record{rec("orders", "1", 1), rec("shipments", "shipments-1", 1, "order_number", "1")},
			[]Record{rec("orders", "1", 1)},
			[]FieldDiff{{Table: "shipments", Key: "shipments-1", Want: "present", Got: "missing"}},
		},
		{
			"extra record",
			[]Record{rec("orders", "1", 1)},
			[]Record{rec("orders", "1", 1), rec("shipments", "shipments-2", 1, "order_number", "1")},
			[]FieldDiff{{Table: "shipments", Key: "shipments-2", Want: "absent", Got: "present"}},
		},
		{
			"changed, added and removed fields, sorted by name",
			[]Record{rec("orders", "1", 1, "q", "4", "date", "2026-12-03", "gone", "x")},
			[]Record{rec("orders", "1", 2, "q", "2", "date", "2026-12-03", "new", "y")},
			[]FieldDiff{
				{Table: "orders", Key: "1", Field: "gone", Want: "x", Got: ""},
				{Table: "orders", Key: "1", Field: "new", Want: "", Got: "y"},
				{Table: "orders", Key: "1", Field: "q", Want: "4", Got: "2"},
			},
		},
		{
			"order is by table then key, whatever the input order",
			[]Record{rec("shipments", "s", 1), rec("orders", "b", 1, "q", "1"), rec("orders", "a", 1, "q", "1")},
			[]Record{rec("orders", "c", 1), rec("orders", "b", 1, "q", "2"), rec("orders", "a", 1, "q", "2")},
			[]FieldDiff{
				{Table: "orders", Key: "a", Field: "q", Want: "1", Got: "2"},
				{Table: "orders", Key: "b", Field: "q", Want: "1", Got: "2"},
				{Table: "orders", Key: "c", Want: "absent", Got: "present"},
				{Table: "shipments", Key: "s", Want: "present", Got: "missing"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 5; i++ { // map order must not leak into the result
				if got := Diff(tt.want, tt.got); !reflect.DeepEqual(got, tt.diff) {
					t.Fatalf("Diff =\n%+v\nwant\n%+v", got, tt.diff)
				}
			}
		})
	}
}

// Apply then Diff: the scorer's use. An update shows up as exactly the
// fields it changed.
func TestApplyThenDiff(t *testing.T) {
	before := startRecords()
	after, err := Apply(before, tool(t, "update_order"), map[string]string{"order_number": "5590", "quantity": "4"})
	if err != nil {
		t.Fatal(err)
	}
	want := []FieldDiff{{Table: "orders", Key: "5590", Field: "quantity", Want: "1", Got: "4"}}
	if got := Diff(before, after); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff = %+v, want %+v", got, want)
	}
}

func TestCatalog(t *testing.T) {
	if s, ok := Catalog(orderTools, "ship_order"); !ok || s.Effect != EffectCreate {
		t.Errorf("Catalog(ship_order) = %+v, %v", s, ok)
	}
	if s, ok := Catalog(orderTools, "nope"); ok || s.Name != "" {
		t.Errorf("Catalog(nope) = %+v, %v", s, ok)
	}
}

func TestSortedKeys(t *testing.T) {
	got := SortedKeys(map[string]int{"b": 1, "c": 2, "a": 3})
	if strings.Join(got, ",") != "a,b,c" {
		t.Errorf("SortedKeys = %v", got)
	}
	if len(SortedKeys(map[string]bool(nil))) != 0 {
		t.Error("SortedKeys(nil) not empty")
	}
}

func TestRecordClone(t *testing.T) {
	r := Record{Table: "orders", Key: "1", Version: 2, Fields: map[string]string{"q": "1"}}
	c := r.Clone()
	c.Fields["q"] = "2"
	if r.Fields["q"] != "1" || c.Version != 2 || c.Key != "1" {
		t.Errorf("Clone shares fields or loses data: %+v / %+v", r, c)
	}
	if (Record{}).Clone().Fields == nil {
		t.Error("Clone of a record without fields should give an empty map")
	}
}

func TestIntentClone(t *testing.T) {
	var nilIntent *Intent
	if nilIntent.Clone() != nil {
		t.Error("nil.Clone() != nil")
	}
	i := &Intent{Version: 2, Action: "update_order", Execute: true, Slots: map[string]string{"q": "4"}}
	c := i.Clone()
	c.Slots["q"] = "5"
	c.Version = 3
	if i.Slots["q"] != "4" || i.Version != 2 {
		t.Errorf("Clone shares state: %+v", i)
	}
}

func TestToolMatch(t *testing.T) {
	args := map[string]string{"order_number": "5590", "quantity": "2"}
	tests := []struct {
		m    *ToolMatch
		tool string
		want bool
	}{
		{nil, "anything", true},
		{&ToolMatch{}, "anything", true},
		{&ToolMatch{Tool: "update_order"}, "update_order", true},
		{&ToolMatch{Tool: "update_order"}, "ship_order", false},
		{&ToolMatch{Args: map[string]string{"order_number": "5590"}}, "ship_order", true},
		{&ToolMatch{Tool: "update_order", Args: map[string]string{"order_number": "5590", "quantity": "2"}}, "update_order", true},
		{&ToolMatch{Tool: "update_order", Args: map[string]string{"quantity": "4"}}, "update_order", false},
		{&ToolMatch{Args: map[string]string{"missing": ""}}, "x", true}, // absent arg reads as ""
		{&ToolMatch{Args: map[string]string{"missing": "v"}}, "x", false},
	}
	for i, tt := range tests {
		if got := tt.m.Matches(tt.tool, args); got != tt.want {
			t.Errorf("%d: %+v.Matches(%s) = %v, want %v", i, tt.m, tt.tool, got, tt.want)
		}
	}
}

func TestHistoryHelpers(t *testing.T) {
	start := &CallStart{ScenarioID: "s"}
	end := &CallEnd{Reason: "caller hung up"}
	h := &History{Call: "c", Events: []Event{
		{Seq: 1, Kind: KindCallStart, Data: start},
		{Seq: 2, Kind: KindNote, Data: &Note{}},
		{Seq: 3, Kind: KindCallEnd, Data: end},
		{Seq: 4, Kind: KindSnapshot, Data: &Snapshot{}},
	}}
	if h.Start() != start || h.End() != end {
		t.Error("Start/End do not find the payloads")
	}
	if (&History{}).Start() != nil || (&History{}).End() != nil {
		t.Error("empty history has a start or end")
	}
	if (&History{Events: []Event{{Kind: KindNote, Data: &Note{}}}}).Start() != nil {
		t.Error("a history opening with a note has a start")
	}
	if e := h.BySeq(3); e == nil || e.Data != end {
		t.Errorf("BySeq(3) = %+v", e)
	}
	if h.BySeq(0) != nil || h.BySeq(5) != nil {
		t.Error("BySeq out of range found something")
	}
	// Seqs not matching positions (a filtered history) are still found.
	gappy := &History{Events: []Event{{Seq: 10}, {Seq: 20}}}
	if e := gappy.BySeq(20); e == nil || e.Seq != 20 {
		t.Errorf("BySeq(20) on a gappy history = %+v", e)
	}
	// BySeq returns a pointer into the history.
	h.BySeq(2).At = 99
	if h.Events[1].At != 99 {
		t.Error("BySeq does not point into the history")
	}
	c := h.Clone()
	c.Events[0].Seq = 100
	if h.Events[0].Seq != 1 || c.Call != "c" || len(c.Events) != 4 {
		t.Error("Clone shares the event slice")
	}
}

func TestApplyCancelAndDelete(t *testing.T) {
	cancel := ToolSpec{Name: "cancel_order", Effect: EffectCancel, Table: "orders", KeyArg: "order_number", StatusField: "status", StatusValue: "cancelled"}
	del := ToolSpec{Name: "remove_shipment", Effect: EffectDelete, Table: "shipments", KeyArg: "shipment_id"}

	got, err := Apply(startRecords(), cancel, map[string]string{"order_number": "5599", "reason": "moved"})
	if err != nil {
		t.Fatal(err)
	}
	want := startRecords()
	want[1].Version, want[1].Fields["status"], want[1].Fields["reason"] = 4, "cancelled", "moved"
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cancel: got %+v", got)
	}

	got, err = Apply(startRecords(), del, map[string]string{"shipment_id": "shipments-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, startRecords()[:2]) {
		t.Fatalf("delete: got %+v", got)
	}
	if d := Diff(startRecords(), got); len(d) != 1 || d[0].Got != "missing" {
		t.Fatalf("delete diff: %+v", d)
	}
	for _, sp := range []ToolSpec{cancel, del} {
		if _, err := Apply(startRecords(), sp, map[string]string{sp.KeyArg: "0000"}); err == nil || !strings.Contains(err.Error(), "no ") {
			t.Fatalf("%s of a missing record: %v", sp.Name, err)
		}
	}
}

func TestEffects(t *testing.T) {
	for _, e := range Effects() {
		if e.Keyed() == (e == EffectCreate) {
			t.Fatalf("%s: keyed %v", e, e.Keyed())
		}
	}
}

func TestCallStartToday(t *testing.T) {
	d, ok := (&CallStart{CallDate: "2026-12-07", TimeZone: "America/New_York"}).Today()
	if !ok || d.Format("2006-01-02 MST") != "2026-12-07 EST" || d.AddDate(0, 0, 1).Weekday().String() != "Tuesday" {
		t.Fatalf("Today = %v %v", d, ok)
	}
	for _, s := range []*CallStart{nil, {}, {CallDate: "2026-12-07"}, {CallDate: "2026-13-01", TimeZone: "UTC"},
		{CallDate: "2026-12-07", TimeZone: "Mars/Olympus"}, {CallDate: "2026-12-07", TimeZone: "Local"}} {
		if _, ok := s.Today(); ok {
			t.Errorf("%+v: a calendar", s)
		}
	}
}
