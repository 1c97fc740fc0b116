package scorer

import (
	"testing"

	"github.com/callproof/callproof/trace"
)

// undoTools books tables and undoes a booking by a cancel or a delete.
var undoTools = []trace.ToolSpec{
	{Name: "find_booking", Effect: trace.EffectRead, Table: "bookings", KeyArg: "booking_ref",
		Args: []trace.ArgSpec{{Name: "booking_ref", Type: "string"}}},
	{Name: "book_table", Effect: trace.EffectCreate, Table: "bookings", Consequential: true,
		Args: []trace.ArgSpec{{Name: "name", Type: "string"}, {Name: "date", Type: "date"}, {Name: "time", Type: "time"}, {Name: "party_size", Type: "integer"}}},
	{Name: "cancel_booking", Effect: trace.EffectCancel, Table: "bookings", KeyArg: "booking_ref", Consequential: true,
		StatusField: "status", StatusValue: "cancelled", Args: []trace.ArgSpec{{Name: "booking_ref", Type: "string"}}},
	{Name: "remove_booking", Effect: trace.EffectDelete, Table: "bookings", KeyArg: "booking_ref", Consequential: true,
		Args: []trace.ArgSpec{{Name: "booking_ref", Type: "string"}}},
}

var bookAnn = []string{"name", "Ann", "date", "2026-12-09", "time", "19:30", "party_size", "4"}

// bookThenWithdraw is docs/SCORING.md's timeline "Create, withdrawn, the
// created record cancelled" up to the caller's withdrawal; undo finishes it.
func bookThenWithdraw(id string, undo func(b *builder)) *trace.History {
	return bookThenWithdrawIn(undoTools, id, undo)
}

func bookThenWithdrawIn(tools []trace.ToolSpec, id string, undo func(b *builder)) *trace.History {
	b := newCallIn(tools, id, "correction", nil, bookingDomain(),
		say("s1", trace.ActSay, "Please book a table for Ann on Wednesday, December 9 at 7:30 pm for 4.", intent(1, "book_table", true, bookAnn...)),
		say("s2", trace.ActNegate, "Actually, forget it, I don't need it.", intent(2, "book_table", false, bookAnn...)))
	b.caller("s1").state(1, "book_table", bookAnn...).
		toolIntent("book_table", bookAnn...).
		call("r1", "k-1", "book_table", bookAnn...).
		speak("a1", "You're booked: Wednesday, December 9 at 7:30 pm for 4.").
		caller("s2").state(2, "", bookAnn...)
	undo(b)
	return b.done()
}

func TestCompensatedCreate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		undo    func(b *builder)
		axes    string
		primary Bucket
	}{
		{"cancelled", func(b *builder) {
			b.call("r2", "k-2", "cancel_booking", "booking_ref", "bookings-3").
				speak("a2", "Okay, that booking's cancelled.")
		}, "pppppp", ""},
		{"cancelled, said with the record's day", func(b *builder) {
			b.call("r2", "k-2", "cancel_booking", "booking_ref", "bookings-3").
				speak("a2", "I've cancelled your Wednesday booking for 4.")
		}, "pppppp", ""},
		{"cancelled, said without a noun", func(b *builder) {
			b.call("r2", "k-2", "cancel_booking", "booking_ref", "bookings-3").
				speak("a2", "Okay, I've cancelled it for you.")
		}, "pppppp", ""},
		{"deleted", func(b *builder) {
			b.call("r2", "k-2", "remove_booking", "booking_ref", "bookings-3").
				speak("a2", "Okay, I've removed that booking.")
		}, "pppppp", ""},
		{"cancel never lands", func(b *builder) {
			b.recv("r2", "k-2", 0, "cancel_booking", "booking_ref", "bookings-3").
				respond("r2", 500, errorBody("server_error", "try again"), false).
				speak("a2", "Okay, that booking's cancelled.")
		}, "ppppff", BucketUncompensated},
		{"cancel never lands, said with the record's day", func(b *builder) {
			b.recv("r2", "k-2", 0, "cancel_booking", "booking_ref", "bookings-3").
				respond("r2", 500, errorBody("server_error", "try again"), false).
				speak("a2", "I've cancelled your Wednesday booking for 4.")
		}, "ppppff", BucketUnverifiedResult}, // it claimed the cancel after an error answer, unchecked
		{"never undone", func(b *builder) {
			b.speak("a2", "Okay, that booking's cancelled.")
		}, "ppppff", BucketUncompensated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := Score(bookThenWithdraw("undo", tc.undo))
			if got := vector(cs); got != tc.axes || cs.Primary != tc.primary {
				t.Errorf("axes %s primary %q, want %s %q\n%s", got, cs.Primary, tc.axes, tc.primary, dump(cs))
			}
			if cs.Outcome != trace.OutcomeScored {
				t.Errorf("outcome %s", cs.Outcome)
			}
			if tc.primary != "" && !hasBucket(cs, BucketUncompensated) {
				t.Errorf("no %s bucket: the booking stands\n%s", BucketUncompensated, dump(cs))
			}
		})
	}
}

