package scorer

import (
	"slices"
	"testing"
	"time"
	_ "time/tzdata" // the same zones on every machine

	"github.com/callproof/callproof/entity"
	"github.com/callproof/callproof/trace"
)

// Values read by dimension (package entity) in the scorer's heard forms:
// numbers and amounts in words of 100 or more, morning times, spoken and
// NATO codes, the day of the month, relative dates against the call date.
func TestScanEntities(t *testing.T) {
	ref := entity.Ref{Date: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)}
	cases := []struct {
		text string
		ref  entity.Ref
		c    valueClass
		cur  []string
	}{
		{"two hundred and fifteen dollars", entity.Ref{}, classAmount, []string{"215"}},
		{"two hundred dollars", entity.Ref{}, classAmount, []string{"200"}},
		{"one thousand two hundred dollars and fifty cents", entity.Ref{}, classAmount, []string{"1200.5"}},
		{"two fifty dollars", entity.Ref{}, classAmount, []string{"250|2.5"}},
		{"fifteen bucks", entity.Ref{}, classAmount, []string{"15"}},
		{"a payment of two fifty", entity.Ref{}, classAmount, nil}, // a pair: see TestScanPairs
		{"two hundred", entity.Ref{}, classAmount, nil},
		{"9 am", entity.Ref{}, classTime, []string{"09:00"}},
		{"9:00 am", entity.Ref{}, classTime, []string{"09:00"}},
		{"at 09:00", entity.Ref{}, classTime, []string{"09:00"}},
		{"nine in the morning", entity.Ref{}, classTime, []string{"09:00"}},
		{"9 in the evening", entity.Ref{}, classTime, []string{"21:00"}},
		{"at 9:00", entity.Ref{}, classTime, []string{"~9:00"}},
		{"payment four one two eight", entity.Ref{}, classID, []string{"4128"}},
		{"booking R four M nine", entity.Ref{}, classID, []string{"r4m9"}},
		{"reference Romeo four Mike nine", entity.Ref{}, classID, []string{"r4m9"}},
		{"reference Romeo four November nine", entity.Ref{}, classID, []string{"r4n9"}},
		{"reference Romeo four November nine", entity.Ref{}, classDate, nil},
		{"on November 9", entity.Ref{}, classDate, []string{"2026-11-09"}},
		{"order double five nine oh", entity.Ref{}, classID, []string{"5590"}},
		{"on the 8th", entity.Ref{}, classDate, []string{"dom:8"}},
		{"12/08", entity.Ref{}, classDate, []string{"2026-12-08"}},
		{"next Tuesday", entity.Ref{}, classDate, []string{"wd:2"}},
		{"tomorrow", entity.Ref{}, classDate, nil},
		{"tomorrow", ref, classDate, []string{"2026-12-08"}},
		{"the day after tomorrow", ref, classDate, []string{"2026-12-09"}},
		{"in three days", ref, classDate, []string{"2026-12-10"}},
	}
	for _, c := range cases {
		ts := tokens(c.text)
		var out valueSet
		sc := scanner{ts: ts, used: make([]bool, len(ts)), ref: c.ref, out: &out}
		sc.scan()
		if !slices.Equal(out.cur[c.c], c.cur) {
			t.Errorf("%q: %v %q, want %q", c.text, c.c, out.cur[c.c], c.cur)
		}
	}
}

func TestScanPairs(t *testing.T) {
	for text, want := range map[string][]string{
		"a payment of two fifty":            {"2:50"},
		"booking forty-four seventy-one":    {"44:71"},
		"twelve forty-five":                 {"12:45"},
		"two fifty people":                  nil,
		"on December 8, twenty twenty-six":  nil,
		"at seven thirty":                   nil,
		"instead of forty-four seventy-one": nil,
	} {
		f := scanValues(text, true)
		if !slices.Equal(f.pairs, want) {
			t.Errorf("%q: pairs %q, want %q", text, f.pairs, want)
		}
	}
	if c, w, p := pairReadings("44:71"); c != "4471" || w != "4471" || p != "44.71" {
		t.Errorf("pairReadings(44:71) = %s %s %s", c, w, p)
	}
	if c, w, p := pairReadings("2:5"); c != "205" || w != "205" || p != "2.05" {
		t.Errorf("pairReadings(2:5) = %s %s %s", c, w, p)
	}
}

