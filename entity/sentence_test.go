package entity

import (
	"math/rand"
	"strings"
	"testing"
)

// Whole confirmations as agents say them: every value found, each once.
func TestSentences(t *testing.T) {
	v := NewVocabulary("Joint Savings", "Everyday Checking", "Maria Lopez")
	runCases(t, Options{Ref: callDay, Names: v, BareTime: true}, []exCase{
		{"I've scheduled a payment of two hundred and fifteen dollars to Maria Lopez from Joint Savings for tomorrow.",
			"money:215; name:Maria Lopez; name:Joint Savings; date:2026-12-08"},
		{"Your booking R four M nine is moved to Tuesday, December 8 at 9 am.",
			"code:R4M9; date:2026-12-08; time:09:00"},
		{"Done: $1,200.50 goes out on the 8th from Everyday Checking, reference four one two eight.",
			"money:1200.5; date:2026-12-08; name:Everyday Checking; code:4128"},
		{"That's a table for four at half past seven in the evening, the day after tomorrow.",
			"number:4; time:19:30; date:2026-12-09"},
		{"I've booked it for next Friday at 7 pm for an hour and a half.",
			"date:2026-12-11|2026-12-18; time:19:00; duration:PT1H30M"},
		{"Booking BK-4471 is cancelled.", "code:BK4471"},
		{"Your reference is Romeo four Mike nine, and it's fifteen bucks.",
			"code:R4M9; money:15"},
		{"It moved from Tuesday to Wednesday at 8.",
			"date:2026-12-08; date:2026-12-09; time:08:00|20:00"},
		{"The total is two fifty.", "number:250|money:2.5"},
		{"Nothing was changed.", ""},
		{"One moment while I check that for you.", "number:1"},
		{"I have 2 guests at 21:30 on 2026-12-09", "number:2; time:21:30; date:2026-12-09"},
	})
}

// TestExtractInvariants feeds random word salad from every table and
// checks that spans are in range, ordered and disjoint, that Text is the
// span's tokens, and that every entity has a value or a stated date.
func TestExtractInvariants(t *testing.T) {
	var vocab []string
	for _, m := range []map[string]int64{unitWords, tensWords, ordinalWords, scaleWords} {
		for w := range m {
			vocab = append(vocab, w)
		}
	}
	for w := range monthWords {
		vocab = append(vocab, w)
	}
	for w := range weekdayWords {
		vocab = append(vocab, w)
	}
	for w := range natoWords {
		vocab = append(vocab, w)
	}
	for w := range durationUnits {
		vocab = append(vocab, w)
	}
	vocab = append(vocab, "and", "a", "an", "the", "of", "at", "to", "past", "quarter", "half", "am", "pm",
		"in", "morning", "evening", "noon", "midnight", "dollars", "cents", "bucks", "$12.50", "9:30", "09:00",
		"2026-12-08", "12/08", "r", "m", "double", "triple", "oh", "tomorrow", "day", "after", "next", "#12",
		"r4m9", "4128", "8th", "o'clock", "point", "dozen", "from", "now", "people", "as")
	names := NewVocabulary("Maria Lopez", "blue", "the day")
	rng := rand.New(rand.NewSource(19))
	for n := 0; n < 20000; n++ {
		ws := make([]string, 1+rng.Intn(10))
		for i := range ws {
			ws[i] = vocab[rng.Intn(len(vocab))]
		}
		s := strings.Join(ws, " ")
		ts := Tokenize(s)
		opts := Options{BareTime: n%2 == 0, Names: names}
		if n%3 == 0 {
			opts.Ref = callDay
		}
		prev := 0
		for _, e := range ExtractTokens(ts, opts) {
			if e.Span.Start < prev || e.Span.End <= e.Span.Start || e.Span.End > len(ts) {
				t.Fatalf("%q: bad span %v in %s", s, e.Span, render(Extract(s, opts)))
			}
			prev = e.Span.End
			if e.Text != strings.Join(ts[e.Span.Start:e.Span.End], " ") {
				t.Fatalf("%q: text %q for span %v", s, e.Text, e.Span)
			}
			if e.Value == "" && (e.Dim != DimDate || e.Date == (DateSpec{})) {
				t.Fatalf("%q: empty %s entity", s, e.Dim)
			}
		}
	}
}

var benchUtterances = []string{
	"I've scheduled a payment of two hundred and fifteen dollars to Maria Lopez from Joint Savings for tomorrow.",
	"Your booking R four M nine is moved to Tuesday, December 8 at 9 am.",
	"Done: $1,200.50 goes out on the 8th, reference four one two eight.",
	"That's a table for four at half past seven in the evening, the day after tomorrow.",
	"One moment while I check that for you.",
	"I couldn't move booking 4471; nothing was changed.",
}

func BenchmarkExtract(b *testing.B) {
	opts := Options{Ref: callDay, BareTime: true, Names: NewVocabulary("Maria Lopez", "Joint Savings")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ExtractTokens(Tokenize(benchUtterances[i%len(benchUtterances)]), opts)
	}
}
