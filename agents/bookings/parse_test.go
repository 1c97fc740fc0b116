package bookings

import (
	"maps"
	"testing"
)

func TestListen(t *testing.T) {
	cases := []struct {
		text string
		want heard
	}{
		{"Hi, could you move booking 4471 to Wednesday, December 9 at 7:30 pm?",
			heard{tool: toolReschedule, values: map[string]string{argRef: "4471", argDate: "2026-12-09", argTime: "19:30"}}},
		{"Sorry, I meant Thursday, December 10.", heard{values: map[string]string{argDate: "2026-12-10"}}},
		{"Hello, can you change booking 4471 to a table for six?",
			heard{tool: toolParty, values: map[string]string{argRef: "4471", argParty: "6"}}},
		{"Actually, make it seven of us.", heard{values: map[string]string{argParty: "7"}}},
		{"Please cancel booking 4471.", heard{tool: toolCancel, values: map[string]string{argRef: "4471", argStatus: "cancelled"}}},
		{"No, wait, don't cancel it.", heard{stop: true, values: map[string]string{}}},
		{"Hold on, stop, leave it as it is.", heard{stop: true, values: map[string]string{}}},
		{"I'd like to book a table for four on Friday, December 11 at 8 pm under the name Okafor.",
			heard{tool: toolBook, values: map[string]string{argParty: "4", argDate: "2026-12-11", argTime: "20:00", argName: "Okafor"}}},
		{"Sorry, make it a table for five.", heard{values: map[string]string{argParty: "5"}}},
		{"Could you refund the $45.50 deposit on booking 4471?",
			heard{tool: toolRefund, values: map[string]string{argRef: "4471", argAmount: "45.50"}}},
		{"Yes, but make it $54.50, not $45.50.", heard{yes: true, values: map[string]string{argAmount: "54.50"}}},
		{"Oh, it's 4417, not 4471.", heard{values: map[string]string{argRef: "4417"}}},
		{"Yes, please.", heard{yes: true, values: map[string]string{}}},
		{"Make it eight o'clock.", heard{values: map[string]string{argTime: "20:00"}}},
	}
	for _, c := range cases {
		got := listen(c.text)
		if got.tool != c.want.tool || got.stop != c.want.stop || got.yes != c.want.yes || !maps.Equal(got.values, c.want.values) {
			t.Errorf("listen(%q) = %+v, want %+v", c.text, got, c.want)
		}
	}
}

func TestSpeech(t *testing.T) {
	if got := dayDate("2026-12-09"); got != "Wednesday, December 9" {
		t.Errorf("dayDate = %q", got)
	}
	if got, want := clock("19:30"), "7:30 pm"; got != want {
		t.Errorf("clock = %q, want %q", got, want)
	}
	if got, want := clock("20:00"), "8 pm"; got != want {
		t.Errorf("clock = %q, want %q", got, want)
	}
	if got, want := success(toolBook, map[string]string{argParty: "4", argDate: "2026-12-11", argTime: "20:00", argName: "Okafor"}),
		"I've booked a table for four on Friday, December 11 at 8 pm under the name Okafor."; got != want {
		t.Errorf("success = %q, want %q", got, want)
	}
}
