package mockbackend

import (
	"context"
	"net/http"
	"testing"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

func TestIdempotentReplay(t *testing.T) {
	f := newFixture(t, nil)
	first := f.post("update_order", update("5590", "2026-12-03"), withKey("k1"))
	again := f.post("update_order", update("5590", "2026-12-03"), withKey("k1"))
	require.Equal(t, http.StatusOK, first.status, first.body)
	require.Equal(t, first, again, "the stored first answer, byte for byte")
	require.Len(t, find(f.rec, kindOf(trace.KindToolCommitted, "")), 1)
	require.Equal(t, 2, f.record("orders", "5590").Version)

	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolReplayed, trace.KindToolResponded}, kinds(f.rec, "r2"))
	rp := tev(one(t, f.rec, kindOf(trace.KindToolReplayed, "r2")))
	require.Equal(t, "r1", rp.ReplayOf)
	require.Equal(t, "k1", tev(one(t, f.rec, kindOf(trace.KindToolReceived, "r2"))).IdempotencyKey)
	row := ledgerRow(t, f.call, "r2")
	require.Equal(t, "r1", row.ReplayOf)
	require.Equal(t, "k1", row.IdempotencyKey)
	require.Nil(t, row.Committed)
}

func TestIdempotencyReplaysStoredServerError(t *testing.T) {
	f := newFixture(t, func(c *CallConfig) {
		c.Faults = []trace.Fault{{Kind: trace.FaultStatus, Status: 500, Times: 1}}
	})
	first := f.post("update_order", update("5590", "2026-12-03"), withKey("k1"))
	require.Equal(t, http.StatusInternalServerError, first.status)
	// The fault is spent, yet the same key still gets the stored 500.
	again := f.post("update_order", update("5590", "2026-12-03"), withKey("k1"))
	require.Equal(t, first, again)
	require.Equal(t, "r1", tev(one(t, f.rec, kindOf(trace.KindToolReplayed, "r2"))).ReplayOf)
	require.Equal(t, 1, f.record("orders", "5590").Version)
	// A fresh key executes.
	fresh := f.post("update_order", update("5590", "2026-12-03"), withKey("k2"))
	require.Equal(t, http.StatusOK, fresh.status, fresh.body)
	require.Equal(t, 2, f.record("orders", "5590").Version)
}

func TestIdempotencyMismatchProfiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opt    int
		status int
	}{{"stripe default", 0, 400}, {"conflict profile", 409, 409}, {"unprocessable profile", 422, 422}} {
		t.Run(tc.name, func(t *testing.T) {
			f := openCall(t, testServer(t, Options{IdempotencyMismatchStatus: tc.opt}), "c", nil)
			require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-03"), withKey("k")).status)
			r := f.post("update_order", update("5590", "2026-12-05"), withKey("k"))
			require.Equal(t, tc.status, r.status, r.body)
			require.Equal(t, "idempotency_error", r.errType(t))
			// Same key on another tool is a different request too.
			r = f.post("get_order", map[string]any{"order_number": "5590"}, withKey("k"))
			require.Equal(t, tc.status, r.status, r.body)
			require.Equal(t, tc.status, tev(one(t, f.rec, kindOf(trace.KindToolRejected, "r2"))).Status)
			require.Equal(t, "2026-12-03", f.record("orders", "5590").Fields["delivery_date"])
		})
	}
}

func TestIdempotencyKeyInFlight(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, f.call.Hold("h", &trace.ToolMatch{Tool: "update_order"}, 0))
	held := f.async(context.Background(), "update_order", update("5590", "2026-12-03"), withKey("k"))
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))

	r := f.post("update_order", update("5590", "2026-12-03"), withKey("k"))
	require.Equal(t, http.StatusConflict, r.status, r.body)
	require.Equal(t, "idempotency_key_in_use", r.errType(t))
	require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolRejected}, kinds(f.rec, "r2"))

	require.NoError(t, f.call.Release("h"))
	require.Equal(t, http.StatusOK, recv(t, held).status)
	require.Equal(t, 2, f.record("orders", "5590").Version)
	// Now settled: the same request replays.
	require.Equal(t, http.StatusOK, f.post("update_order", update("5590", "2026-12-03"), withKey("k")).status)
	require.Len(t, find(f.rec, kindOf(trace.KindToolReplayed, "r3")), 1)
}

func TestUnkeyedWriteCommitsTwice(t *testing.T) {
	f := newFixture(t, nil)
	for range 2 {
		require.Equal(t, http.StatusOK, f.post("ship_order", map[string]any{"order_number": "5590"}).status)
	}
	var committed []string
	for _, row := range f.call.Ledger() {
		if row.Committed != nil {
			committed = append(committed, row.Key)
		}
	}
	require.Equal(t, []string{"shipments-1", "shipments-2"}, committed)
}

func TestCancelledKeyedRequestFreesItsKey(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, f.call.Hold("h", nil, 0))
	ctx, cancel := context.WithCancel(context.Background())
	ch := f.async(ctx, "update_order", update("5590", "2026-12-03"), withKey("k"))
	waitFor(t, f.rec, kindOf(trace.KindToolHeld, "r1"))
	cancel()
	require.Error(t, recv(t, ch).err)
	waitFor(t, f.rec, kindOf(trace.KindToolCancelled, "r1"))

	// Nothing was answered, so nothing is replayed: the retry executes.
	r := f.post("update_order", update("5590", "2026-12-03"), withKey("k"))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Empty(t, find(f.rec, kindOf(trace.KindToolReplayed, "")))
	require.Equal(t, 2, f.record("orders", "5590").Version)
}