func TestSameHeardReadings(t *testing.T) {
	cases := []struct {
		c           valueClass
		named, held string
		want        bool
	}{
		{classAmount, "250|2.5", "250", true},
		{classAmount, "250|2.5", "2.5", true},
		{classAmount, "250|2.5", "25", false},
		{classDate, "dom:8", "2026-12-08", true},
		{classDate, "dom:8", "2026-11-08", true},
		{classDate, "dom:8", "2026-12-18", false},
		{classDate, "dom:8", "soon", false},
		{classTime, "09:00", normValue(typeTime, "09:00"), true},
		{classTime, "21:00", normValue(typeTime, "09:00"), false},
		{classTime, "09:00", "~9:00", true},
		{classTime, "21:00", "~9:00", true},
		{classTime, "10:00", "~9:00", false},
	}
	for _, c := range cases {
		if got := sameHeard(c.c, c.named, c.held); got != c.want {
			t.Errorf("sameHeard(%v, %q, %q) = %v, want %v", c.c, c.named, c.held, got, c.want)
		}
	}
}

func TestRawClass(t *testing.T) {
	for _, c := range []struct {
		typ, raw string
		want     valueClass
	}{
		{typeString, "215.00", classAmount}, {typeString, "215", classCount}, {typeInteger, "4", classCount},
		{typeString, "4.5", classAmount}, {typeNumber, "215.00", classAmount}, {typeString, "v1.2", classID},
	} {
		if got := rawClass(c.typ, c.raw, normValue(c.typ, c.raw)); got != c.want {
			t.Errorf("rawClass(%q, %q) = %v, want %v", c.typ, c.raw, got, c.want)
		}
	}
}

func TestNamesPhrase(t *testing.T) {
	for _, c := range []struct {
		text, w string
		want    bool
	}{
		{"from your rainy day account", "rainy-day", true},
		{"from your rainy-day account", "rainy day", true},
		{"from your rainy-day account", "rainy-day", true},
		{"from your rainy days account", "rainy-day", false},
		{"from your everyday account", "every day", false},
	} {
		if got := namesPhrase(c.text, c.w); got != c.want {
			t.Errorf("namesPhrase(%q, %q) = %v", c.text, c.w, got)
		}
	}
}

