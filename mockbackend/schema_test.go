package mockbackend

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/callproof/callproof/trace"
	"github.com/stretchr/testify/require"
)

func TestSchemaErrors(t *testing.T) {
	f := newFixture(t, nil)
	cases := []struct {
		name  string
		tool  string
		body  string
		param string // must be named in the message
		opts  []hdr
	}{
		{"missing required", "update_order", `{"delivery_date":"2026-12-03"}`, "order_number", nil},
		{"empty required", "update_order", `{"order_number":""}`, "order_number", nil},
		{"pattern", "get_order", `{"order_number":"559"}`, "order_number", nil},
		{"date format", "update_order", `{"order_number":"5590","delivery_date":"December 3"}`, "delivery_date", nil},
		{"date calendar", "update_order", `{"order_number":"5590","delivery_date":"2026-02-30"}`, "delivery_date", nil},
		{"integer", "update_order", `{"order_number":"5590","quantity":"two"}`, "quantity", nil},
		{"fractional number", "update_order", `{"order_number":"5590","quantity":2.5}`, "quantity", nil},
		{"enum", "update_order", `{"order_number":"5590","status":"lost"}`, "status", nil},
		{"unknown arg", "update_order", `{"order_number":"5590","colour":"red"}`, "colour", nil},
		{"non-scalar", "update_order", `{"order_number":"5590","quantity":true}`, "quantity", nil},
		{"not an object", "get_order", `["5590"]`, "", nil},
		{"trailing data", "get_order", `{"order_number":"5590"}{}`, "", nil},
		{"state version", "get_order", `{"order_number":"5590"}`, "X-State-Version", []hdr{withVersion("v4")}},
		{"long key", "get_order", `{"order_number":"5590"}`, "Idempotency-Key", []hdr{withKey(strings.Repeat("k", 256))}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.post(tc.tool, tc.body, tc.opts...)
			require.Equal(t, http.StatusBadRequest, r.status, r.body)
			require.Equal(t, "invalid_request", r.errType(t))
			msg := r.json(t)["error"].(map[string]any)["message"].(string)
			require.Contains(t, msg, tc.param)
			ref := fmt.Sprintf("r%d", i+1)
			require.Equal(t, []trace.Kind{trace.KindToolReceived, trace.KindToolRejected}, kinds(f.rec, ref))
			e := tev(one(t, f.rec, kindOf(trace.KindToolRejected, ref)))
			require.Equal(t, msg, e.Error)
			require.Equal(t, http.StatusBadRequest, e.Status)
			require.Equal(t, http.StatusBadRequest, ledgerRow(t, f.call, ref).Status)
		})
	}
	require.Empty(t, find(f.rec, kindOf(trace.KindToolCommitted, "")))
	require.Empty(t, f.call.Diff(orderRecords()))
}

func TestNumbersBecomeDecimalStrings(t *testing.T) {
	f := newFixture(t, nil)
	r := f.post("update_order", `{"order_number":5590,"quantity":2.0}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	rec := f.record("orders", "5590")
	require.Equal(t, "2", rec.Fields["quantity"])
	received := tev(one(t, f.rec, kindOf(trace.KindToolReceived, "r1")))
	require.Equal(t, map[string]string{"order_number": "5590", "quantity": "2"}, received.Args)

	r = f.post("update_order", `{"order_number":"5590","quantity":1e1}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Equal(t, "10", f.record("orders", "5590").Fields["quantity"])
}
