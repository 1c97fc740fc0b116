package scorer

// Boundary tests for the claim reader (reader.go), the value scanner
// (scan.go) and the value helpers (values.go), written against the live
// mutants of the last mutation run: each case tells the rule apart from a
// mutation of one comparison, operator or branch.

import (
	"slices"
	"strings"
	"testing"

	"github.com/callproof/callproof/entity"
	"github.com/callproof/callproof/trace"
)

// mrScan reads s with the plain scanner (no record nouns).
func mrScan(s string, bareTime bool) valueSet { return scanValues(s, bareTime) }

// mrScanner is a scanner over s whose marks can be inspected.
func mrScanner(s string, keyWords map[string]bool) *scanner {
	ts := tokens(s)
	return &scanner{ts: ts, used: make([]bool, len(ts)), keyWords: keyWords, out: &valueSet{}}
}

func mrUsed(sc *scanner) string {
	var b strings.Builder
	for _, u := range sc.used {
		if u {
			b.WriteByte('x')
		} else {
			b.WriteByte('.')
		}
	}
	return b.String()
}

func mrEq(a, b []string) bool { return slices.Equal(a, b) }

func TestMutTokensBoundaries(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"a b", []string{"a", "b"}},
		{"zone z", []string{"zone", "z"}},
		{"0 9 09", []string{"0", "9", "09"}},
		{"A_Z", []string{"a", "z"}},
		{"`a{z}", []string{"a", "z"}},
		{"/0@9[", []string{"0", "9"}},
	}
	for _, c := range cases {
		if got := tokens(c.in); !mrEq(got, c.want) {
			t.Errorf("tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMutDaysInAndISO(t *testing.T) {
	for _, c := range []struct{ y, m, want int }{
		{2024, 2, 29}, {2023, 2, 28}, {1900, 2, 28}, {2000, 2, 29}, {2100, 2, 28},
		{2026, 4, 30}, {2026, 12, 31}, {2025, 2, 28}, {2028, 2, 29},
	} {
		if got := entity.DaysIn(c.y, c.m); got != c.want {
			t.Errorf("daysIn(%d, %d) = %d, want %d", c.y, c.m, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"9999-12-31", "9999-12-31"},
		{"1000-01-01", "1000-01-01"},
		{"2026-2-9", "2026-02-09"},
		{"2024-02-29", "2024-02-29"},
		{"1900-02-29", ""},
		{"0999-12-31", ""},
		{"a026-12-03", ""},
		{":026-12-03", ""},
		{"2026/12/03", ""},
		{"2026-12-0", ""},
		{"20261-12-03", ""},
	} {
		if got := parseISO(c.in); got != c.want {
			t.Errorf("parseISO(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMutIDFormAndInteger(t *testing.T) {
	if got := idForm("AZ-az_09#"); got != "azaz09" {
		t.Errorf("idForm = %q, want azaz09", got)
	}
	if got := idForm("Zz-9"); got != "zz9" {
		t.Errorf("idForm = %q, want zz9", got)
	}
	for _, c := range []struct{ in, want string }{
		{"zero", "0"}, {"0", "0"}, {"twenty one", "21"}, {"four people", "four people"},
	} {
		if got := normValue(typeInteger, c.in); got != c.want {
			t.Errorf("normValue(integer, %q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMutNormValueStringAmount(t *testing.T) {
	// Two tokens ("$1", "234.50") scan as two amounts, so the whole value is
	// read as one amount by amount().
	if got := normValue(typeString, "$1,234.50"); got != "1234.5" {
		t.Errorf("normValue(string, $1,234.50) = %q, want 1234.5", got)
	}
	if got := normValue(typeString, "$ and more"); got != "$ and more" {
		t.Errorf("normValue(string, $ and more) = %q", got)
	}
}

func TestMutMayHoldValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"noon", true}, {"midday", true}, {"midnight", true}, {"hello there", false},
		{"Okafor", false}, {"see you friday", true}, {"in december", true}, {"a1", true},
	} {
		if got := mayHoldValue(c.in); got != c.want {
			t.Errorf("mayHoldValue(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestMutOnlyClass(t *testing.T) {
	vs := func(prior bool, kv ...any) valueSet {
		var s valueSet
		for i := 0; i < len(kv); i += 2 {
			for _, x := range kv[i+1].([]string) {
				s.add(kv[i].(valueClass), x, prior)
			}
		}
		return s
	}
	cases := []struct {
		name string
		f    valueSet
		want valueClass
	}{
		{"one time", vs(false, classTime, []string{"19:30"}), classTime},
		{"one amount", vs(false, classAmount, []string{"45.5"}), classAmount},
		{"one date", vs(false, classDate, []string{"2026-12-03"}), classDate},
		{"two times", vs(false, classTime, []string{"19:30", "20:00"}), classNone},
		{"id", vs(false, classID, []string{"5590"}), classNone},
		{"count", vs(false, classCount, []string{"4"}), classNone},
		{"text", vs(false, classText, []string{"okafor"}), classNone},
		{"time and amount", vs(false, classTime, []string{"19:30"}, classAmount, []string{"45"}), classNone},
		{"weekday", vs(false, classDate, []string{"wd:3"}), classNone},
		{"empty", valueSet{}, classNone},
	}
	for _, c := range cases {
		if got := onlyClass(c.f); got != c.want {
			t.Errorf("%s: onlyClass = %v, want %v", c.name, got, c.want)
		}
	}
	withPrior := vs(false, classTime, []string{"19:30"})
	withPrior.add(classTime, "18:00", true)
	if got := onlyClass(withPrior); got != classNone {
		t.Errorf("with a prior value: onlyClass = %v, want none", got)
	}
}

func TestMutClassOf(t *testing.T) {
	cases := []struct {
		typ, norm string
		want      valueClass
	}{
		{typeString, "", classNone},
		{typeKey, "bk-1", classID},
		{typeKey, "smith", classText},
		{typeKey, "2026-12-03", classID},
		{typeString, "2026-12-03", classDate},
		{typeString, "19:30", classTime},
		{typeString, "~7:30", classTime},
		{typeString, "4", classCount},
		{typeString, "123", classCount},
		{typeString, "1234", classID},
		{typeString, "45.5", classAmount},
		{typeString, "1.2.3", classID},
		{typeString, ".", classText},
		{typeString, "4a", classID},
		{typeString, "smith", classText},
		{typeDate, "x", classDate},
		{typeTime, "x", classTime},
		{typeNumber, "x", classAmount},
		{typeInteger, "x", classCount},
	}
	for _, c := range cases {
		if got := classOf(c.typ, c.norm); got != c.want {
			t.Errorf("classOf(%q, %q) = %v, want %v", c.typ, c.norm, got, c.want)
		}
	}
}

func TestMutIsClock(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"7:30", true}, {"19:30", true}, {"~7:30", true}, {"00:00", true},
		{"7:3", false}, {"7:300", false}, {":30", false}, {"123:30", false},
		{"ab:cd", false}, {"7-30", false}, {"7:3a", false}, {"a:30", false},
	} {
		if got := isClock(c.in); got != c.want {
			t.Errorf("isClock(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestMutLaterToAndMark(t *testing.T) {
	sc := mrScanner("to x", nil)
	if sc.laterTo(1) {
		t.Error(`laterTo looked before the value ("to x")`)
	}
	sc = mrScanner("x y z", nil)
	if sc.laterTo(0) {
		t.Error(`laterTo("x y z") = true`)
	}
	sc = mrScanner("x y until", nil)
	if !sc.laterTo(0) {
		t.Error(`laterTo("x y until") = false`)
	}
	sc = mrScanner("x to y", nil)
	if !sc.laterTo(0) {
		t.Error(`laterTo("x to y") = false`)
	}
	sc = mrScanner("a b c", nil)
	sc.mark(0, 1)
	if got := mrUsed(sc); got != "x.." {
		t.Errorf("mark(0, 1) = %s, want x..", got)
	}
	sc.mark(1, 9) // past the end: stops at the last token
	if got := mrUsed(sc); got != "xxx" {
		t.Errorf("mark(1, 9) = %s, want xxx", got)
	}
}

func TestMutScanDates(t *testing.T) {
	cases := []struct {
		in    string
		dates []string
	}{
		{"Wednesday 9 December", []string{"2026-12-09"}},
		{"Wednesday, December 9", []string{"2026-12-09"}},
		{"Wednesday the 9th of December", []string{"2026-12-09"}},
		{"on Wednesday the 9th of December", []string{"2026-12-09"}},
		{"9th of December", []string{"2026-12-09"}},
		{"the 9th of December", []string{"2026-12-09"}},
		{"December 9 2027", []string{"2027-12-09"}},
		{"9 December", []string{"2026-12-09"}},
		{"friday the december", []string{"wd:5"}},
	}
	for _, c := range cases {
		if got := mrScan(c.in, false).cur[classDate]; !mrEq(got, c.dates) {
			t.Errorf("dates(%q) = %q, want %q", c.in, got, c.dates)
		}
	}
	sc := mrScanner("Wednesday 9 December", nil)
	sc.dates()
	if got := mrUsed(sc); got != "xxx" {
		t.Errorf("marks after \"Wednesday 9 December\" = %s, want xxx", got)
	}
	sc = mrScanner("from 9 December to 10 December", nil)
	sc.dates()
	if got, want := sc.out.prior[classDate], []string{"2026-12-09"}; !mrEq(got, want) {
		t.Errorf("prior dates = %q, want %q", got, want)
	}
	if got, want := sc.out.cur[classDate], []string{"2026-12-10"}; !mrEq(got, want) {
		t.Errorf("current dates = %q, want %q", got, want)
	}
}

func TestMutAmPmAt(t *testing.T) {
	cases := []struct {
		ts   []string
		i    int
		want string
		n    int
	}{
		{[]string{"7", "a"}, 1, "", 0},
		{[]string{"7", "p", "m"}, 1, "pm", 2},
		{[]string{"7", "in", "the"}, 1, "", 0},
		{[]string{"7", "in", "the", "morning"}, 1, "am", 3},
		{[]string{"7", "in", "the", "evening"}, 1, "pm", 3},
		{[]string{"7"}, 1, "", 0},
	}
	for _, c := range cases {
		got, n := entity.HalfOfDay(c.ts, c.i)
		if got != c.want || n != c.n {
			t.Errorf("ampmAt(%q, %d) = %q, %d, want %q, %d", c.ts, c.i, got, n, c.want, c.n)
		}
	}
}

func TestMutScanTimes(t *testing.T) {
	cases := []struct {
		in    string
		bare  bool
		times []string
	}{
		{"noon", false, []string{"12:00"}},
		{"at midday", false, []string{"12:00"}},
		{"midnight", false, []string{"00:00"}},
		{"half past seven", false, []string{"~7:30"}},
		{"half past one", false, []string{"~1:30"}},
		{"half past twelve", false, []string{"~12:30"}},
		{"half past thirteen", false, nil},
		{"half past", false, nil},
		{"quarter past 7 pm", false, []string{"19:15"}},
		{"quarter to eight", false, []string{"~7:45"}},
		{"quarter to one", false, []string{"~12:45"}},
		{"half to", false, nil},
		{"at 1 pm", false, []string{"13:00"}},
		{"12 pm", false, []string{"12:00"}},
		{"10 pm", false, []string{"22:00"}},
		{"seven oh one pm", false, []string{"19:01"}},
		{"seven oh nine pm", false, []string{"19:09"}},
		{"seven oh five pm", false, []string{"19:05"}},
		{"seven ten pm", false, []string{"19:10"}},
		{"seven twenty pm", false, []string{"19:20"}},
		{"seven fifty-nine pm", false, []string{"19:59"}},
		{"at 7 20 guests", true, []string{"~7:00"}},
		{"7 o'clock in the evening", false, []string{"19:00"}},
		{"seven o'clock", false, []string{"~7:00"}},
		{"past the noon", false, []string{"12:00"}},
	}
	for _, c := range cases {
		if got := mrScan(c.in, c.bare).cur[classTime]; !mrEq(got, c.times) {
			t.Errorf("times(%q, bare %v) = %q, want %q", c.in, c.bare, got, c.times)
		}
	}
	sc := mrScanner("7 o'clock in the evening", nil)
	sc.times()
	if got := mrUsed(sc); got != "xxxxx" {
		t.Errorf("marks after \"7 o'clock in the evening\" = %s, want xxxxx", got)
	}
	sc = mrScanner("quarter to eight", nil)
	sc.times()
	if got := mrUsed(sc); got != "xxx" {
		t.Errorf("marks after \"quarter to eight\" = %s, want xxx", got)
	}
}

func TestMutScanAmounts(t *testing.T) {
	cases := []struct {
		in      string
		amounts []string
	}{
		{"zero dollars", []string{"0"}},
		{"5 dollars and", []string{"5"}},
		{"5 dollars and 50 cents", []string{"5.5"}},
		{"5 dollars and zero cents", []string{"5"}},
		{"5 dollars and one cent", []string{"5.01"}},
		{"5 dollars and 100 cents", []string{"5"}},
	}
	for _, c := range cases {
		if got := mrScan(c.in, false).cur[classAmount]; !mrEq(got, c.amounts) {
			t.Errorf("amounts(%q) = %q, want %q", c.in, got, c.amounts)
		}
	}
	for _, c := range []struct{ in, used string }{
		{"5 dollars and zero cents", "xxxxx"},
		{"5 dollars and 50 cents", "xxxxx"},
		{"5 dollars and 100 cents", "xx..."},
	} {
		sc := mrScanner(c.in, nil)
		sc.amounts()
		if got := mrUsed(sc); got != c.used {
			t.Errorf("marks after %q = %s, want %s", c.in, got, c.used)
		}
	}
}

func TestMutScanCounts(t *testing.T) {
	cases := []struct {
		in     string
		counts []string
	}{
		{"0 guests", []string{"0"}},
		{"zero guests", []string{"0"}},
		{"100 guests", []string{"100"}},
		{"1000 guests", nil},
		{"twenty one guests", []string{"21"}},
		{"quantity 0", []string{"0"}},
		{"quantity 100", []string{"100"}},
		{"quantity 1000", nil},
		{"quantity from 7 to 2", []string{"2"}},
	}
	for _, c := range cases {
		if got := mrScan(c.in, false).cur[classCount]; !mrEq(got, c.counts) {
			t.Errorf("counts(%q) = %q, want %q", c.in, got, c.counts)
		}
	}
	for _, c := range []struct{ in, used string }{
		{"quantity 4", ".x"},
		{"quantity twenty one", ".xx"},
		{"a table for four", "...x"},
		{"twenty one guests", "xx."},
	} {
		sc := mrScanner(c.in, nil)
		sc.counts()
		if got := mrUsed(sc); got != c.used {
			t.Errorf("marks after %q = %s, want %s", c.in, got, c.used)
		}
	}
}

func TestMutScanIDs(t *testing.T) {
	keys := map[string]bool{"order": true}
	cases := []struct {
		in  string
		ids []string
	}{
		{"bk-4471", []string{"bk4471"}},
		{"#12", []string{"12"}},
		{"#bk1", []string{"bk1"}},
		{"5590", []string{"5590"}},
		{"1234", []string{"1234"}},
		{"123", nil},
		{"12 apples", nil},
		{"number 12", []string{"12"}},
		{"ref 7", []string{"7"}},
		{"order 12", []string{"12"}},
		{"number 12th", nil},
		{"55901st", nil},
		{"apples 12", nil},
	}
	for _, c := range cases {
		sc := mrScanner(c.in, keys)
		sc.ids()
		if got := sc.out.cur[classID]; !mrEq(got, c.ids) {
			t.Errorf("ids(%q) = %q, want %q", c.in, got, c.ids)
		}
	}
}

func TestMutMentionsText(t *testing.T) {
	lx := newLexicon(nil)
	f := lx.read("The table is under the name Okafor.")
	if !f.mentions(classText, "Okafor", false) {
		t.Error("mentions(text, Okafor) = false")
	}
	if f.mentions(classText, "Smith", false) {
		t.Error("mentions(text, Smith) = true")
	}
	if f.mentions(classText, "", false) {
		t.Error("mentions(text, \"\") = true")
	}
}

func TestMutPastFormsRules(t *testing.T) {
	cases := map[string][]string{
		"":      nil,
		"y":     {"yed"},
		"try":   {"tried"},
		"play":  {"played"},
		"log":   {"logged"},
		"beg":   {"begged"},
		"ship":  {"shipped"},
		"plan":  {"planned"},
		"stop":  {"stopped"},
		"fix":   {"fixed"},
		"show":  {"showed"},
		"open":  {"opened"},
		"edit":  {"edited"},
		"boil":  {"boiled"},
		"draw":  {"drawed"},
		"at":    {"ated"},
		"spot":  {"spotted"},
		"split": {"splited"},
		"file":  {"filed"},
	}
	for v, want := range cases {
		if got := pastForms(v); !mrEq(got, want) {
			t.Errorf("pastForms(%q) = %q, want %q", v, got, want)
		}
	}
	for _, c := range []struct {
		w string
		n int
	}{{"", 0}, {"ship", 1}, {"open", 2}, {"boil", 1}, {"queue", 1}, {"reassign", 2}} {
		if got := vowelGroups(c.w); got != c.n {
			t.Errorf("vowelGroups(%q) = %d, want %d", c.w, got, c.n)
		}
	}
}

func TestMutNameWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"bookAll", []string{"book", "all"}},
		{"fooZap", []string{"foo", "zap"}},
		{"Book", []string{"book"}},
		{"book@Table", []string{"book@", "table"}},
		{"reschedule_booking", []string{"reschedule", "booking"}},
		{"a.b-c d", []string{"a", "b", "c", "d"}},
	} {
		if got := nameWords(c.in); !mrEq(got, c.want) {
			t.Errorf("nameWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMutNewLexicon(t *testing.T) {
	lx := newLexicon([]trace.ToolSpec{{Name: "remove_item", Effect: trace.Effect("delete"), Table: "items", Consequential: true}})
	if !lx.fams[2] || !lx.cancel || lx.fams[0] || lx.fams[1] {
		t.Errorf("delete tool: fams %v cancel %v", lx.fams, lx.cancel)
	}
	lx = newLexicon([]trace.ToolSpec{{Name: "open_ticket", Effect: trace.EffectCreate, Table: "tickets", Consequential: true}})
	if !lx.fams[1] || lx.fams[0] || lx.fams[2] || lx.cancel {
		t.Errorf("create tool: fams %v cancel %v", lx.fams, lx.cancel)
	}
	lx = newLexicon([]trace.ToolSpec{{Name: "tweak_ticket", Effect: trace.EffectUpdate, Table: "tickets", Consequential: true}})
	if !lx.fams[0] || lx.fams[1] || lx.fams[2] || !lx.base["tweak"] || !lx.done["tweaked"] {
		t.Errorf("update tool: fams %v base %v", lx.fams, lx.base)
	}
	// A name with no words adds no verb (and does not fail).
	lx = newLexicon([]trace.ToolSpec{{Name: "__", Effect: trace.EffectUpdate, Consequential: true}})
	if len(lx.base) != 0 {
		t.Errorf("empty name: base %v", lx.base)
	}
	// A one-word name that is the table's noun is not a verb, even when it
	// is a family verb ("order").
	lx = newLexicon([]trace.ToolSpec{{Name: "order", Effect: trace.EffectUpdate, Table: "orders", Consequential: true}})
	if lx.base["order"] {
		t.Error(`one-word name "order" (the table noun) was taken as a verb`)
	}
	// The last word of a longer name is a verb when it is a known one.
	lx = newLexicon([]trace.ToolSpec{{Name: "booking_cancel", Effect: trace.EffectUpdate, Table: "bookings", Consequential: true}})
	if !lx.base["cancel"] || !lx.cancel || lx.base["booking"] {
		t.Errorf("booking_cancel: base %v cancel %v", lx.base, lx.cancel)
	}
	lx = newLexicon([]trace.ToolSpec{{Name: "tweak_record", Effect: trace.EffectUpdate, Consequential: true, KeyArg: "ticket_id"}})
	if !lx.nouns["ticket"] {
		t.Errorf("key argument noun missing: %v", lx.nouns)
	}
	lx = newLexicon([]trace.ToolSpec{{Name: "tweak_record", Effect: trace.EffectUpdate, Consequential: true}})
	if len(lx.nouns) != 0 {
		t.Errorf("nouns without table or key: %v", lx.nouns)
	}
}

// mrUpdate has an update action and no cancel action; mrCancel adds one.
var (
	mrUpdate = []trace.ToolSpec{{Name: "update_order", Effect: trace.EffectUpdate, Table: "orders", KeyArg: "order_id", Consequential: true}}
	mrCancel = append(slices.Clone(mrUpdate), trace.ToolSpec{Name: "cancel_order", Effect: trace.Effect("delete"), Table: "orders", Consequential: true})
	mrCreate = []trace.ToolSpec{{Name: "book_table", Effect: trace.EffectCreate, Table: "bookings", Consequential: true}}
)

func TestMutClauseClaimBoundaries(t *testing.T) {
	up, cn := newLexicon(mrUpdate), newLexicon(mrCancel)
	cases := []struct {
		lx   *lexicon
		in   string
		want claim
	}{
		{up, "restored it", claimRestored},
		{up, "never restored it", claimUndecided},
		{up, "I restored it", claimRestored},
		{up, "cannot revert it", claimUndecided},
		{up, "I cannot revert it", claimUndecided},
		{up, "couldn't move it", claimNotDone},
		{up, "I couldn't move it", claimNotDone},
		{up, "never cancelled it", claimUndecided},
		{up, "cancelled it", claimNotDone},
		{cn, "never cancelled that change", claimUndecided},
		{cn, "cancelled that change", claimNotDone},
		{cn, "never cancelled order 5590", claimNotDone},
		{up, "not moved", claimNotDone},
		{up, "moved", claimDone},
		{up, "not done yet", claimNotDone},
		{up, "done", claimDone},
		{up, "failed", claimNotDone},
		{up, "unable to", claimNotDone},
		{up, "moved the order right back", claimRestored},
		{up, "moved a b c d back", claimDone},
	}
	for _, c := range cases {
		if got, _ := c.lx.clauseClaim(clause{ts: tokens(c.in)}); got != c.want {
			t.Errorf("clauseClaim(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestMutReadKeepsClauseReason(t *testing.T) {
	lx := newLexicon(mrUpdate)
	f := lx.read("It should be updated now.")
	if f.claim != claimUndecided || !strings.Contains(f.why, "hedged") {
		t.Errorf("read = %v, %q; want undecided with the hedge reason", f.claim, f.why)
	}
	f = lx.read("I updated it. Nothing was changed.")
	if f.claim != claimUndecided || f.why != "the utterance makes conflicting claims" {
		t.Errorf("read = %v, %q; want undecided, conflicting claims", f.claim, f.why)
	}
}

func TestMutCombineAll(t *testing.T) {
	N, D, X, R, U, Q := claimNone, claimDone, claimNotDone, claimRestored, claimUnsure, claimUndecided
	cases := []struct {
		cs   []claim
		want claim
	}{
		{nil, N},
		{[]claim{D}, D},
		{[]claim{D, D}, D},
		{[]claim{N, X}, X},
		{[]claim{U, U}, U},
		{[]claim{D, Q}, Q},
		{[]claim{Q, D}, Q},
		{[]claim{Q, R}, Q},
		{[]claim{R, X}, R},
		{[]claim{X, R}, R},
		{[]claim{R, D}, D},
		{[]claim{D, R}, R},
		{[]claim{D, X}, Q},
		{[]claim{X, D}, Q},
		{[]claim{U, D}, Q},
		{[]claim{D, U}, Q},
		{[]claim{R, U}, Q},
		{[]claim{U, X}, Q},
		{[]claim{X, U}, Q},
		{[]claim{U, R}, Q},
		{[]claim{X, X}, X},
		{[]claim{R, R}, R},
		{[]claim{Q, Q}, Q},
	}
	for _, c := range cases {
		if got := combine(c.cs); got != c.want {
			t.Errorf("combine(%v) = %v, want %v", c.cs, got, c.want)
		}
	}
}

func TestMutClausesSplit(t *testing.T) {
	type cl struct {
		text string
		q    bool
	}
	get := func(s string) []cl {
		var out []cl
		for _, c := range clauses(s) {
			out = append(out, cl{strings.Join(c.ts, " "), c.question})
		}
		return out
	}
	cases := []struct {
		in   string
		want []cl
	}{
		{"I moved it but", []cl{{"i moved it", false}}},
		{"but I moved it", []cl{{"i moved it", false}}},
		{"I moved it — nothing changed", []cl{{"i moved it", false}, {"nothing changed", false}}},
		{"a – b", []cl{{"a", false}, {"b", false}}},
		{"Moved? Yes.", []cl{{"moved", true}, {"yes", false}}},
		{"a! b; c", []cl{{"a", false}, {"b", false}, {"c", false}}},
		{"order 3.5 units", []cl{{"order 3.5 units", false}}},
		{"3.5 dollars. done", []cl{{"3.5 dollars", false}, {"done", false}}},
		{"end.\nnext", []cl{{"end", false}, {"next", false}}},
		{"done.", []cl{{"done", false}}},
		{"a .b", []cl{{"a b", false}}},
		{"a\n.b", []cl{{"a b", false}}},
		{"a.b c", []cl{{"a.b c", false}}},
		{"é. b", []cl{{"b", false}}},
	}
	for _, c := range cases {
		if got := get(c.in); !slices.Equal(got, c.want) {
			t.Errorf("clauses(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestMutRestoreAt(t *testing.T) {
	lx := newLexicon(mrUpdate)
	for _, c := range []struct {
		in   string
		want int
	}{
		{"restored it", 0},
		{"i restored it", 1},
		{"moved a b c back", 0},
		{"moved a b c d back", -1},
		{"moved it", -1},
		{"hello there", -1},
	} {
		ws := tokens(c.in)
		if got := lx.restoreAt(ws, " "+strings.Join(ws, " ")+" "); got != c.want {
			t.Errorf("restoreAt(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestMutCancelsRecord(t *testing.T) {
	lx := newLexicon(mrCancel)
	for _, c := range []struct {
		in   string
		i    int
		want bool
	}{
		{"i cancelled", 1, false},
		{"cancelled for you today order", 0, true},
		{"cancelled for you today then order", 0, false},
		{"it cancelled order", 1, true},
		{"order a b c d cancelled", 5, false},
		{"order a b c cancelled", 4, true},
		{"cancelled that order", 0, false},
		{"cancelled 5590", 0, true},
		{"cancelled orders", 0, true},
	} {
		if got := lx.cancelsRecord(tokens(c.in), c.i); got != c.want {
			t.Errorf("cancelsRecord(%q, %d) = %v, want %v", c.in, c.i, got, c.want)
		}
	}
}

func TestMutWindows(t *testing.T) {
	w := strings.Fields
	type fn func([]string, int) bool
	cases := []struct {
		name string
		f    fn
		ws   string
		want bool
	}{
		{"aux", auxBefore, "has x y set", true},
		{"aux", auxBefore, "has x y z set", false},
		{"aux", auxBefore, "has set", true},
		{"modal", modalBefore, "will moved", true},
		{"modal", modalBefore, "will a b moved", true},
		{"modal", modalBefore, "will a b c moved", false},
		{"modal", modalBefore, "x be moved", false},
		{"modal", modalBefore, "to be moved", true},
		{"modal", modalBefore, "x to be moved", true},
		{"modal", modalBefore, "to x be moved", false},
		{"modal", modalBefore, "to be x moved", false},
		{"sub", subordinate, "while moved", true},
		{"sub", subordinate, "while a b c moved", true},
		{"sub", subordinate, "while a b c d moved", false},
		{"sub", subordinate, "x moved", false},
		{"hedge", hedged, "should moved", true},
		{"hedge", hedged, "should a b moved", true},
		{"hedge", hedged, "should a b c moved", false},
	}
	for _, c := range cases {
		ws := w(c.ws)
		if got := c.f(ws, len(ws)-1); got != c.want {
			t.Errorf("%s(%q) = %v, want %v", c.name, c.ws, got, c.want)
		}
	}
}

func TestMutPlans(t *testing.T) {
	lx := newLexicon(mrCreate)
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"able to book", true},
		{"let me book", true},
		{"i will book", true},
		{"i book", false},
		{"booking it", true},
		{"to book", true},
		{"book to", false},
	} {
		if got := lx.plans(tokens(c.in)); got != c.want {
			t.Errorf("plans(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// The doubled consonant of an -ing form ("shipping") is dropped only when
// at least two letters remain: a one-letter verb "x" is not planned by "xxing".
func TestMutPlansDoubledConsonant(t *testing.T) {
	lx := newLexicon([]trace.ToolSpec{{Name: "x_order", Effect: trace.EffectUpdate, Table: "orders", Consequential: true}})
	if !lx.isBase("x") {
		t.Fatal(`"x" should be a catalogue verb`)
	}
	if lx.plans([]string{"xxing"}) {
		t.Error(`plans("xxing") = true`)
	}
	if !newLexicon(mrCreate).plans([]string{"shipping"}) {
		t.Error(`plans("shipping") = false with the create family`)
	}
}

func TestMutHasPhrase(t *testing.T) {
	ps := []string{"all set"}
	for _, c := range []struct {
		j    string
		want bool
	}{
		{" all set ", true},
		{" x all set", false},
		{" xall set all set ", true},
		{" xall set ", false},
		{" all setx ", false},
		{" all setx all set ", true},
		{" nothing ", false},
	} {
		if got := hasPhrase(c.j, ps); got != c.want {
			t.Errorf("hasPhrase(%q) = %v, want %v", c.j, got, c.want)
		}
	}
}
