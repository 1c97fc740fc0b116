package hearing

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callproof/callproof/entity"
	"github.com/callproof/callproof/trace"
)

func TestNormalize(t *testing.T) {
	g := BuildGrammar(bookingTools(), bookingRecords())
	cases := []struct {
		heard, text string
		ents        []string
		uncertain   bool
	}{
		{"booking four four seven one is rescheduled for wednesday december ninth at seven thirty p.m.",
			"booking 4471 is rescheduled for wednesday december ninth at 7:30 pm", []string{"code:4471", "date:2026-12-09", "time:19:30"}, false},
		{"booking four thousand four hundred seventy one has been cancelled", "booking 4471 has been cancelled", []string{"code:4471"}, false},
		{"your booking five five nine oh is now set for a table for six", "your booking 5590 is now set for a table for 6", []string{"code:5590", "count:6"}, false},
		{"i've placed a refund of forty five dollars fifty cents on booking four four one seven",
			"i've placed a refund of $45.50 on booking 4417", []string{"amount:45.5", "code:4417"}, false},
		{"i've booked a table for four on the third of december at eight p.m. under the name okafor",
			"i've booked a table for 4 on the third of december at 8 pm under the name okafor", []string{"count:4", "date:2026-12-03", "time:20:00", "value:okafor"}, false},
		{"refund of one hundred twenty dollars", "refund of $120", []string{"amount:120"}, false},
		{"it is on friday now", "it is on friday now", []string{"date:wd:5"}, false},
		{"quarter to eight in the evening", "quarter to 8 pm", []string{"time:19:45"}, false},
		{"at seven thirty", "at 7:30", []string{"time:~7:30"}, false},
		{"one moment please", "one moment please", nil, false},
		{"moved it two wednesday", "moved it two wednesday", []string{"date:wd:3"}, true},
		{"", "", nil, true},
		{"a table for for on friday", "a table for for on friday", []string{"date:wd:5"}, true},
	}
	for _, c := range cases {
		h := g.Normalize(strings.Fields(c.heard))
		var ents []string
		for _, e := range h.Entities {
			ents = append(ents, e.String())
		}
		if h.Text != c.text || !slices.Equal(ents, c.ents) || h.Uncertain != c.uncertain {
			t.Errorf("Normalize(%q)\n got %q %v uncertain=%v (%s)\nwant %q %v uncertain=%v", c.heard, h.Text, ents, h.Uncertain, h.Why, c.text, c.ents, c.uncertain)
		}
	}
}

func TestGrammar(t *testing.T) {
	g := BuildGrammar(bookingTools(), bookingRecords())
	j := g.JSGF()
	for _, want := range []string{"four four seven one", "<d1> thousand [<n999>]", "<digit> <digit> <digit> <digit>", "okafor", "rescheduled", "p.m."} {
		if !strings.Contains(j, want) {
			t.Errorf("grammar lacks %q", want)
		}
	}
	for _, line := range strings.Split(j, "\n") {
		if strings.HasPrefix(line, "<word> =") {
			for _, w := range strings.Fields(strings.NewReplacer("|", " ", ";", " ").Replace(strings.TrimPrefix(line, "<word> ="))) {
				if numberWords()[w] && w != "one" {
					t.Errorf("free vocabulary has number word %q: it must only appear inside entities", w)
				}
			}
		}
	}
	if got := g.Codes(); !slices.Equal(got, []string{"4417", "4471", "5590"}) {
		t.Errorf("codes = %v", got)
	}
	if o := BuildGrammar(orderTools(), nil).JSGF(); strings.Contains(o, "<VOID>") || strings.Contains(o, "<value>") {
		t.Errorf("a grammar without text values must not reference <value>:\n%s", o)
	}
}

func TestUpsample(t *testing.T) {
	x := make([]int16, 400)
	for i := range x {
		x[i] = 1000
	}
	y := upsample2(x, 0)
	if len(y) != 800 || y[400] != 1000 || y[401] < 990 || y[401] > 1010 {
		t.Fatalf("a constant must stay constant: %d %d %d", len(y), y[400], y[401])
	}
	z := upsample2(x, 1) // zero-stuffing: the image doubles even samples, clears odd ones
	if z[400] != 2000 || z[401] != 0 {
		t.Fatalf("mirror: %d %d", z[400], z[401])
	}
}

