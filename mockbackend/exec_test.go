package mockbackend

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

type recordAnswer struct {
	OK     bool         `json:"ok"`
	Record trace.Record `json:"record"`
}

func decodeRecord(t *testing.T, r resp) trace.Record {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, r.body)
	var a recordAnswer
	require.NoError(t, json.Unmarshal([]byte(r.body), &a))
	require.True(t, a.OK)
	return a.Record
}

func TestReadUpdateCreate(t *testing.T) {
	f := newFixture(t, nil)

	// Read: answers the record, commits nothing.
	got := decodeRecord(t, f.post("get_order", map[string]any{"order_number": "5590"}))
	require.Equal(t, orderRecords()[0], got)
	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolResponded}, kinds(f.rec, "r1"))
	require.Nil(t, ledgerRow(t, f.call, "r1").Committed)

	// Update: version rises, the commit names what it replaced.
	got = decodeRecord(t, f.post("update_order", update("5590", "2026-12-03"), withVersion("4")))
	require.Equal(t, 2, got.Version)
	require.Equal(t, "2026-12-03", got.Fields["delivery_date"])
	require.Equal(t, "lamp", got.Fields["item"])
	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolCommitted, trace.KindToolResponded}, kinds(f.rec, "r2"))

	recv := one(t, f.rec, kindOf(trace.KindToolReceived, "r2"))
	com := one(t, f.rec, kindOf(trace.KindToolCommitted, "r2"))
	res := one(t, f.rec, kindOf(trace.KindToolResponded, "r2"))
	require.Equal(t, trace.SourceBackend, com.Source)
	require.Equal(t, 4, *tev(recv).BuiltFrom)
	require.Equal(t, "update_order", tev(recv).Tool)
	c := tev(com)
	require.Equal(t, "orders", c.Table)
	require.Equal(t, "5590", c.Key)
	require.Equal(t, 1, c.VersionBefore)
	require.Equal(t, 2, c.VersionAfter)
	require.Equal(t, "2026-11-28", c.Before["delivery_date"])
	require.Equal(t, "2026-12-03", c.After["delivery_date"])
	require.Equal(t, http.StatusOK, tev(res).Status)

	// The ledger row tells the same story on the same clock.
	row := ledgerRow(t, f.call, "r2")
	require.Equal(t, 2, row.ID)
	require.Equal(t, "update_order", row.Tool)
	require.Equal(t, 4, *row.BuiltFrom)
	require.Equal(t, recv.At, row.Received)
	require.NotNil(t, row.Committed)
	require.LessOrEqual(t, *row.Committed, com.At, "committed in the transaction, recorded after it")
	require.GreaterOrEqual(t, *row.Committed, row.Received)
	require.Equal(t, res.At, *row.Responded)
	require.Equal(t, c.Before, row.Before)
	require.Equal(t, c.After, row.After)
	require.Equal(t, 1, row.VersionBefore)
	require.Equal(t, 2, row.VersionAfter)
	require.Equal(t, http.StatusOK, row.Status)
	require.Equal(t, tev(recv).Remote, row.Remote)

	// Create: a new record per call, keys counted per table.
	s1 := decodeRecord(t, f.post("ship_order", map[string]any{"order_number": "5590"}))
	s2 := decodeRecord(t, f.post("ship_order", map[string]any{"order_number": "5599"}))
	require.Equal(t, "shipments-1", s1.Key)
	require.Equal(t, "shipments-2", s2.Key)
	require.Equal(t, 1, s2.Version)
	c3 := tev(one(t, f.rec, kindOf(trace.KindToolCommitted, "r3")))
	require.Equal(t, 0, c3.VersionBefore)
	require.Nil(t, c3.Before)

	// Snapshot: sorted by table, then key; Diff compares with intent.
	want, err := trace.Apply(orderRecords(), orderTools()[1], map[string]string{"order_number": "5590", "delivery_date": "2026-12-03"})
	require.NoError(t, err)
	want, _ = trace.Apply(want, orderTools()[2], map[string]string{"order_number": "5590"})
	want, _ = trace.Apply(want, orderTools()[2], map[string]string{"order_number": "5599"})
	snap := f.call.Snapshot()
	require.Equal(t, []string{"orders/5590", "orders/5599", "shipments/shipments-1", "shipments/shipments-2"}, keysOf(snap))
	require.Equal(t, want[0], snap[0], "the backend and trace.Apply agree, version included")
	require.Empty(t, f.call.Diff(want))
	require.NotEmpty(t, f.call.Diff(orderRecords()))
}

func keysOf(rs []trace.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Table+"/"+r.Key)
	}
	return out
}

func TestMissingRecord(t *testing.T) {
	f := newFixture(t, nil)
	for _, tool := range []string{"get_order", "update_order"} {
		r := f.post(tool, map[string]any{"order_number": "1234"})
		require.Equal(t, http.StatusNotFound, r.status, r.body)
		require.Equal(t, "not_found", r.errType(t))
	}
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "")))
	require.Len(t, find(f.rec, kindOf(trace.KindToolResponded, "")), 2)
}

func TestRecordsAreCopied(t *testing.T) {
	recs := orderRecords()
	f := newFixture(t, func(c *CallConfig) { c.Records = recs })
	recs[0].Fields["item"] = "changed by caller"
	require.Equal(t, "lamp", f.record("orders", "5590").Fields["item"])
	snap := f.call.Snapshot()
	snap[0].Fields["item"] = "changed by caller"
	require.Equal(t, "lamp", f.record("orders", "5590").Fields["item"])
}
