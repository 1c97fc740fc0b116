package spoken

import (
	"slices"
	"testing"
	"time"
)

func TestForms(t *testing.T) {
	cases := []struct {
		got  []string
		want string
	}{
		{Date("2026-12-08", time.Time{}), "the 8th of December"},
		{Date("2026-12-08", time.Time{}), "Tuesday, the eighth of December"},
		{Clock("19:30"), "half past seven in the evening"},
		{Count("4"), "four"},
		{Code("4821"), "forty-eight twenty-one"},
		{Code("TR4821"), "Tango Romeo four eight two one"},
		{Money("45.50"), "forty-five fifty"},
		{Name("gold-star"), "gold star"},
	}
	for _, c := range cases {
		if !slices.Contains(c.got, c.want) {
			t.Errorf("%q not among %q", c.want, c.got)
		}
	}
	if got := InWords(215, true); got != "two hundred and fifteen" {
		t.Errorf("InWords(215) = %q", got)
	}
}