// Cancelling a record that existed at the start undoes nothing the call
// made: it is judged as any write, never a compensation.
func TestCancelOfStartRecordIsNoCompensation(t *testing.T) {
	h := bookThenWithdraw("undo-start", func(b *builder) {
		b.call("r2", "k-2", "cancel_booking", "booking_ref", "4471").
			speak("a2", "Okay, that booking's cancelled.")
	})
	v := index(h, h.Start(), h.End())
	if r := v.byRef["r2"]; r == nil || r.compensation() {
		t.Fatalf("r2 a compensation: %+v", r)
	}
	cs := Score(h)
	if cs.Axis(BackendCorrect).Verdict != Fail {
		t.Errorf("backend_correct %s, want fail\n%s", cs.Axis(BackendCorrect).Verdict, dump(cs))
	}
}

// updCancelTools models the cancel as an update of a status field, the way
// a catalogue written before the cancel effect does.
var updCancelTools = append(undoTools[:2:2], trace.ToolSpec{Name: "cancel_booking", Effect: trace.EffectUpdate, Table: "bookings",
	KeyArg: "booking_ref", Consequential: true, Args: []trace.ArgSpec{{Name: "booking_ref", Type: "string"},
		{Name: "status", Type: "string", Enum: []string{"cancelled", "confirmed"}}}})

// An update that writes a cancelled status to the record the call created
// undoes that create as a cancel effect does (docs/SCORING.md, "Undoing a
// create"); any other status, or a record that existed at the start, does
// not.
func TestCompensatedCreateByStatusUpdate(t *testing.T) {
	for _, tc := range []struct {
		name, key, status string
		comp              bool
		axes              string
	}{
		{"cancelled", "bookings-3", "cancelled", true, "pppppp"},
		{"canceled", "bookings-3", "canceled", true, "pppppp"},
		{"another status", "bookings-3", "confirmed", false, "pfffff"},
		{"a start record", "4471", "cancelled", false, "pfffff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := bookThenWithdrawIn(updCancelTools, "undo-upd", func(b *builder) {
				b.call("r2", "k-2", "cancel_booking", "booking_ref", tc.key, "status", tc.status).
					speak("a2", "Okay, I've cancelled it for you.")
			})
			v := index(h, h.Start(), h.End())
			if r := v.byRef["r2"]; r == nil || r.compensation() != tc.comp {
				t.Fatalf("r2 compensation %v, want %v", r != nil && r.compensation(), tc.comp)
			}
			if got := vector(Score(h)); got != tc.axes {
				t.Errorf("axes %s, want %s\n%s", got, tc.axes, dump(Score(h)))
			}
		})
	}
}

func hasBucket(cs CallScore, b Bucket) bool {
	for _, h := range cs.Buckets {
		if h.Bucket == b {
			return true
		}
	}
	return false
}