func TestDisplayValues(t *testing.T) {
	for in, want := range map[string]string{"dom:1": "the 1st", "dom:22": "the 22nd", "dom:3": "the 3rd", "dom:11": "the 11th", "dom:23": "the 23rd",
		"250|2.5": "250 or 2.5", "wd:2": "Tuesday", "2026-12-03": "2026-12-03"} {
		if got := displayValue(classDate, in); got != want {
			t.Errorf("displayValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCallDateRef: index takes the reader's reference day from
// call.start's calendar, in the call's own time zone.
func TestCallDateRef(t *testing.T) {
	if v := index(&trace.History{}, &trace.CallStart{}, nil); !v.lex.ref.IsZero() {
		t.Error("a call.start without the call's date must give the zero Ref")
	}
	v := index(&trace.History{}, &trace.CallStart{CallDate: "2026-12-08", TimeZone: "America/New_York"}, nil)
	es := entity.Extract("tomorrow", entity.Options{Ref: v.lex.ref})
	if len(es) != 1 || es[0].Value != "2026-12-09" {
		t.Errorf("tomorrow from New York's December 8 = %+v", es)
	}
}

var paymentTools = []trace.ToolSpec{
	{Name: "get_payment", Effect: trace.EffectRead, Table: "payments", KeyArg: "payment_ref",
		Args: []trace.ArgSpec{{Name: "payment_ref", Type: "string", Required: true}}},
	{Name: "update_payment", Effect: trace.EffectUpdate, Table: "payments", KeyArg: "payment_ref", Consequential: true,
		Args: []trace.ArgSpec{{Name: "payment_ref", Type: "string", Required: true},
			{Name: "amount", Type: "number"}, {Name: "pay_time", Type: "time"}}},
}

func payments() []trace.Record {
	return []trace.Record{
		{Table: "payments", Key: "4128", Version: 1, Fields: map[string]string{"amount": "15", "pay_time": "17:00", "payee": "Maria Lopez"}},
		{Table: "payments", Key: "4129", Version: 1, Fields: map[string]string{"amount": "80", "pay_time": "08:00", "payee": "Sam Ortiz"}},
	}
}

// TestConfirmationByDimension: a done-claim read by dimension passes when
// its values are the committed ones in any spoken form, and fails when
// one of them is not (issue 19's false passes and false failures).
func TestConfirmationByDimension(t *testing.T) {
	req := "Please change payment 4128 to 215 dollars at 9 am."
	want := intent(1, "update_payment", true, "payment_ref", "4128", "amount", "215", "pay_time", "09:00")
	for _, c := range []struct {
		said string
		v    Verdict
	}{
		{"Done. Payment 4128 is now two hundred and fifteen dollars at 9 am.", Pass},
		{"Done. Payment four one two eight is now $215 at nine in the morning.", Pass},
		{"Done. Payment 4128 is now two hundred fifteen dollars at 09:00.", Pass},
		{"Done. Payment 4128 is now fifteen dollars at 9 am.", Fail},
		{"Done. Payment 4128 is now two fifteen at 9 am.", Pass},
		{"Done. Payment forty-one twenty-eight is now $215 at 9 am.", Pass},
		{"Done. Payment forty-one twenty-nine is now $215 at 9 am.", Fail},
		{"Done. Payment 4128 is now two fifty at 9 am.", Fail},
		{"Done. Payment 4128 is now two hundred and fifteen dollars at 9 pm.", Fail},
		{"Done. Payment four one two nine is now two hundred and fifteen dollars at 9 am.", Fail},
	} {
		b := newCallIn(paymentTools, "pay", "plain", nil, payments(), say("s1", trace.ActSay, req, want))
		b.caller("s1").state(1, "update_payment", "payment_ref", "4128", "amount", "215", "pay_time", "09:00").
			toolIntent("update_payment", "payment_ref", "4128", "amount", "215", "pay_time", "09:00").
			call("r1", "k-1", "update_payment", "payment_ref", "4128", "amount", "215", "pay_time", "09:00").
			speak("a1", c.said)
		cs := Score(b.done())
		if got := cs.Axis(ConfirmationMatchesBackend).Verdict; got != c.v {
			t.Errorf("%q: confirmation %s, want %s\n%s", c.said, got, c.v, summary(cs))
		}
	}
}

var transferTools = []trace.ToolSpec{
	{Name: "get_account", Effect: trace.EffectRead, Table: "accounts", KeyArg: "account_id",
		Args: []trace.ArgSpec{{Name: "account_id", Type: "string", Required: true}}},
	{Name: "send_payment", Effect: trace.EffectCreate, Table: "payments", Consequential: true,
		Args: []trace.ArgSpec{{Name: "payee", Type: "string", Required: true}, {Name: "from_account", Type: "string", Required: true},
			{Name: "amount", Type: "number", Required: true}, {Name: "speed", Type: "string", Enum: []string{"standard", "express"}}}},
}

func transferRecords() []trace.Record {
	return []trace.Record{
		{Table: "accounts", Key: "A1", Version: 1, Fields: map[string]string{"nickname": "Joint Savings"}},
		{Table: "accounts", Key: "A2", Version: 1, Fields: map[string]string{"nickname": "Everyday Checking"}},
		{Table: "payments", Key: "payments-1", Version: 1, Fields: map[string]string{"payee": "Sam Ortiz", "from_account": "Everyday Checking", "amount": "80", "speed": "standard"}},
	}
}

// TestEveryValueAccounted: a done-claim's names are accounted for — a
// value another record holds (a payee, an account nickname) or an enum
// value the record does not hold fails the confirmation even when no one
// proposed it on the call (docs/SCORING.md, "Every value accounted for"),
// and contradicts the working state (axis 2) as well.
func TestEveryValueAccounted(t *testing.T) {
	req := "Please send 215 dollars to Maria Lopez from Joint Savings, standard speed."
	args := []string{"payee", "Maria Lopez", "from_account", "Joint Savings", "amount", "215", "speed", "standard"}
	want := intent(1, "send_payment", true, args...)
	for _, c := range []struct {
		said      string
		v, active Verdict // active "": as v
	}{
		{"Done. I've sent $215 to Maria Lopez from Joint Savings.", Pass, ""},
		{"Done. I've sent two hundred and fifteen dollars to Maria Lopez from joint savings, standard speed.", Pass, ""},
		{"Done. I've sent $215 to Maria Lopez from Everyday Checking.", Fail, ""},
		{"Done. I've sent $215 to Sam Ortiz from Joint Savings.", Fail, ""},
		{"Done. I've sent $215 to Maria Lopez from Joint Savings, express.", Fail, ""},
		{"Done. I've sent $80 to Maria Lopez from Joint Savings.", Fail, ""},
		{"Done. Your payment to Maria Lopez now goes out for two fifteen.", Pass, ""},
		// a pair of number words is accounted on axis 6 only (axis 2 reads
		// a done-claim's amounts as amounts)
		{"Done. Your payment to Maria Lopez now goes out for two fifty.", Fail, Pass},
	} {
		b := newCallIn(transferTools, "pay", "plain", nil, transferRecords(), say("s1", trace.ActSay, req, want))
		b.caller("s1").state(1, "send_payment", args...).
			toolIntent("send_payment", args...).
			call("r1", "k-1", "send_payment", args...).
			speak("a1", c.said)
		cs := Score(b.done())
		if got := cs.Axis(ConfirmationMatchesBackend).Verdict; got != c.v {
			t.Errorf("%q: confirmation %s, want %s\n%s", c.said, got, c.v, summary(cs))
		}
		active := c.active
		if active == "" {
			active = c.v
		}
		if got := cs.Axis(ActiveStateCorrect).Verdict; got != active {
			t.Errorf("%q: active state %s, want %s\n%s", c.said, got, active, summary(cs))
		}
	}
}

// TestDatesAccounted: the day of the month alone is checked against the
// held date; a relative date cannot be placed without the call's date, so
// a done-claim naming one is unknown rather than a pass.
func TestDatesAccounted(t *testing.T) {
	req := "Please move the delivery of order 5590 to December 3."
	for _, c := range []struct {
		said string
		v    Verdict
	}{
		{"I've moved order 5590 to the 3rd.", Pass},
		{"I've moved order 5590 to the third of December.", Pass},
		{"I've moved order 5590 to 12/03.", Pass},
		{"I've moved order 5590 to December 3, twenty twenty-six.", Pass},
		{"I've moved order fifty-five ninety to December 3.", Pass},
		{"I've moved order fifty-five ninety-nine to December 3.", Fail},
		{"I've moved order 5590 to the 4th.", Fail},
		{"I've moved order 5590 to tomorrow.", Unknown},
		{"I've moved order 5590 to tomorrow, the 4th.", Fail},
	} {
		b := newCall("date", "plain", nil, domain(), say("s1", trace.ActSay, req, date5590))
		b.caller("s1").state(1, "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			toolIntent("update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			call("r1", "k-1", "update_order", "order_number", "5590", "delivery_date", "2026-12-03").
			speak("a1", c.said)
		cs := Score(b.done())
		if got := cs.Axis(ConfirmationMatchesBackend).Verdict; got != c.v {
			t.Errorf("%q: confirmation %s, want %s\n%s", c.said, got, c.v, summary(cs))
		}
	}
}

// TestPresentStateClaims: a record's new state told in the present is a
// done-claim; negated, a not-done claim.
func TestPresentStateClaims(t *testing.T) {
	lx := newLexicon(paymentTools)
	for s, want := range map[string]claim{
		"Payment four one eight two now goes out for seventy-five dollars.": claimDone,
		"Booking 4471 now stands on Wednesday, December 9.":                 claimDone,
		"Your delivery now arrives on the 3rd.":                             claimDone,
		"That payment never now goes out.":                                  claimNotDone,
		"It still doesn't now go out.":                                      claimNone,
	} {
		if got := lx.read(s).claim; got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}

// TestStateOfAffairsClaims: a claim without a stock verb that tells the
// state the action brought about ("is on its way", "you're down for",
// "it'll go out tomorrow") is a done-claim of the action in force: true
// after the write committed, false after an error answer with nothing
// written (docs/SCORING.md, "Claims beyond stock verbs").
func TestStateOfAffairsClaims(t *testing.T) {
	req := "Please send 215 dollars to Maria Lopez from Joint Savings, standard speed."
	args := []string{"payee", "Maria Lopez", "from_account", "Joint Savings", "amount", "215", "speed", "standard"}
	want := intent(1, "send_payment", true, args...)
	for _, said := range []string{
		"Your payment is on its way.",
		"You're down for $215 to Maria Lopez from Joint Savings.",
		"It'll go out tomorrow.",
		"That'll go out to Maria Lopez today.",
		"Your $215 payment is going out to Maria Lopez.",
	} {
		for _, failed := range []bool{false, true} {
			b := newCallIn(transferTools, "pay", "plain", nil, transferRecords(), say("s1", trace.ActSay, req, want))
			b.caller("s1").state(1, "send_payment", args...).toolIntent("send_payment", args...)
			if failed {
				b.recv("r1", "k-1", 1, "send_payment", args...).respond("r1", 500, errorBody("server_error", "try again"), false)
			} else {
				b.call("r1", "k-1", "send_payment", args...)
			}
			cs := Score(b.speak("a1", said).done())
			v, primary := vector(cs), cs.Primary
			if !failed && v != "pppppp" || failed && (v != "ppppff" || primary != BucketUnverifiedResult) {
				t.Errorf("%q (error answer %v): %s %s\n%s", said, failed, v, primary, summary(cs))
			}
		}
	}
}

// TestFailureHedgesAndDenials: after a definite failure (an error answer,
// nothing written) a hedged claim ("it should go through shortly") shows
// the agent did not notice: captured fails, bucket unverified_tool_result.
// After a timeout the outcome is open, so a hedge is no such proof. An
// untrue "I wasn't able to" after a success is a mismatch (axis 6 fails).
func TestFailureHedgesAndDenials(t *testing.T) {
	args := []string{"order_number", "5590", "quantity", "2"}
	for _, c := range []struct {
		name, said string
		fault      trace.FaultKind
		captured   Verdict
		primary    Bucket
	}{
		{"hedge after 503", "It should go through shortly.", trace.FaultStatus, Fail, BucketUnverifiedResult},
		{"hedged past after 503", "That probably went through.", trace.FaultStatus, Fail, BucketUnverifiedResult},
		{"hedged state after 503", "It should be all set now.", trace.FaultStatus, Fail, BucketUnverifiedResult},
		{"truthful after 503", "Sorry, I wasn't able to update order 5590.", trace.FaultStatus, Pass, BucketGaveUp},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := []trace.Fault{{Kind: c.fault, Match: &trace.ToolMatch{Tool: "update_order"}, Status: 503}}
			b := newCall("fail-hedge", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
			b.caller("s1").state(1, "update_order", args...).
				toolIntent("update_order", args...).
				recv("r1", "k-1", 1, "update_order", args...).faultApplied("r1", c.fault).
				respond("r1", 503, errorBody("unavailable", "backend unavailable"), false).
				speak("a1", c.said)
			cs := Score(b.done())
			if got := cs.Axis(Captured).Verdict; got != c.captured || cs.Primary != c.primary {
				t.Errorf("captured %s primary %s, want %s %s\n%s", got, cs.Primary, c.captured, c.primary, summary(cs))
			}
		})
	}
	t.Run("hedge after a timeout", func(t *testing.T) {
		f := []trace.Fault{{Kind: trace.FaultTimeout, Match: &trace.ToolMatch{Tool: "update_order"}, Times: 1}}
		b := newCall("timeout-hedge", "tool_failure", f, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", args...).
			toolIntent("update_order", args...).
			recv("r1", "k-1", 1, "update_order", args...).faultApplied("r1", trace.FaultTimeout).
			cancelled("r1", "client gave up").
			speak("a1", "It should go through shortly.")
		cs := Score(b.done())
		if got := cs.Axis(Captured).Verdict; got == Fail {
			t.Errorf("captured %s after a timeout, want no fail\n%s", got, summary(cs))
		}
	})
	t.Run("denial after success", func(t *testing.T) {
		b := newCall("deny-ok", "plain", nil, domain(), say("s1", trace.ActSay, reqQty5590, qty5590))
		b.caller("s1").state(1, "update_order", args...).
			toolIntent("update_order", args...).
			call("r1", "k-1", "update_order", args...).
			speak("a1", "I'm sorry, I wasn't able to update order 5590.")
		cs := Score(b.done())
		if got := cs.Axis(ConfirmationMatchesBackend).Verdict; got != Fail {
			t.Errorf("confirmation %s, want fail\n%s", got, summary(cs))
		}
	})
}
