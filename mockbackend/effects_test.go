package mockbackend

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/trace"
)

// effectTools adds a cancel of orders and a delete of shipments to the
// order catalogue.
func effectTools(c *CallConfig) {
	num := trace.ArgSpec{Name: "order_number", Type: "string", Required: true, Pattern: `^\d{4}$`}
	c.Tools = append(orderTools(),
		trace.ToolSpec{Name: "cancel_order", Effect: trace.EffectCancel, Table: "orders", KeyArg: "order_number", Consequential: true,
			StatusField: "status", StatusValue: "cancelled", Args: []trace.ArgSpec{num, {Name: "reason", Type: "string"}}},
		trace.ToolSpec{Name: "unship", Effect: trace.EffectDelete, Table: "shipments", KeyArg: "shipment_id", Consequential: true,
			Args: []trace.ArgSpec{{Name: "shipment_id", Type: "string", Required: true}}})
}

func TestCancelEffect(t *testing.T) {
	f := newFixture(t, effectTools)
	got := decodeRecord(t, f.post("cancel_order", map[string]any{"order_number": "5590", "reason": "moved"}))
	require.Equal(t, 2, got.Version)
	require.Equal(t, "cancelled", got.Fields["status"])
	require.Equal(t, "moved", got.Fields["reason"])
	c := tev(one(t, f.rec, kindOf(trace.KindToolCommitted, "r1")))
	require.Equal(t, "open", c.Before["status"])
	require.Equal(t, "cancelled", c.After["status"])
	require.False(t, c.Deleted)
	row := ledgerRow(t, f.call, "r1")
	require.Equal(t, "cancelled", row.After["status"])
	require.Equal(t, 2, row.VersionAfter)

	want, err := trace.Apply(orderRecords(), f.call.tools["cancel_order"].spec, map[string]string{"order_number": "5590", "reason": "moved"})
	require.NoError(t, err)
	require.Empty(t, f.call.Diff(want), "the backend and trace.Apply agree")

	r := f.post("cancel_order", map[string]any{"order_number": "0000"})
	require.Equal(t, http.StatusNotFound, r.status, r.body)
	r = f.post("cancel_order", map[string]any{"order_number": "5599", "status": "open"})
	require.Equal(t, http.StatusBadRequest, r.status, "the status is the cancel's to write: %s", r.body)
}

func TestDeleteEffect(t *testing.T) {
	f := newFixture(t, effectTools)
	ship := decodeRecord(t, f.post("ship_order", map[string]any{"order_number": "5590"}))
	require.Equal(t, "shipments-1", ship.Key)

	r := f.post("unship", map[string]any{"shipment_id": "shipments-1"})
	got := decodeRecord(t, r)
	require.Equal(t, ship, got, "the answer is the record as it was")
	require.Equal(t, true, r.json(t)["deleted"])
	require.Equal(t, []string{"orders/5590", "orders/5599"}, keysOf(f.call.Snapshot()), "gone from the snapshot")

	c := tev(one(t, f.rec, kindOf(trace.KindToolCommitted, "r2")))
	require.True(t, c.Deleted)
	require.Equal(t, "shipments", c.Table)
	require.Equal(t, "shipments-1", c.Key)
	require.Equal(t, map[string]string{"order_number": "5590"}, c.Before)
	require.Nil(t, c.After)
	require.Equal(t, 1, c.VersionBefore)
	require.Zero(t, c.VersionAfter)
	row := ledgerRow(t, f.call, "r2")
	require.True(t, row.Deleted)
	require.NotNil(t, row.Committed)
	require.Equal(t, c.Before, row.Before)

	// Gone: a second delete finds nothing; a new shipment never takes the
	// deleted one's key.
	require.Equal(t, http.StatusNotFound, f.post("unship", map[string]any{"shipment_id": "shipments-1"}).status)
	require.Equal(t, "shipments-2", decodeRecord(t, f.post("ship_order", map[string]any{"order_number": "5599"})).Key)

	// A start record can be deleted too.
	f2 := newFixture(t, func(c *CallConfig) {
		effectTools(c)
		c.Records = append(orderRecords(), trace.Record{Table: "shipments", Key: "shipments-1", Version: 3, Fields: map[string]string{"order_number": "5599"}})
	})
	decodeRecord(t, f2.post("unship", map[string]any{"shipment_id": "shipments-1"}))
	require.Empty(t, f2.call.Diff(orderRecords()))
}

// A keyed delete replays its first answer and removes once; a held one
// removes only when released; a 500 after commit has removed it.
func TestDeleteWithKeysHoldsAndFaults(t *testing.T) {
	f := newFixture(t, effectTools)
	decodeRecord(t, f.post("ship_order", map[string]any{"order_number": "5590"}))
	first := f.post("unship", map[string]any{"shipment_id": "shipments-1"}, withKey("k"))
	again := f.post("unship", map[string]any{"shipment_id": "shipments-1"}, withKey("k"))
	require.Equal(t, first, again)
	require.Len(t, find(f.rec, func(e trace.Event) bool { return e.Kind == trace.KindToolCommitted && tev(e).Deleted }), 1)

	h := newFixture(t, effectTools)
	decodeRecord(t, h.post("ship_order", map[string]any{"order_number": "5590"}))
	require.NoError(t, h.call.Hold("h", &trace.ToolMatch{Tool: "unship"}, time.Hour))
	ch := h.async(context.Background(), "unship", map[string]any{"shipment_id": "shipments-1"})
	waitFor(t, h.rec, kindOf(trace.KindToolHeld, "r2"))
	h.record("shipments", "shipments-1")
	require.NoError(t, h.call.Release("h"))
	require.Equal(t, http.StatusOK, recv(t, ch).status)
	require.Len(t, h.call.Snapshot(), 2)

	x := newFixture(t, func(c *CallConfig) {
		effectTools(c)
		c.Faults = []trace.Fault{{Kind: trace.FaultStatusAfter, Status: 500, Match: &trace.ToolMatch{Tool: "unship"}}}
	})
	decodeRecord(t, x.post("ship_order", map[string]any{"order_number": "5590"}))
	require.Equal(t, http.StatusInternalServerError, x.post("unship", map[string]any{"shipment_id": "shipments-1"}).status)
	require.Len(t, x.call.Snapshot(), 2, "committed before the error")
}
