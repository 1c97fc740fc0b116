package hearing

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/callproof/callproof/trace"
)

// sample is one agent utterance and the entities it names.
type sample struct {
	family string // "agents" (agents/phrases.go) or "bookings" (agents/bookings)
	text   string
	want   []Entity
	// wrong marks a code that no record holds: a confirmation with a wrong
	// value must be heard as said, not pulled onto a record's code.
	wrong bool
}

func (s sample) tools() ([]trace.ToolSpec, []trace.Record) {
	if s.family == "agents" {
		return orderTools(), orderRecords()
	}
	return bookingTools(), bookingRecords()
}

// spoken renders the text for the synthesizer. Style "digits" spells
// codes digit by digit, as voice agents are usually told to ("4 4 7 1");
// "flite" leaves them to flite, which reads "4471" as a cardinal.
func spoken(text, style string) string {
	if style != "digits" {
		return text
	}
	return codeRE().ReplaceAllStringFunc(text, func(c string) string {
		return strings.Join(strings.Split(c, ""), " ")
	})
}

// codeRE finds codes in corpus text: four-digit numbers not part of a
// time or an amount.
func codeRE() *regexp.Regexp { return regexp.MustCompile(`\b\d{4}\b`) }

func isoDay(iso string) string {
	t, _ := time.Parse(time.DateOnly, iso)
	return t.Format("Monday, January 2")
}

func monthDay(iso string) string {
	t, _ := time.Parse(time.DateOnly, iso)
	return t.Format("January 2")
}

func clockSpoken(hhmm string) string {
	t, _ := time.Parse("15:04", hhmm)
	if t.Minute() == 0 {
		return t.Format("3 pm")
	}
	return t.Format("3:04 pm")
}

func sizeWords(n int) string { return strings.Join(cardinalWords(n), " ") }

func ent(kind, v string) Entity { return Entity{kind, v} }

