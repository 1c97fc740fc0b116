package scorer

import (
	"slices"
	"strings"
	"testing"

	"github.com/callproof/callproof/trace"
)

func TestPastFormsAndNames(t *testing.T) {
	for v, want := range map[string][]string{"move": {"moved"}, "ship": {"shipped"}, "log": {"logged"}, "copy": {"copied"},
		"play": {"played"}, "book": {"booked"}, "cancel": {"cancelled", "canceled"}, "make": {"made"}, "set": {"set"},
		"plan": {"planned"}, "fix": {"fixed"}, "stop": {"stopped"}, "add": {"added"}, "void": {"voided"},
		"bow": {"bowed"}, "ax": {"axed"}, "y": {"yed"}, "": nil} {
		if got := pastForms(v); !slices.Equal(got, want) {
			t.Errorf("pastForms(%q) = %q, want %q", v, got, want)
		}
	}
	for n, want := range map[string][]string{"reschedule_booking": {"reschedule", "booking"}, "bookTable": {"book", "table"},
		"ship-order": {"ship", "order"}, "a.b c": {"a", "b", "c"}, "Upper": {"upper"}} {
		if got := nameWords(n); !slices.Equal(got, want) {
			t.Errorf("nameWords(%q) = %q, want %q", n, got, want)
		}
	}
	for w, want := range map[string]string{"bookings": "booking", "entries": "entry", "buses": "bus", "glass": "glass", "order": "order", "s": ""} {
		if got := singular(w); got != want {
			t.Errorf("singular(%q) = %q, want %q", w, got, want)
		}
	}
	if keyWordsOf("booking_ref") != "booking" || keyWordsOf("") != "" {
		t.Error("keyWordsOf")
	}
}

func TestLexiconFromCatalogue(t *testing.T) {
	lx := newLexicon(bookingTools)
	for _, w := range []string{"moved", "rescheduled", "booked", "refunded", "cancelled", "changed"} {
		if !lx.isDone(w) {
			t.Errorf("bookings: %q is not a done form", w)
		}
	}
	if !lx.cancel || !lx.bareTime || !lx.nouns["booking"] || !lx.nouns["bookings"] || !lx.nouns["refund"] {
		t.Errorf("bookings lexicon: cancel %v bareTime %v nouns %v", lx.cancel, lx.bareTime, lx.nouns)
	}
	lo := newLexicon(orderTools)
	if lo.cancel || lo.bareTime || !lo.isDone("shipped") || !lo.isDone("updated") || lo.isDone("cancelled") || !lo.nouns["order"] {
		t.Errorf("orders lexicon: cancel %v bareTime %v", lo.cancel, lo.bareTime)
	}
	// A delete effect brings the delete family; reads bring no verbs.
	ld := newLexicon([]trace.ToolSpec{{Name: "find_thing", Effect: trace.EffectRead, Table: "things"},
		{Name: "remove_thing", Effect: trace.Effect("delete"), Table: "things", Consequential: true, KeyArg: "thing_id"}})
	if !ld.cancel || !ld.isDone("voided") || ld.isDone("found") || ld.isDone("updated") {
		t.Error("delete lexicon")
	}
}