func TestParseTimes(t *testing.T) {
	out := "done one four four\n<sil> 0.000 0.170 1.000000\ndone 0.180 0.520 1.000000\n(NULL) 0.520 0.520 1.000000\none(2) 1.880 2.190 1.000000\n[NOISE] 2 3 1\n</s> 3 3 1\n"
	if got := parseTimes([]byte(out)); !slices.Equal(got, []string{"done", "one"}) {
		t.Fatalf("parseTimes = %v", got)
	}
	if got := fliteToCMU("pau ow k ax f er pau \n"); got != "OW K AH F ER" {
		t.Fatalf("fliteToCMU = %q", got)
	}
}

func TestNormalizeWeekdayPause(t *testing.T) {
	g := BuildGrammar(bookingTools(), bookingRecords())
	for heard, want := range map[string]string{
		"saturday the february fourteen": "saturday february fourteen",
		"friday a december eighteenth":   "friday december eighteenth",
		"on the ninth of december":       "on the ninth of december",
	} {
		h := g.Normalize(strings.Fields(heard))
		if h.Text != want || len(h.Entities) != 1 {
			t.Errorf("Normalize(%q) = %q %v, want %q and one date", heard, h.Text, h.Entities, want)
		}
	}
}

func TestHear(t *testing.T) {
	g := BuildGrammar(bookingTools(), bookingRecords())
	w := strings.Fields
	cases := []struct {
		name      string
		res       Result
		uncertain bool
	}{
		{"no cross-check", Result{Words: w("booking four four seven one is cancelled")}, false},
		{"agree", Result{Words: w("booking four four seven one is cancelled"), Check: w("booking four four seven one cancelled")}, false},
		{"disagree on the code", Result{Words: w("booking four four seven one is cancelled"), Check: w("booking four four one seven is cancelled")}, true},
		{"check heard nothing", Result{Words: w("booking four four seven one"), Check: []string{}}, true},
		{"same kinds of claim words", Result{Words: w("i've changed it"), Check: w("i've moved it")}, false},
		{"a negation heard once", Result{Words: w("nothing was changed"), Check: w("it was changed")}, true},
		{"a hedge heard once", Result{Words: w("it should be updated"), Check: w("it be updated")}, true},
		{"the check's own doubt", Result{Words: w("a table for six"), Check: w("a table for for")}, true},
		// The decode offered no record codes hears the same code: the audio
		// holds it, not the grammar.
		{"free decode agrees", Result{Words: w("booking four four seven one is cancelled"), Check: w("booking four four seven one cancelled"),
			Free: w("booking four four seven one is cancelled")}, false},
		// Both grammar decodes took a record's code the free one did not
		// hear: snapped onto the record's, not vouched for.
		{"snapped onto a record's code", Result{Words: w("booking four four seven one is cancelled"), Check: w("booking four four seven one cancelled"),
			Free: w("booking four four one one is cancelled")}, true},
		{"free decode heard no code", Result{Words: w("booking four four seven one is cancelled"), Check: w("booking four four seven one is cancelled"),
			Free: w("booking is cancelled")}, true},
		// A code no record holds is never snapped: only record codes are.
		{"an unknown code both ways", Result{Words: w("booking four four nine nine is cancelled"), Check: w("booking four four nine nine is cancelled"),
			Free: w("booking four four one nine is cancelled")}, false},
	}
	for _, c := range cases {
		if h := g.Hear(c.res); h.Uncertain != c.uncertain {
			t.Errorf("%s: uncertain = %v (%s), want %v", c.name, h.Uncertain, h.Why, c.uncertain)
		}
	}
	if a := agreement(w("a b c d"), w("a c d e")); a != 0.75 {
		t.Errorf("agreement = %v, want 0.75", a)
	}
}

// A cancel or delete effect brings the cancel verbs in, whatever the
// tool is called.
func TestGrammarCancelEffects(t *testing.T) {
	for _, eff := range []trace.Effect{trace.EffectCancel, trace.EffectDelete} {
		tools := []trace.ToolSpec{{Name: "void_entry", Effect: eff, Table: "entries", KeyArg: "ref", Consequential: true}}
		if j := BuildGrammar(tools, nil).JSGF(); !strings.Contains(j, "cancelled") {
			t.Errorf("%s: grammar lacks %q", eff, "cancelled")
		}
	}
}

