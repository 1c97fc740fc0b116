package agents

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/callproof/callproof/protocol/native"
	"github.com/callproof/callproof/trace"
)

// restaurantTools is a catalogue no reference agent was written for.
func restaurantTools() []trace.ToolSpec {
	code := trace.ArgSpec{Name: "confirmation_code", Type: "string", Required: true, Pattern: `^[A-Z]{2}\d{4}$`}
	return []trace.ToolSpec{
		{Name: "find_reservation", Description: "Look up a table reservation by its confirmation code.", Effect: trace.EffectRead, Table: "reservations", KeyArg: "confirmation_code", Args: []trace.ArgSpec{code}},
		{Name: "book_table", Description: "Reserve a table for a party.", Effect: trace.EffectCreate, Table: "tables", Consequential: true, Args: []trace.ArgSpec{
			{Name: "guest_name", Type: "string", Required: true}, {Name: "party_size", Type: "integer", Required: true},
			{Name: "date", Type: "date", Required: true}, {Name: "time", Type: "time", Required: true},
			{Name: "seating", Type: "string", Enum: []string{"indoor", "terrace", "bar"}}}},
		{Name: "change_reservation", Description: "Move a reservation to another day or time, or change the party size.", Effect: trace.EffectUpdate, Table: "reservations", KeyArg: "confirmation_code", Consequential: true, Args: []trace.ArgSpec{
			code, {Name: "date", Type: "date"}, {Name: "time", Type: "time"}, {Name: "party_size", Type: "integer"}}},
		{Name: "cancel_reservation", Description: "Cancel a reservation; the table is released.", Effect: trace.EffectCancel, Table: "reservations", KeyArg: "confirmation_code", Consequential: true, StatusField: "status", StatusValue: "cancelled", Args: []trace.ArgSpec{code}},
		{Name: "add_deposit", Description: "Take a deposit for a large party.", Effect: trace.EffectCreate, Table: "deposits", Consequential: true, Args: []trace.ArgSpec{
			code, {Name: "amount", Type: "number", Required: true, Description: "in euros"}}},
	}
}

func TestGenericHears(t *testing.T) {
	d := newGenericDomain(restaurantTools(), "2026-11-30", "UTC")
	for _, c := range []struct {
		action, text string
		want         heard
	}{
		{"", "Hi, I'd like to add a deposit. The amount is 70 and the confirmation code is R U five eight nine seven.",
			heard{action: "add_deposit", slots: map[string]string{"amount": "70", "confirmation_code": "RU5897"}}},
		{"add_deposit", "Sorry, make the amount eighty.", heard{slots: map[string]string{"amount": "80"}}},
		{"add_deposit", "Sorry, make the amount seventy-five.", heard{slots: map[string]string{"amount": "75"}}},
		{"add_deposit", "Sorry, make the confirmation code I V 6 6 6 2.", heard{slots: map[string]string{"confirmation_code": "IV6662"}}},
		{"", "Hi, I'd like to book a table. The date is December 16th, the time is nine thirty pm, the party size is 2 people and the guest name is Lindqvist.",
			heard{action: "book_table", slots: map[string]string{"date": "2026-12-16", "time": "21:30", "party_size": "2", "guest_name": "Lindqvist"}}},
		{"book_table", "Sorry, make the time ten o'clock in the evening.", heard{slots: map[string]string{"time": "22:00"}}},
		{"", "Hi, I'd like to cancel reservation G I seven nine zero two.", heard{action: "cancel_reservation", slots: map[string]string{"confirmation_code": "GI7902"}}},
		{"change_reservation", "Wait, stop, don't change it.", heard{negate: true, slots: map[string]string{}}},
		{"cancel_reservation", "Yes, cancel it.", heard{proceed: true, slots: map[string]string{}}},
	} {
		got := d.understand(c.text, c.action)
		assert.Equal(t, c.want, got, "%q", c.text)
	}
}

// TestGenericHearsFreeText: a free-text value named by its argument ends
// at the clause's end or at a word that closes it ("instead", "please"),
// and a spelled code's lone capitals are not taken for a name.
func TestGenericHearsFreeText(t *testing.T) {
	code := trace.ArgSpec{Name: "rental_code", Type: "string", Required: true, Pattern: `^[A-Z]{2}\d{4}$`}
	d := newGenericDomain([]trace.ToolSpec{
		{Name: "get_rental", Effect: trace.EffectRead, Table: "rentals", KeyArg: "rental_code", Args: []trace.ArgSpec{code}},
		{Name: "move_rental", Description: "Change a rental.", Effect: trace.EffectUpdate, Table: "rentals", KeyArg: "rental_code", Consequential: true,
			Args: []trace.ArgSpec{code, {Name: "note", Type: "string"}, {Name: "speed", Type: "string", Enum: []string{"standard", "same-day"}}}},
	}, "2026-11-30", "UTC")
	for _, c := range []struct {
		action, text string
		want         map[string]string
	}{
		{"", "Hi, I'd like to move rental B I zero six nine five. Please make the speed same day and the note ring twice.",
			map[string]string{"rental_code": "BI0695", "speed": "same-day", "note": "ring twice"}},
		{"move_rental", "Wait, make the note extra napkins instead.", map[string]string{"note": "extra napkins"}},
		{"move_rental", "Sorry, make the note side door, please.", map[string]string{"note": "side door"}},
		{"move_rental", "Sorry, make the note Side door please.", map[string]string{"note": "Side door"}},
	} {
		assert.Equal(t, c.want, d.understand(c.text, c.action).slots, "%q", c.text)
	}
}

// The generic agent understands the caller with its own parsers and the
// claims extractors (entity), never with the generator's phrasings (issue
// 23): no package the agents build on is packgen or spoken, so a generated
// pack it passes proves the scenarios, not shared templates.
func TestGenericSharesNoPhrasesWithGenerator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	assert.Contains(t, deps, "github.com/callproof/callproof/entity")
	for _, p := range []string{"github.com/callproof/callproof/packgen", "github.com/callproof/callproof/spoken"} {
		assert.NotContains(t, deps, p)
	}
}

// `agent --catalogue FILE`: a call whose start carries no tools uses the
// configured catalogue, read generically; one that carries its own uses
// those.
func TestConfiguredCatalogueForBareStart(t *testing.T) {
	for _, carried := range []bool{false, true} {
		cfg := Careful()
		cfg.Clock = &heldClock{}
		cfg.Catalogue = restaurantTools()
		ctx, cancel := context.WithCancel(context.Background())
		s := &session{ctx: ctx, cancel: cancel, inbox: make(chan any, 64), outbox: make(chan any, 1024), tw: textWire{}}
		e := newEngine(cfg.withDefaults(), http.DefaultClient, s)
		s.eng = e
		st := &native.Start{CallID: "c1", TimeScale: 1, Tools: native.Tools{BaseURL: "http://127.0.0.1:1/tools"}}
		want := restaurantTools()
		if carried {
			st.Tools.Catalog = defaultCatalog()
			want = defaultCatalog()
		}
		e.frame(native.Message{Event: native.EventStart, Start: st})
		assert.Equal(t, want, e.catalog, "start carries tools: %t", carried)
		_, generic := e.dom.(*genericDomain)
		assert.Equal(t, !carried, generic, "start carries the order desk's tools: %t", carried)
		cancel()
	}
}