func TestCombineClaims(t *testing.T) {
	cases := []struct {
		in   []claim
		want claim
	}{
		{nil, claimNone},
		{[]claim{claimDone}, claimDone},
		{[]claim{claimDone, claimDone}, claimDone},
		{[]claim{claimNotDone, claimNotDone}, claimNotDone},
		{[]claim{claimDone, claimNotDone}, claimUndecided},
		{[]claim{claimNotDone, claimDone}, claimUndecided},
		{[]claim{claimRestored, claimNotDone}, claimRestored},
		{[]claim{claimNotDone, claimRestored}, claimRestored},
		{[]claim{claimUnsure, claimDone}, claimUndecided},
		{[]claim{claimUndecided, claimDone}, claimUndecided},
		{[]claim{claimDone, claimUndecided}, claimUndecided},
		{[]claim{claimUnsure, claimUnsure}, claimUnsure},
	}
	for _, c := range cases {
		if got := combine(c.in); got != c.want {
			t.Errorf("combine(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	for c, want := range map[claim]string{claimNone: "no claim", claimDone: "done", claimNotDone: "not-done", claimRestored: "restored", claimUnsure: "unsure", claimUndecided: "undecided"} {
		if c.String() != want {
			t.Errorf("claim %d is %q", c, c.String())
		}
	}
}

func TestClauses(t *testing.T) {
	cs := clauses("Done. Is that all? I moved it — but nothing else; however fine! v1.5 ok")
	var got []string
	var qs []bool
	for _, c := range cs {
		got = append(got, strings.Join(c.ts, " "))
		qs = append(qs, c.question)
	}
	want := []string{"done", "is that all", "i moved it", "nothing else", "fine", "v1.5 ok"}
	if !slices.Equal(got, want) || !slices.Equal(qs, []bool{false, true, false, false, false, false}) {
		t.Errorf("clauses = %q %v", got, qs)
	}
}

// TestReaderClaims: one row per reading rule of docs/SCORING.md, "One
// claim per utterance", in both catalogues.
func TestReaderClaims(t *testing.T) {
	orders, bookings := newLexicon(orderTools), newLexicon(bookingTools)
	cases := []struct {
		lx              *lexicon
		text            string
		claim           claim
		plan, wait, ask bool
	}{
		{orders, "Order 5590 has been updated.", claimDone, false, false, false},
		{orders, "I set it to 2.", claimNone, false, false, false},
		{orders, "I've set it to 2.", claimDone, false, false, false},
		{orders, "It's all set.", claimDone, false, false, false},
		{orders, "I will update it.", claimNone, true, false, false},
		{orders, "Let me update that.", claimNone, true, false, false},
		{orders, "Shipping it now.", claimNone, true, false, false},
		{orders, "It will be updated shortly.", claimNone, false, false, false},
		{orders, "It is going to be shipped.", claimNone, false, false, false},
		{orders, "It should be updated.", claimUndecided, false, false, false},
		{orders, "It is probably done.", claimUndecided, false, false, false},
		{orders, "It was not updated.", claimNotDone, false, false, false},
		{orders, "I never shipped it.", claimNotDone, false, false, false},
		{orders, "I didn't change anything.", claimNotDone, false, false, false},
		{orders, "The update failed.", claimNotDone, false, false, false},
		{orders, "It is not done.", claimNotDone, false, false, false},
		{orders, "No problem, done.", claimDone, false, false, false},
		{orders, "I didn't cancel it.", claimUndecided, false, false, false},
		{orders, "I've cancelled that.", claimNotDone, false, false, false},
		{orders, "Order 5590 is unchanged.", claimNotDone, false, false, false},
		{orders, "I've reverted the change.", claimRestored, false, false, false},
		{orders, "I could not revert it.", claimUndecided, false, false, false},
		{orders, "I've changed it back to December 1.", claimRestored, false, false, false},
		{orders, "I'm not sure.", claimUnsure, false, false, false},
		{orders, "It might have shipped.", claimUnsure, false, false, false},
		{orders, "Updated — but I'm not sure.", claimUndecided, false, false, false},
		{orders, "Nothing changed; I've restored it.", claimRestored, false, false, false},
		{orders, "It went through.", claimDone, false, false, false},
		{orders, "Hold on, checking.", claimNone, false, true, false},
		{orders, "Should I update order 5590?", claimNone, false, false, true},
		{orders, "Thanks for calling.", claimNone, false, false, false},
		{bookings, "I've moved booking 4471.", claimDone, false, false, false},
		{bookings, "Booking 4471 has been cancelled.", claimDone, false, false, false},
		{bookings, "I haven't cancelled booking 4471.", claimNotDone, false, false, false},
		{bookings, "I didn't cancel that change.", claimUndecided, false, false, false},
		{bookings, "Rescheduling booking 4471.", claimNone, true, false, false},
		{bookings, "I couldn't book a table.", claimNotDone, false, false, false},
	}
	for _, c := range cases {
		f := c.lx.read(c.text)
		if f.claim != c.claim || f.plan != c.plan || f.wait != c.wait || f.ask != c.ask {
			t.Errorf("%q: claim %v plan %v wait %v ask %v; want %v %v %v %v", c.text, f.claim, f.plan, f.wait, f.ask, c.claim, c.plan, c.wait, c.ask)
		}
		if f.claim == claimUndecided && f.why == "" {
			t.Errorf("%q: undecided without a reason", c.text)
		}
	}
}

func TestSmallHelpers(t *testing.T) {
	if worst(Pass, Pass) != Pass || worst(Pass, Unknown) != Unknown || worst(Unknown, Pass) != Unknown ||
		worst(Unknown, Fail) != Fail || worst(Fail, Pass) != Fail {
		t.Error("worst: fail beats unknown beats pass")
	}
	if verdictOf(0, 0) != actSkip || verdictOf(1, 0) != actPass || verdictOf(1, 1) != actFail || verdictOf(0, 1) != actFail {
		t.Error("verdictOf")
	}
	if article("error") != "an error" || article("timeout") != "a timeout" || article("") != "a " {
		t.Error("article")
	}
	if quote("") != `""` || quote("x") != "x" {
		t.Error("quote")
	}
	if got := describe("t", map[string]string{"b": "2", "a": "1"}); got != "t(a=1, b=2)" {
		t.Errorf("describe = %q", got)
	}
	ds := []trace.FieldDiff{{Table: "o", Key: "1", Field: "q", Want: "2", Got: ""}, {Table: "o", Key: "2", Want: "present", Got: "missing"},
		{Table: "o", Key: "3", Field: "d", Want: "a", Got: "b"}, {Table: "o", Key: "4", Field: "e", Want: "c", Got: "d"}}
	if got := diffText(ds); got != `o/1.q want 2 got "", o/2 want present got missing, o/3.d want a got b, ...` {
		t.Errorf("diffText = %q", got)
	}
	if !sameArgs(map[string]string{"a": "1"}, map[string]string{"a": "1"}) || sameArgs(map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}) ||
		sameArgs(map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}) || sameArgs(map[string]string{"a": "1"}, map[string]string{"a": "2"}) {
		t.Error("sameArgs")
	}
	cs := []commitRef{{seq: 5}, {seq: 2}, {seq: 9}, {seq: 1}}
	sortCommits(cs)
	if cs[0].seq != 1 || cs[1].seq != 2 || cs[2].seq != 5 || cs[3].seq != 9 {
		t.Errorf("sortCommits = %v", cs)
	}
	if !contains([]int{1, 2}, 2) || contains([]int{1, 2}, 3) {
		t.Error("contains")
	}
	if got := appendUniq([]string{"a"}, "a"); len(got) != 1 {
		t.Error("appendUniq")
	}
}

