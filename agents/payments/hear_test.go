package payments

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestListen(t *testing.T) {
	today := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		text string
		want utterance
	}{
		{"Please send two hundred and fifteen dollars to my landlord from my everyday account on the 8th, reference R4M9.",
			utterance{tool: toolSchedule, values: map[string]string{slotAmount: "215.00", slotPayee: "landlord", slotFrom: "everyday", slotDate: "2026-12-08", slotRef: "R4M9"}}},
		{"Yes, but make it two fifty, not two fifteen.", utterance{yes: true, values: map[string]string{slotAmount: "250.00"}}},
		{"Actually, make it the day after tomorrow.", utterance{values: map[string]string{slotDate: "2026-12-02"}}},
		{"Sorry, not the plumber, it's for my mom.", utterance{values: map[string]string{slotPayee: "mom"}}},
		{"Yes, but the reference is Romeo four November nine.", utterance{yes: true, values: map[string]string{slotRef: "R4N9"}}},
		{"Stop, don't send it.", utterance{stop: true, values: map[string]string{}}},
		{"Please cancel payment four one two eight.", utterance{tool: toolCancel, values: map[string]string{slotID: "4128"}}},
		{"Could you change payment 4128 to seventy-five dollars?", utterance{tool: toolUpdate, values: map[string]string{slotID: "4128", slotAmount: "75.00"}}},
		{"Pay my plumber $80 tomorrow from my rainy day account, reference K 7 Q 2.",
			utterance{tool: toolSchedule, values: map[string]string{slotAmount: "80.00", slotPayee: "plumber", slotFrom: "rainy-day", slotDate: "2026-12-01", slotRef: "K7Q2"}}},
		{"Yes please.", utterance{yes: true, values: map[string]string{}}},
	}
	for _, c := range cases {
		require.Equal(t, c.want, listen(c.text, today), c.text)
	}
}

func TestSpeak(t *testing.T) {
	require.Equal(t, "two hundred and fifteen dollars", moneyWords("215.00"))
	require.Equal(t, "fifty-four dollars and fifty cents", moneyWords("54.50"))
	require.Equal(t, "three hundred dollars", moneyWords("300.00"))
	require.Equal(t, "Romeo four Mike nine", natoCode("R4M9"))
	require.Equal(t, "four one two eight", digitWords("4128"))
	require.Equal(t, "Tuesday the 8th", dayWords("2026-12-08"))
	require.Equal(t, "Wednesday the 2nd", dayWords("2026-12-02"))
}
