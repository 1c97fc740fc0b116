package scorer

import (
	"slices"
	"testing"

	"github.com/callproof/callproof/trace"
)

// bookingTools is a catalogue that shares nothing with the order domain:
// other verbs, a cancel action, times, amounts and names.
var bookingTools = []trace.ToolSpec{
	{Name: "find_booking", Effect: trace.EffectRead, Table: "bookings", KeyArg: "booking_ref",
		Args: []trace.ArgSpec{{Name: "booking_ref", Type: "string"}}},
	{Name: "reschedule_booking", Effect: trace.EffectUpdate, Table: "bookings", KeyArg: "booking_ref", Consequential: true,
		Description: "Moves a booking to another day or time.",
		Args:        []trace.ArgSpec{{Name: "booking_ref", Type: "string"}, {Name: "date", Type: "date"}, {Name: "time", Type: "time"}}},
	{Name: "change_party_size", Effect: trace.EffectUpdate, Table: "bookings", KeyArg: "booking_ref", Consequential: true,
		Args: []trace.ArgSpec{{Name: "booking_ref", Type: "string"}, {Name: "party_size", Type: "integer"}}},
	{Name: "cancel_booking", Effect: trace.EffectUpdate, Table: "bookings", KeyArg: "booking_ref", Consequential: true,
		Args: []trace.ArgSpec{{Name: "booking_ref", Type: "string"}, {Name: "status", Type: "string"}}},
	{Name: "book_table", Effect: trace.EffectCreate, Table: "bookings", Consequential: true,
		Args: []trace.ArgSpec{{Name: "name", Type: "string"}, {Name: "date", Type: "date"}, {Name: "time", Type: "time"}, {Name: "party_size", Type: "integer"}}},
	{Name: "refund_deposit", Effect: trace.EffectCreate, Table: "refunds", Consequential: true,
		Args: []trace.ArgSpec{{Name: "booking_ref", Type: "string"}, {Name: "amount", Type: "number"}}},
}

func TestReaderOrders(t *testing.T) {
	lx := newLexicon(orderTools)
	cases := []struct {
		text               string
		ids, dates, counts []string
		claim              claim
		wait               bool
	}{
		{"Hi, I'd like to change the delivery date on order 5590 to December 3.", []string{"5590"}, []string{"2026-12-03"}, nil, claimNone, false},
		{"Done. Order 5599 now has delivery date December 3.", []string{"5599"}, []string{"2026-12-03"}, nil, claimDone, false},
		{"Order 5590 moves to Dec 3rd.", []string{"5590"}, []string{"2026-12-03"}, nil, claimNone, false},
		{"Delivery on 3 December 2027 for #5590", []string{"5590"}, []string{"2027-12-03"}, nil, claimNone, false},
		{"the 5th of December", nil, []string{"2026-12-05"}, nil, claimNone, false},
		{"set for 2026-12-03", nil, []string{"2026-12-03"}, nil, claimNone, false},
		{"All set, quantity 4 on order 5590.", []string{"5590"}, nil, []string{"4"}, claimDone, false},
		{"Updated: 4 units.", nil, nil, []string{"4"}, claimDone, false},
		{"The quantity is now four.", nil, nil, []string{"4"}, claimDone, false},
		{"Changed the quantity from 7 to 2.", nil, nil, []string{"2"}, claimDone, false},
		{"Done. Order 5590 has been shipped.", []string{"5590"}, nil, nil, claimDone, false},
		{"Okay, I won't make any change. Nothing was changed on order 5590.", []string{"5590"}, nil, nil, claimNotDone, false},
		{"Sorry, I couldn't update order 5590. Nothing was changed.", []string{"5590"}, nil, nil, claimNotDone, false},
		{"I’m unable to do that.", nil, nil, nil, claimNotDone, false},
		{"That order was cancelled.", nil, nil, nil, claimNotDone, false},
		{"Your order is confirmed.", nil, nil, nil, claimDone, false},
		{"Your change is processing, one moment please.", nil, nil, nil, claimNone, true},
		{"Let me check that it went through.", nil, nil, nil, claimDone, true},
		{"Okay, updating order 5590: quantity 2.", []string{"5590"}, nil, []string{"2"}, claimNone, false},
		{"May I help with anything else?", nil, nil, nil, claimNone, false},
		{"Sorry, I can't confirm yet whether order 5590 went through.", []string{"5590"}, nil, nil, claimUnsure, false},
		{"No problem, order 5590 has been updated.", []string{"5590"}, nil, nil, claimDone, false},
		{"It should be updated now.", nil, nil, nil, claimUndecided, false},
		{"I'll update order 5590 now.", []string{"5590"}, nil, nil, claimNone, false},
		{"I couldn't update it to December 3, but I've changed it to December 4.", nil, []string{"2026-12-03", "2026-12-04"}, nil, claimUndecided, false},
		{"It is probably updated.", nil, nil, nil, claimUndecided, false},
		{"I've edited order 5590.", []string{"5590"}, nil, nil, claimDone, false},
	}
	for _, c := range cases {
		f := lx.read(c.text)
		if !slices.Equal(f.values(classID), c.ids) || !slices.Equal(f.values(classDate), c.dates) ||
			!slices.Equal(f.values(classCount), c.counts) || f.claim != c.claim || f.wait != c.wait {
			t.Errorf("%q: ids %v dates %v counts %v claim %v wait %v; want %v %v %v %v %v", c.text,
				f.values(classID), f.values(classDate), f.values(classCount), f.claim, f.wait,
				c.ids, c.dates, c.counts, c.claim, c.wait)
		}
	}
}

