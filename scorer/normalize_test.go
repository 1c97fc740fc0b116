package scorer

import (
	"slices"
	"testing"
)

func TestReadText(t *testing.T) {
	cases := []struct {
		text                string
		orders, dates, qtys []string
		claim               claim
		wait                bool
	}{
		{"Hi, I'd like to change the delivery date on order 5590 to December 3.", []string{"5590"}, []string{"2026-12-03"}, nil, claimNone, false},
		{"Done. Order 5599 now has delivery date December 3.", []string{"5599"}, []string{"2026-12-03"}, nil, claimDone, false},
		{"Order 5590 moves to Dec 3rd.", []string{"5590"}, []string{"2026-12-03"}, nil, claimNone, false},
		{"Delivery on 3 December 2027 for #5590", []string{"5590"}, []string{"2027-12-03"}, nil, claimNone, false},
		{"the 5th of December", nil, []string{"2026-12-05"}, nil, claimNone, false},
		{"set for 2026-12-03", nil, []string{"2026-12-03"}, nil, claimNone, false},
		{"All set, quantity 4 on order 5590.", []string{"5590"}, nil, []string{"4"}, claimDone, false},
		{"Updated: 4 units.", nil, nil, []string{"4"}, claimDone, false},
		{"The quantity is now four.", nil, nil, []string{"4"}, claimNone, false},
		{"Changed the quantity from 7 to 2.", nil, nil, []string{"2"}, claimDone, false},
		{"Done. Order 5590 has been shipped.", []string{"5590"}, nil, nil, claimDone, false},
		{"Okay, I won't make any change. Nothing was changed on order 5590.", []string{"5590"}, nil, nil, claimNotDone, false},
		{"Sorry, I couldn't update order 5590. Nothing was changed.", []string{"5590"}, nil, nil, claimNotDone, false},
		{"I’m unable to do that.", nil, nil, nil, claimNotDone, false},
		{"That order was cancelled.", nil, nil, nil, claimNotDone, false},
		{"Your order is confirmed.", nil, nil, nil, claimDone, false},
		{"Your change is processing, one moment please.", nil, nil, nil, claimNone, true},
		{"Let me check that it went through.", nil, nil, nil, claimNone, true},
		{"Okay, updating order 5590: quantity 2.", []string{"5590"}, nil, []string{"2"}, claimNone, false},
		{"May I help with anything else?", nil, nil, nil, claimNone, false},
	}
	for _, c := range cases {
		f := readText(c.text)
		if !slices.Equal(f.orders, c.orders) || !slices.Equal(f.dates, c.dates) || !slices.Equal(f.qtys, c.qtys) || f.claim != c.claim || f.wait != c.wait {
			t.Errorf("%q: orders %v dates %v qtys %v claim %v wait %v; want %v %v %v %v %v",
				c.text, f.orders, f.dates, f.qtys, f.claim, f.wait, c.orders, c.dates, c.qtys, c.claim, c.wait)
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
		{"date", "tomorrow", "tomorrow"},
		{"integer", "4", "4"},
		{"integer", "04", "4"},
		{"integer", "Four", "4"},
		{"integer", "0", "0"},
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