// After the caller asked for a cancel, a plain "that's cancelled" is a
// done-claim of it, with or without a record noun, whether the catalogue
// models the cancel as a cancel effect or as an update of a status.
func TestPlainCancelIsADoneClaim(t *testing.T) {
	cancelUpd := intent(1, "cancel_booking", true, "booking_ref", "4471", "status", "cancelled")
	cancelEff := intent(1, "cancel_booking", true, "booking_ref", "4471")
	for _, tc := range []struct {
		name  string
		tools []trace.ToolSpec
		in    *trace.Intent
		call  bool
		say   string
		axis6 Verdict
	}{
		{"update, done", bookingTools, cancelUpd, true, "Okay, that's cancelled.", Pass},
		{"update, done, no noun", bookingTools, cancelUpd, true, "Done, I've cancelled it for you.", Pass},
		{"update, never called", bookingTools, cancelUpd, false, "Okay, that's cancelled.", Fail},
		{"effect, done", undoTools, cancelEff, true, "That one's cancelled.", Pass},
		{"effect, done, wrong day", undoTools, cancelEff, true, "Okay, your Wednesday booking is cancelled.", Fail},
		{"effect, never called", undoTools, cancelEff, false, "All right, that's cancelled.", Fail},
		{"effect, denied", undoTools, cancelEff, false, "Sorry, it isn't cancelled yet.", Pass},
		{"update, denied", bookingTools, cancelUpd, false, "I'm afraid that's not cancelled.", Pass},
		{"effect, denied but done", undoTools, cancelEff, true, "Sorry, it isn't cancelled yet.", Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCallIn(tc.tools, "cancel", "plain", nil, bookingDomain(), say("s1", trace.ActSay, "Please cancel booking 4471.", tc.in))
			var args []string
			for _, k := range trace.SortedKeys(tc.in.Slots) {
				args = append(args, k, tc.in.Slots[k])
			}
			b.caller("s1").state(1, "cancel_booking", args...)
			if tc.call {
				b.toolIntent("cancel_booking", args...).call("r1", "k-1", "cancel_booking", args...)
			}
			b.speak("a1", tc.say)
			cs := Score(b.done())
			if got := cs.Axis(ConfirmationMatchesBackend).Verdict; got != tc.axis6 {
				t.Errorf("confirmation %s, want %s\n%s", got, tc.axis6, dump(cs))
			}
			if tc.call && tc.axis6 == Pass && vector(cs) != "pppppp" {
				t.Errorf("axes %s\n%s", vector(cs), dump(cs))
			}
		})
	}
}

// The caller replaces the day of a booking already made: the agent cancels
// the first booking (a compensation) and books the new day.
func TestCompensatedCreateThenRebooked(t *testing.T) {
	bookThu := []string{"name", "Ann", "date", "2026-12-10", "time", "19:30", "party_size", "4"}
	b := newCallIn(undoTools, "rebook", "correction", nil, bookingDomain(),
		say("s1", trace.ActSay, "Please book a table for Ann on Wednesday, December 9 at 7:30 pm for 4.", intent(1, "book_table", true, bookAnn...)),
		say("s2", trace.ActCorrect, "Sorry, make that Thursday, December 10.", intent(2, "book_table", true, bookThu...)))
	b.caller("s1").state(1, "book_table", bookAnn...).
		call("r1", "k-1", "book_table", bookAnn...).
		speak("a1", "You're booked: Wednesday, December 9 at 7:30 pm for 4.").
		caller("s2").state(2, "book_table", bookThu...).
		call("r2", "k-2", "cancel_booking", "booking_ref", "bookings-3").
		call("r3", "k-3", "book_table", bookThu...).
		speak("a2", "Done: you're booked for Thursday, December 10 at 7:30 pm for 4.")
	h := b.done()
	v := index(h, h.Start(), h.End())
	if r := v.byRef["r2"]; !r.compensation() {
		t.Fatal("the cancel of the Wednesday booking is no compensation")
	}
	if cs := Score(h); vector(cs) != "pppppp" {
		t.Errorf("axes %s\n%s", vector(cs), dump(cs))
	}
}

// A delete the caller asked for: done when the record is gone.
func TestRequestedDelete(t *testing.T) {
	for _, tc := range []struct {
		name, say string
		call      bool
		axes      string
	}{
		{"removed", "Done, I've removed booking 4471.", true, "pppppp"},
		{"removed, said with its day", "Done, I've removed your booking for Tuesday, December 8.", true, "pppppp"},
		{"removed, said with another day", "Done, I've removed your booking for Thursday, December 10.", true, "pppppf"},
		{"never called", "Done, I've removed booking 4471.", false, "ppfpff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := intent(1, "remove_booking", true, "booking_ref", "4471")
			b := newCallIn(undoTools, "remove", "plain", nil, bookingDomain(), say("s1", trace.ActSay, "Please delete booking 4471.", in))
			b.caller("s1").state(1, "remove_booking", "booking_ref", "4471")
			if tc.call {
				b.toolIntent("remove_booking", "booking_ref", "4471").call("r1", "k-1", "remove_booking", "booking_ref", "4471")
			}
			cs := Score(b.speak("a1", tc.say).done())
			if got := vector(cs); got != tc.axes {
				t.Errorf("axes %s, want %s\n%s", got, tc.axes, dump(cs))
			}
		})
	}
}