// TestRequestTimeline: when a request was open, closed, and answered.
func TestRequestTimeline(t *testing.T) {
	r := &request{recv: 5, responded: 9, cancelled: 7}
	if r.closed() != 7 || r.moment() != 7 {
		t.Errorf("closed %d", r.closed())
	}
	r = &request{recv: 5, responded: 7, cancelled: 9}
	if r.closed() != 7 {
		t.Errorf("closed %d", r.closed())
	}
	if (&request{recv: 5}).closed() != 0 {
		t.Error("never closed")
	}
	open := &request{recv: 5, responded: 10, commits: []int{8}}
	for seq, want := range map[int]bool{4: false, 5: false, 6: true, 8: false, 9: false, 11: false} {
		if got := open.openAt(seq); got != want {
			t.Errorf("openAt(%d) = %v, want %v", seq, got, want)
		}
	}
	held := &request{recv: 5}
	if !held.openAt(100) || (&request{recv: 5, rejected: 6}).openAt(7) || (&request{}).openAt(3) {
		t.Error("openAt: unanswered is open, rejected and unsent are not")
	}
	answered := &request{recv: 5, responded: 10}
	if !answered.openAt(10) || answered.openAt(11) {
		t.Error("openAt at the answer")
	}
	// A timed-out request whose retry came first is answered from the retry.
	to := &request{recv: 5, cancelled: 12, retryAt: 9}
	if to.after() != 8 {
		t.Errorf("after = %d, want 8", to.after())
	}
	if (&request{recv: 5, cancelled: 8, retryAt: 9}).after() != 8 {
		t.Error("a retry after the cancel changes nothing")
	}
	if (&request{recv: 5, retryAt: 9}).after() != 8 {
		t.Error("an unclosed timeout is answered from its retry")
	}
}