func TestReaderBookings(t *testing.T) {
	lx := newLexicon(bookingTools)
	cases := []struct {
		text  string
		claim claim
		class valueClass
		vals  []string // current values of class
	}{
		{"I've moved booking 4471 to Wednesday, December 9.", claimDone, classDate, []string{"2026-12-09"}},
		{"I've moved booking 4471 from Tuesday, December 8 to Wednesday, December 9.", claimDone, classDate, []string{"2026-12-09"}},
		{"Your booking has been rescheduled for Wednesday.", claimDone, classDate, []string{"wd:3"}},
		{"You're booked: a table for four under the name Okafor at 7:30 pm.", claimDone, classCount, []string{"4"}},
		{"You're booked: a table for four under the name Okafor at 7:30 pm.", claimDone, classTime, []string{"19:30"}},
		{"I've set it for seven thirty.", claimDone, classTime, []string{"~7:30"}},
		{"Booking 4471 is now at half past eight in the evening.", claimDone, classTime, []string{"20:30"}},
		{"I've placed a refund of $45.50 for booking 4471.", claimDone, classAmount, []string{"45.5"}},
		{"Refunded forty-five dollars and fifty cents.", claimDone, classAmount, []string{"45.5"}},
		{"Your booking 4471 has been cancelled.", claimDone, classID, []string{"4471"}},
		{"Okay, I've cancelled that change.", claimNotDone, classID, nil},
		{"Okay, nothing was sent.", claimNotDone, classID, nil},
		{"I haven't changed anything.", claimNotDone, classID, nil},
		{"I couldn't reschedule that — the system is down.", claimNotDone, classID, nil},
		{"I've put booking 4471 back to Tuesday, December 8.", claimRestored, classDate, []string{"2026-12-08"}},
		{"Okay, I've changed it back, so nothing is different now.", claimRestored, classID, nil},
		{"Sorry, I couldn't undo the change on booking 4471.", claimUndecided, classID, []string{"4471"}},
		{"Shall I move booking 4471 to Friday?", claimNone, classDate, []string{"wd:5"}},
		{"The party size is set to six people.", claimDone, classCount, []string{"6"}},
		{"Booking BK-4471 was changed to party of 6, not 4.", claimDone, classCount, []string{"6"}},
		{"Moving booking 4471 to Friday at 8.", claimNone, classTime, []string{"~8:00"}},
		{"It may have gone through.", claimUnsure, classID, nil},
	}
	for _, c := range cases {
		f := lx.read(c.text)
		if f.claim != c.claim || !slices.Equal(f.values(c.class), c.vals) {
			t.Errorf("%q: claim %v %v %v; want %v %v", c.text, f.claim, c.class, f.values(c.class), c.claim, c.vals)
		}
	}
}

func TestPastForms(t *testing.T) {
	for verb, want := range map[string]string{"open": "opened", "edit": "edited", "ship": "shipped", "log": "logged",
		"book": "booked", "move": "moved", "apply": "applied", "send": "sent", "fix": "fixed"} {
		if got := pastForms(verb); got[0] != want {
			t.Errorf("pastForms(%q) = %v, want %s", verb, got, want)
		}
	}
}

func TestNormValue(t *testing.T) {
	cases := []struct{ typ, in, want string }{
		{"date", "2026-12-03", "2026-12-03"},
		{"date", "2026-12-3", "2026-12-03"},
		{"date", "December 3", "2026-12-03"},
		{"date", "Dec 3rd", "2026-12-03"},
		{"date", "3 December", "2026-12-03"},
		{"date", "Wednesday, December 9", "2026-12-09"},
		{"date", "tomorrow", "tomorrow"},
		{"date", "2026-02-30", "2026-02-30"},
		{"integer", "4", "4"},
		{"integer", "04", "4"},
		{"integer", "Four", "4"},
		{"integer", "twenty-one", "21"},
		{"integer", "0", "0"},
		{"time", "19:30", "19:30"},
		{"time", "7:30 pm", "19:30"},
		{"time", "7pm", "19:00"},
		{"time", "noon", "12:00"},
		{"number", "45.50", "45.5"},
		{"number", "$45.50", "45.5"},
		{"number", "forty-five dollars", "45"},
		{"number", "$1,200", "1200"},
		{"string", "$1,200", "1200"},
		{"string", "1,200 dollars", "1200"},
		{"string", " 5590 ", "5590"},
		{"string", "#5590", "5590"},
		{"", "Kettle", "Kettle"},
	}
	for _, c := range cases {
		if got := normValue(c.typ, c.in); got != c.want {
			t.Errorf("normValue(%q, %q) = %q, want %q", c.typ, c.in, got, c.want)
		}
	}
}

func TestSameHeard(t *testing.T) {
	cases := []struct {
		c           valueClass
		named, held string
		want        bool
	}{
		{classDate, "wd:3", "2026-12-09", true},
		{classDate, "wd:4", "2026-12-09", false},
		{classTime, "~7:30", "19:30", true},
		{classTime, "~7:30", "07:30", true},
		{classTime, "~7:30", "20:30", false},
		{classTime, "~12:00", "00:00", true},
		{classID, "bk4471", "BK-4471", true},
		{classText, "okafor", "Okafor", true},
	}
	for _, c := range cases {
		if got := sameHeard(c.c, c.named, c.held); got != c.want {
			t.Errorf("sameHeard(%v, %q, %q) = %v", c.c, c.named, c.held, got)
		}
	}
}
