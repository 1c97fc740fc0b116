package toolimport

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/scenarios"
	"github.com/callproof/callproof/trace"
)

func TestInferEffect(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		tool Tool
		want trace.Effect
		why  string
	}{
		{"readOnlyHint beats the name", Tool{Name: "cancel_preview", ReadOnly: &yes}, trace.EffectRead, "MCP readOnlyHint"},
		{"GET beats the name", Tool{Name: "updateStatus", Method: "GET"}, trace.EffectRead, "HTTP GET"},
		{"HEAD", Tool{Name: "x", Method: "HEAD"}, trace.EffectRead, "HTTP HEAD"},
		{"name cancel over POST", Tool{Name: "cancelBooking", Method: "POST"}, trace.EffectCancel, `the name says "cancel"`},
		{"name read", Tool{Name: "search_slots"}, trace.EffectRead, `the name says "search"`},
		{"name create", Tool{Name: "book_table"}, trace.EffectCreate, `the name says "book"`},
		{"name update", Tool{Name: "reschedule-visit"}, trace.EffectUpdate, `the name says "reschedule"`},
		{"name delete", Tool{Name: "removeGuest"}, trace.EffectDelete, `the name says "remove"`},
		{"DELETE", Tool{Name: "op1", Method: "DELETE"}, trace.EffectDelete, "HTTP DELETE"},
		{"destructiveHint", Tool{Name: "drop_slot", Destructive: &yes}, trace.EffectDelete, "MCP destructiveHint"},
		{"PUT", Tool{Name: "op2", Method: "PUT"}, trace.EffectUpdate, "HTTP PUT"},
		{"PATCH", Tool{Name: "op3", Method: "PATCH"}, trace.EffectUpdate, "HTTP PATCH"},
		{"POST", Tool{Name: "op4", Method: "POST"}, trace.EffectCreate, "HTTP POST"},
		{"idempotentHint", Tool{Name: "slot", Idempotent: &yes, Destructive: &no}, trace.EffectUpdate, "MCP idempotentHint"},
		{"description", Tool{Name: "prescription", Description: "Renew and send a prescription."}, trace.EffectCreate, `the description says "send"`},
		{"nothing", Tool{Name: "frobnicate"}, trace.EffectUpdate, "no rule matched; update assumed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := InferEffect(tc.tool)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.why, why)
		})
	}
}

func TestInferKey(t *testing.T) {
	arg := func(name string, req bool) scenarios.Arg {
		return scenarios.Arg{Name: name, Type: "string", Required: req}
	}
	for _, tc := range []struct {
		name     string
		tool     Tool
		key, why string
	}{
		{"path parameter wins", Tool{Args: []scenarios.Arg{arg("order_id", true), arg("slot", true)}, PathArgs: []string{"slot"}}, "slot", "a path parameter"},
		{"required id word", Tool{Args: []scenarios.Arg{arg("note", true), arg("bookingRef", false), arg("patient_id", true)}}, "patient_id", `its name ends in "id"`},
		{"optional id word", Tool{Args: []scenarios.Arg{arg("note", true), arg("confirmation_number", false)}}, "confirmation_number", `its name ends in "number"`},
		{"first required", Tool{Args: []scenarios.Arg{arg("note", false), arg("guest", true), arg("table", true)}}, "guest", "the first required argument"},
		{"first argument", Tool{Args: []scenarios.Arg{arg("note", false), arg("when", false)}}, "note", "the first argument"},
		{"none", Tool{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, why := InferKey(tc.tool)
			assert.Equal(t, tc.key, key)
			assert.Equal(t, tc.why, why)
		})
	}
}

func TestInferTable(t *testing.T) {
	for tool, want := range map[*Tool]string{
		{Name: "get_booking"}:                           "bookings",
		{Name: "cancelBooking"}:                         "bookings",
		{Name: "update_delivery_address"}:               "delivery_addresses",
		{Name: "list_pharmacy"}:                         "pharmacies",
		{Name: "lookup_patch"}:                          "lookup_patches",
		{Name: "get"}:                                   "gets",
		{Name: "op", Path: "/v1/{x}"}:                   "v1s",
		{Name: "op", Path: "/appointments/{id}/cancel"}: "appointments",
		{Name: "!!"}:                                    "records",
	} {
		assert.Equal(t, want, InferTable(*tool), tool.Name)
	}
}

func TestInferEntries(t *testing.T) {
	key := scenarios.Arg{Name: "ref", Type: "string", Required: true}
	entries, skipped := Infer([]Tool{
		{Name: "get_menu"},
		{Name: "cancel_order", Args: []scenarios.Arg{key}},
		{Name: "cancel_visit", Args: []scenarios.Arg{key, {Name: "status", Type: "string", Enum: []string{"cancelled"}}}},
		{Name: "create_order"},
		{Name: "get_order", Args: []scenarios.Arg{key}},
	})
	assert.Equal(t, []Skipped{{"get_menu", "a read needs an argument the record is found by, and it has none"}}, skipped)
	var got []scenarios.Tool
	for _, e := range entries {
		got = append(got, e.Tool)
	}
	assert.Equal(t, []scenarios.Tool{
		{Name: "cancel_order", Effect: "cancel", Table: "orders", KeyArg: "ref", Consequential: true, Args: []scenarios.Arg{key},
			StatusField: "status", StatusValue: "cancelled"},
		{Name: "cancel_visit", Effect: "update", Table: "visits", KeyArg: "ref", Consequential: true,
			Args: []scenarios.Arg{key, {Name: "status", Type: "string", Enum: []string{"cancelled"}}}},
		{Name: "create_order", Effect: "create", Table: "orders", Consequential: true},
		{Name: "get_order", Effect: "read", Table: "orders", KeyArg: "ref", Args: []scenarios.Arg{key}},
	}, got)
	// Every guess is marked: effect, table, key (keyed effects), status
	// (cancel), consequential (writes).
	assert.Len(t, entries[0].Review, 5)
	assert.Contains(t, entries[1].Review[0], "but it takes a status argument")
	assert.Len(t, entries[2].Review, 3)
	assert.Len(t, entries[3].Review, 3)
}
