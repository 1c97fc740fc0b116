package perturb

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/internal/doccheck"
	"github.com/callproof/callproof/trace"
)

func TestForms(t *testing.T) {
	today, _ := time.Parse(time.DateOnly, DefaultCallDate)
	cases := []struct {
		d    Dimension
		v    string
		want []string
	}{
		{Money, "215.00", []string{"$215", "two hundred and fifteen dollars", "two hundred fifteen dollars", "two fifteen"}},
		{Money, "250.00", []string{"two fifty", "$250.00"}},
		{Money, "300.00", []string{"three hundred dollars", "three hundred bucks"}},
		{Money, "54.50", []string{"fifty-four dollars and fifty cents", "fifty-four fifty", "$54.50"}},
		{Clock, "09:00", []string{"9 am", "9:00 am", "nine in the morning", "09:00", "nine o'clock in the morning"}},
		{Clock, "19:30", []string{"7:30 pm", "half past seven in the evening", "seven thirty pm"}},
		{Clock, "12:00", []string{"noon", "12 pm"}},
		{Date, "2026-12-08", []string{"Tuesday, December 8", "the 8th", "Tuesday the 8th", "the eighth", "December 8th"}},
		{Date, "2026-12-01", []string{"tomorrow", "Tuesday the 1st"}},
		{Date, "2026-12-02", []string{"the day after tomorrow", "this Wednesday"}},
		{Code, "R4M9", []string{"R four M nine", "Romeo four Mike nine", "R 4 M 9"}},
		{Code, "4471", []string{"four four seven one", "double four seven one", "forty-four seventy-one"}},
		{Count, "4", []string{"four", "4"}},
		{Name, "rainy-day", []string{"rainy day"}},
	}
	for _, c := range cases {
		got := forms(c.d, c.v, today)
		for _, w := range c.want {
			require.Contains(t, got, w, "%s %s", c.d, c.v)
		}
	}
}

func TestNeighbours(t *testing.T) {
	require.Contains(t, neighbours(Clock, "09:00", nil), "21:00", "the other half of the day")
	require.Contains(t, neighbours(Date, "2026-12-08", nil), "2026-12-07")
	require.Contains(t, neighbours(Date, "2026-12-08", nil), "2026-12-09")
	require.Contains(t, neighbours(Money, "215.00", nil), "216.00")
	require.Contains(t, neighbours(Code, "R4M9", nil), "R4N9")
	require.Contains(t, neighbours(Name, "everyday", []string{"bills", "everyday"}), "bills")
	require.NotContains(t, neighbours(Name, "everyday", []string{"bills", "everyday"}), "everyday")
	for _, n := range neighbours(Code, "4471", []string{"4417"}) {
		require.NotEqual(t, "4471", n)
	}
}

func TestReplaceWholeWords(t *testing.T) {
	require.Equal(t, "Booking 4471 is on the 9th.", replace("Booking 4471 is on the 8th.", "the 8th", "the 9th"))
	require.Equal(t, "a table for five, booking 4471", replace("a table for four, booking 4471", "four", "five"))
	require.Equal(t, "that's $216 now", replace("that's $215 now", "$215", "$216"))
}

func TestApplyCopies(t *testing.T) {
	sp := &trace.AgentSpeech{Utterance: "a1", Text: "Booking 4471 is on the 8th."}
	h := &trace.History{Call: "c", Events: []trace.Event{{Seq: 1, Kind: trace.KindAgentSpeechEnd, Data: sp}}}
	out := Apply(h, Variant{utt: "a1", Was: "the 8th", Now: "the 9th"})
	require.Equal(t, "Booking 4471 is on the 9th.", out.Events[0].Data.(*trace.AgentSpeech).Text)
	require.True(t, strings.HasSuffix(sp.Text, "8th."), "the recorded history is untouched")
}

// TestCorpusWellFormed: every corpus line's value has the shape of its
// dimension, so a corpus typo cannot turn a re-spelling into a perturbation.
func TestCorpusWellFormed(t *testing.T) {
	f, err := os.Open("../../testdata/spoken.txt")
	require.NoError(t, err)
	defer f.Close()
	entries, err := ReadCorpus(f)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(entries), 100)
	for _, e := range entries {
		d, ok := dimensionOf("", e.Value)
		require.True(t, ok, "%v", e)
		require.Equal(t, e.Dimension, d, "%v", e)
	}
}

// TestDefaultCallDateDocumented: docs/PERFORMANCE.md states the call date
// relative forms are said against.
func TestDefaultCallDateDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/PERFORMANCE.md")
	require.NoError(t, err)
	refs := doccheck.Refs(string(doc), "perturb")["perturb.DefaultCallDate"]
	require.NotEmpty(t, refs)
	for _, s := range refs {
		got, err := doccheck.Value(DefaultCallDate, s)
		require.NoError(t, err)
		require.Equal(t, DefaultCallDate, got)
	}
}