// corpus builds the measured utterances: the reference agents' lines and
// the bookings desk's, rotated over codes (a third of them held by no
// record), dates, times, sizes, amounts and names, then eight in the
// spoken forms of amounts, times and relative days.
func corpus() []sample {
	type ov struct {
		code, date string
		qty        int
	}
	orders := []ov{{"5590", "2026-12-03", 4}, {"4471", "2026-12-12", 2}, {"5591", "2026-11-28", 7}, {"4471", "2026-01-21", 3},
		{"5590", "2026-12-30", 12}, {"4417", "2026-10-09", 5}}
	orderHeld := map[string]bool{"5590": true, "4471": true}
	var out []sample
	for i, o := range orders {
		code := ent(KindCode, o.code)
		date := ent(KindDate, o.date)
		qty := ent(KindCount, fmt.Sprint(o.qty))
		wrong := !orderHeld[o.code]
		lines := []sample{
			{text: fmt.Sprintf("Done. Order %s now has delivery date %s and quantity %d.", o.code, monthDay(o.date), o.qty), want: []Entity{code, date, qty}},
			{text: fmt.Sprintf("Done. Order %s has been shipped.", o.code), want: []Entity{code}},
			{text: fmt.Sprintf("Okay, updating order %s: delivery date %s.", o.code, monthDay(o.date)), want: []Entity{code, date}},
			{text: fmt.Sprintf("Okay, I won't make any change. Nothing was changed on order %s.", o.code), want: []Entity{code}},
			{text: fmt.Sprintf("Sorry, I couldn't update order %s. Nothing was changed.", o.code), want: []Entity{code}},
			{text: fmt.Sprintf("Sorry, I can't confirm yet whether order %s went through.", o.code), want: []Entity{code}},
			{text: fmt.Sprintf("Sorry, I couldn't undo the change on order %s.", o.code), want: []Entity{code}},
			{text: fmt.Sprintf("Done. Order %s now has quantity %d.", o.code, o.qty), want: []Entity{code, qty}},
		}
		// Four lines per value set, rotating through the templates.
		for k := 0; k < 4; k++ {
			s := lines[(i*3+k)%len(lines)]
			s.family, s.wrong = "agents", wrong
			out = append(out, s)
		}
	}
	type bv struct {
		code, date, time string
		size             int
		amount, name     string
	}
	bookings := []bv{
		{"4471", "2026-12-09", "19:30", 6, "45.50", "Haddad"},
		{"4417", "2026-12-12", "18:00", 2, "120.00", "Lindqvist"},
		{"5590", "2026-12-03", "20:15", 8, "12.75", "Okafor"},
		{"4418", "2026-12-18", "12:45", 3, "60.00", "Haddad"},
		{"4471", "2026-11-21", "19:00", 11, "8.20", "Okafor"},
		{"5591", "2026-02-14", "13:30", 4, "250.00", "Lindqvist"},
	}
	bookingHeld := map[string]bool{"4471": true, "4417": true, "5590": true}
	for i, b := range bookings {
		code := ent(KindCode, b.code)
		date := ent(KindDate, b.date)
		tm := ent(KindTime, b.time)
		size := ent(KindCount, fmt.Sprint(b.size))
		amt := ent(KindAmount, strings.TrimSuffix(strings.TrimRight(b.amount, "0"), "."))
		name := ent(KindValue, strings.ToLower(b.name))
		money := "$" + strings.TrimSuffix(b.amount, ".00")
		when := isoDay(b.date) + " at " + clockSpoken(b.time)
		lines := []sample{
			{text: fmt.Sprintf("Booking %s is rescheduled for %s.", b.code, when), want: []Entity{code, date, tm}},
			{text: fmt.Sprintf("Your booking %s is now set for a table for %s.", b.code, sizeWords(b.size)), want: []Entity{code, size}},
			{text: fmt.Sprintf("Your booking %s has been cancelled.", b.code), want: []Entity{code}},
			{text: fmt.Sprintf("I've booked a table for %s on %s under the name %s.", sizeWords(b.size), when, b.name), want: []Entity{size, date, tm, name}},
			{text: fmt.Sprintf("I've placed a refund of %s on booking %s.", money, b.code), want: []Entity{amt, code}},
			{text: fmt.Sprintf("That change had already gone through: booking %s is on %s now.", b.code, isoDay(b.date)), want: []Entity{code, date}},
			{text: fmt.Sprintf("I've put booking %s back to %s.", b.code, when), want: []Entity{code, date, tm}},
			{text: fmt.Sprintf("Okay, I've stopped that. I haven't changed anything: booking %s is still on %s.", b.code, when), want: []Entity{code, date, tm}},
			{text: fmt.Sprintf("I can't tell yet whether booking %s has changed; please check back shortly.", b.code), want: []Entity{code}},
			{text: fmt.Sprintf("That's a refund of %s on booking %s under the name %s. Shall I go ahead?", money, b.code, b.name), want: []Entity{amt, code, name}},
		}
		for k := 0; k < 4; k++ {
			s := lines[(i*4+k)%len(lines)]
			s.family = "bookings"
			s.wrong = !bookingHeld[b.code] && hasKind(s.want, KindCode)
			out = append(out, s)
		}
	}
	// Spoken forms the grammar gained for issue 19: amounts of a hundred
	// or more and cents in words, morning times, relative days and a day
	// of the month alone (all on codes the records hold).
	for _, f := range []struct {
		text string
		want []Entity
	}{
		{"Booking 4471 is moved to tomorrow at nine a.m.", []Entity{ent(KindCode, "4471"), ent(KindDate, "rel:1"), ent(KindTime, "09:00")}},
		{"I've placed a refund of two hundred and fifteen dollars on booking 4417.", []Entity{ent(KindAmount, "215"), ent(KindCode, "4417")}},
		{"Booking 5590 is now set for the day after tomorrow at nine in the morning.", []Entity{ent(KindCode, "5590"), ent(KindDate, "rel:2"), ent(KindTime, "09:00")}},
		{"I've placed a refund of forty cents on booking 4471.", []Entity{ent(KindAmount, "0.4"), ent(KindCode, "4471")}},
		{"Booking 4417 is rescheduled for Tuesday the eighth at seven p.m.", []Entity{ent(KindCode, "4417"), ent(KindDate, "wd:2/dom:8"), ent(KindTime, "19:00")}},
		{"Booking 5590 is rescheduled for next Friday at eight thirty a.m.", []Entity{ent(KindCode, "5590"), ent(KindDate, "next:wd:5"), ent(KindTime, "08:30")}},
		{"Your booking 4471 is now set for the twelfth.", []Entity{ent(KindCode, "4471"), ent(KindDate, "dom:12")}},
		{"I've placed a refund of one hundred and twenty dollars and fifty cents on booking 5590.", []Entity{ent(KindAmount, "120.5"), ent(KindCode, "5590")}},
	} {
		out = append(out, sample{family: "bookings", text: f.text, want: f.want})
	}
	return out
}

func hasKind(es []Entity, kind string) bool {
	for _, e := range es {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

// score counts the wanted entities recovered exactly (as a multiset) and
// whether the heard set equals the wanted one.
func score(want, got []Entity) (hit int, exact bool) {
	left := map[Entity]int{}
	for _, e := range got {
		left[e]++
	}
	for _, e := range want {
		if left[e] > 0 {
			left[e]--
			hit++
		}
	}
	return hit, hit == len(want) && len(got) == len(want)
}
