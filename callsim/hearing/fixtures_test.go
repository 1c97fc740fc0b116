package hearing

import "github.com/callproof/callproof/trace"

// bookingTools is the table-bookings catalogue of the calibration
// scenarios (testdata/calibration/scenarios).
func bookingTools() []trace.ToolSpec {
	ref := trace.ArgSpec{Name: "booking_ref", Type: "string", Required: true, Pattern: `^\d{4}$`}
	return []trace.ToolSpec{
		{Name: "find_booking", Description: "Look a table booking up by its reference.", Effect: trace.EffectRead, Table: "bookings", KeyArg: "booking_ref", Args: []trace.ArgSpec{ref}},
		{Name: "reschedule_booking", Description: "Move a booking to another date and/or time.", Effect: trace.EffectUpdate, Table: "bookings", KeyArg: "booking_ref", Consequential: true,
			Args: []trace.ArgSpec{ref, {Name: "date", Type: "date"}, {Name: "time", Type: "time"}}},
		{Name: "change_party_size", Description: "Change how many guests a booking is for.", Effect: trace.EffectUpdate, Table: "bookings", KeyArg: "booking_ref", Consequential: true,
			Args: []trace.ArgSpec{ref, {Name: "party_size", Type: "integer", Required: true}}},
		{Name: "cancel_booking", Description: "Cancel a booking (sets status to cancelled).", Effect: trace.EffectUpdate, Table: "bookings", KeyArg: "booking_ref", Consequential: true,
			Args: []trace.ArgSpec{ref, {Name: "status", Type: "string", Required: true, Enum: []string{"cancelled"}}}},
		{Name: "book_table", Description: "Book a new table.", Effect: trace.EffectCreate, Table: "bookings", Consequential: true,
			Args: []trace.ArgSpec{{Name: "name", Type: "string", Required: true}, {Name: "date", Type: "date", Required: true}, {Name: "time", Type: "time", Required: true}, {Name: "party_size", Type: "integer", Required: true}}},
		{Name: "refund_deposit", Description: "Refund (part of) a booking's deposit.", Effect: trace.EffectCreate, Table: "refunds", Consequential: true,
			Args: []trace.ArgSpec{ref, {Name: "amount", Type: "number", Required: true}}},
	}
}

func bookingRecords() []trace.Record {
	return []trace.Record{
		{Table: "bookings", Key: "4471", Fields: map[string]string{"name": "Haddad", "date": "2026-12-08", "time": "19:00", "party_size": "4", "status": "confirmed"}},
		{Table: "bookings", Key: "4417", Fields: map[string]string{"name": "Lindqvist", "date": "2026-12-12", "time": "18:30", "party_size": "2", "status": "confirmed"}},
		{Table: "bookings", Key: "5590", Fields: map[string]string{"name": "Okafor", "date": "2026-12-03", "time": "20:00", "party_size": "6", "status": "confirmed"}},
	}
}

// orderTools is the reference agents' order domain (agents/catalog.go).
func orderTools() []trace.ToolSpec {
	order := trace.ArgSpec{Name: "order_number", Type: "string", Required: true, Pattern: `^\d{4}$`}
	return []trace.ToolSpec{
		{Name: "get_order", Effect: trace.EffectRead, Table: "orders", KeyArg: "order_number", Args: []trace.ArgSpec{order}},
		{Name: "update_order", Effect: trace.EffectUpdate, Table: "orders", KeyArg: "order_number", Consequential: true,
			Args: []trace.ArgSpec{order, {Name: "delivery_date", Type: "date"}, {Name: "quantity", Type: "integer"}}},
		{Name: "ship_order", Effect: trace.EffectCreate, Table: "shipments", Consequential: true, Args: []trace.ArgSpec{order}},
	}
}

func orderRecords() []trace.Record {
	return []trace.Record{
		{Table: "orders", Key: "5590", Fields: map[string]string{"delivery_date": "2026-12-01", "quantity": "2", "status": "open"}},
		{Table: "orders", Key: "4471", Fields: map[string]string{"delivery_date": "2026-12-05", "quantity": "1", "status": "open"}},
	}
}