// TestSpokenFormsReadByEntity: amounts in words, times with am/pm and
// relative days, as the recognizer's grammar produces them, normalize to
// text the claim reader's extractors (package entity) read to the same
// values as the agent's own written transcript would give.
func TestSpokenFormsReadByEntity(t *testing.T) {
	g := BuildGrammar(bookingTools(), bookingRecords())
	ref := entity.Ref{Date: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	cases := []struct {
		heard, text, written string
		ents                 []string
	}{
		{"a refund of two hundred and fifteen dollars goes out tomorrow at nine a.m.",
			"a refund of $215 goes out tomorrow at 9 am", "A refund of $215 goes out tomorrow at 9 am.", []string{"amount:215", "date:rel:1", "time:09:00"}},
		{"a fee of forty cents", "a fee of $0.40", "a fee of $0.40", []string{"amount:0.4"}},
		{"two hundred dollars and forty cents", "$200.40", "$200.40", []string{"amount:200.4"}},
		{"one thousand two hundred dollars", "$1200", "$1,200", []string{"amount:1200"}},
		{"one hundred and twenty dollars am fifty cents", "$120.50", "$120.50", []string{"amount:120.5"}},
		{"booked for nine in the morning", "booked for 9 am", "booked for 9 am", []string{"time:09:00"}},
		{"booked for nine a m", "booked for 9 am", "booked for 9:00 am", []string{"time:09:00"}},
		{"at seven thirty p.m. the day after tomorrow", "at 7:30 pm the day after tomorrow", "at 7:30 pm the day after tomorrow", []string{"time:19:30", "date:rel:2"}},
		{"it is on the eighth", "it is on the eighth", "it is on the 8th", []string{"date:dom:8"}},
		{"moved to tuesday the eighth", "moved to tuesday the eighth", "moved to Tuesday the 8th", []string{"date:wd:2/dom:8"}},
		{"moved to next tuesday", "moved to next tuesday", "moved to next Tuesday", []string{"date:next:wd:2"}},
		{"it is on for today", "it is on for today", "it is on for today", []string{"date:rel:0"}},
		{"the twenty first of december", "the twenty first of december", "the 21st of December", []string{"date:2026-12-21"}},
	}
	read := func(s string) []string {
		var out []string
		for _, e := range entity.Extract(s, entity.Options{Ref: ref}) {
			out = append(out, e.Dim.String()+":"+e.Value)
		}
		return out
	}
	for _, c := range cases {
		h := g.Normalize(strings.Fields(c.heard))
		var ents []string
		for _, e := range h.Entities {
			ents = append(ents, e.String())
		}
		if h.Text != c.text || !slices.Equal(ents, c.ents) || h.Uncertain {
			t.Errorf("Normalize(%q)\n got %q %v uncertain=%v (%s)\nwant %q %v", c.heard, h.Text, ents, h.Uncertain, h.Why, c.text, c.ents)
		}
		if got, want := read(h.Text), read(c.written); !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%q: the extractors read %v in the heard text, %v in the written", c.heard, got, want)
		}
	}
}

// TestGrammarOffersSpokenForms: the grammar can produce the relative
// days, day-of-month ordinals, am/pm times and amounts in words that
// TestSpokenFormsReadByEntity reads.
func TestGrammarOffersSpokenForms(t *testing.T) {
	j := BuildGrammar(bookingTools(), bookingRecords()).JSGF()
	for _, want := range []string{
		"<relday> = today | tomorrow | the day after tomorrow;",
		"next <weekday>", "<relday>", "[<weekday>] the <dayord> [of <month>]",
		`<ampm> = a.m. | p.m. | in the morning`,
		"<n999> = <n99> | <d1> hundred [[and] <n99>];",
		"<amount> = <n9999> (dollars | dollar) [[and] <n99> (cents | cent)] | <n99> (cents | cent);",
	} {
		if !strings.Contains(j, want) {
			t.Errorf("grammar lacks %q", want)
		}
	}
}
